//! End-to-end tests of the `judgelab` binary: real files, a real SQLite database and the
//! real SmolLM2 model through llama.cpp.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use judgelab_testkit::{free_port, Faults, LlamaCppPython, LlamaServer, Refuser, Slots};
use serde_json::{json, Value};

mod align;
mod architecture;
mod budget;
mod card;
mod default_model;
mod estimate;
mod label;
mod old_databases;
mod panel;
mod reproduce;
mod source;

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        Env {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn db(&self) -> PathBuf {
        self.dir.path().join("judgelab.sqlite")
    }

    fn file(&self, name: &str, content: impl AsRef<[u8]>) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::write(&path, content).unwrap();
        path
    }

    /// The CLI on this environment's database. It times no call alone (each local trial's
    /// latency at concurrency 1) unless a test sets `JUDGELAB_TIMED_CALLS` again: most tests
    /// are about something else, and timing takes a lone decode per call.
    fn cmd(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_judgelab"));
        cmd.arg("--db")
            .arg(self.db())
            .args(args)
            .env("JUDGELAB_TIMED_CALLS", "0")
            // Tests run two at a time on the machine's cores: a judge on both beside
            // another test's took half as long again as one on its own core.
            .env("JUDGELAB_THREADS", "1");
        cmd
    }

    fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }

    fn show(&self, experiment: &str) -> Value {
        let out = self.run(&["show", experiment, "--json"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    }
}

/// Waits, while `child` runs `experiment`, until its `show --json` has `what` (`done`).
fn wait_for(
    env: &Env,
    experiment: &str,
    child: &mut std::process::Child,
    what: &str,
    done: impl Fn(&Value) -> bool,
) {
    let start = Instant::now();
    loop {
        std::thread::sleep(Duration::from_millis(250));
        let out = env.run(&["show", experiment, "--json"]);
        if out.status.success() && done(&serde_json::from_slice(&out.stdout).unwrap()) {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(300),
            "no {what} in time"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before {what}"
        );
    }
}

/// Sends `child` a signal (`INT`, `KILL`) with the shell's own `kill`, so that no procps
/// package is needed.
fn signal(child: &std::process::Child, name: &str) {
    let status = Command::new("sh")
        .args(["-c", &format!("kill -{name} {}", child.id())])
        .status()
        .unwrap();
    assert!(status.success(), "kill -{name}");
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn llmbar() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../datasets/llmbar_natural.jsonl")
}

/// The 40 of `llmbar()`'s items shortest to read: the tests that run a model judge these,
/// in about half the time its longer items take.
fn llmbar_short() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../datasets/llmbar_short.jsonl")
}

/// `llmbar_short()` is what its README row says: the 40 items of `llmbar()` shortest in
/// question and answers together, unchanged and in its order.
#[test]
fn the_short_llmbar_file_is_the_whole_files_40_shortest_items() {
    let whole = lines(llmbar());
    let length = |line: &String| {
        let v: Value = serde_json::from_str(line).unwrap();
        ["question", "answer_a", "answer_b"]
            .iter()
            .map(|k| v[k].as_str().unwrap().chars().count())
            .sum::<usize>()
    };
    let mut by_length: Vec<(usize, usize)> = whole
        .iter()
        .enumerate()
        .map(|(i, l)| (length(l), i))
        .collect();
    by_length.sort();
    let mut shortest: Vec<usize> = by_length[..40].iter().map(|&(_, i)| i).collect();
    shortest.sort();
    let expected: Vec<String> = shortest.into_iter().map(|i| whole[i].clone()).collect();
    assert_eq!(lines(llmbar_short()), expected);
}

/// Topical-Chat USR: ratings that are means of three annotators, on six criteria.
fn topical() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../datasets/topical_chat_usr.jsonl")
}

/// A JSON Lines file's lines.
fn lines(path: PathBuf) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(String::from)
        .collect()
}

/// Runs `args`, expecting exit code 2 and every one of `expect` in stderr.
fn check_invalid(env: &Env, args: &[&str], expect: &[&str]) {
    let out = env.run(args);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    for e in expect {
        assert!(stderr.contains(e), "{args:?}: expected {e:?} in\n{stderr}");
    }
}

fn datasets_listed(env: &Env) -> String {
    text(&env.run(&["list"]).stdout)
}

/// Files as their authors published them: an MT-Bench-style Parquet file through `--map`
/// and `--label-map`, a HelpSteer2-style CSV through a mapping file; a label value the
/// mapping does not name is refused at its row, and nothing is imported.
#[test]
fn files_of_other_shapes_import_through_a_mapping() {
    let env = Env::new();
    let data = |f: &str| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../core/tests/it/data");
        root.join(f).display().to_string()
    };
    let parquet = data("mt_bench_style.parquet");
    let fields = "question=conversation_a[0].content,answer_a=conversation_a[-1].content,answer_b=conversation_b[-1].content,human_label=winner";
    let import = |labels: &str| {
        let args = ["import", &parquet, "--map", fields, "--label-map", labels];
        env.run(&args)
    };
    let out = import("model_a=A,model_b=B,tie=tie");
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("mt_bench_style.parquet:4: human_label (mapped from winner): value \"tie (bothbad)\" is not in the label mapping"),
        "{err}"
    );
    assert!(!datasets_listed(&env).contains("mt_bench_style"));
    let out = import("model_a=A,model_b=B,tie=tie,\"tie (bothbad)\"=tie");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("4 pairwise items (labels: A 1, B 1, tie 2)"),
        "{}",
        text(&out.stdout)
    );
    // Again through the same mapping: already there. Through another: other data.
    let out = import("model_a=A,model_b=B,tie=tie,\"tie (bothbad)\"=tie");
    assert!(
        text(&out.stdout).contains("is already imported as \"mt_bench_style\" (same content)"),
        "{}",
        text(&out.stdout)
    );
    let out = import("model_a=B,model_b=A,tie=tie,\"tie (bothbad)\"=tie");
    assert!(
        text(&out.stderr).contains("with different content is already imported"),
        "{}",
        text(&out.stderr)
    );
    let csv = data("helpsteer_style.csv");
    let map = data("helpsteer_style.map.toml");
    let out = env.run(&["import", &csv, "--map-file", &map, "--scale", "0-4"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let listed = datasets_listed(&env);
    assert!(
        listed.contains("labelled on criteria: coherence (0-4), complexity (0-4), correctness (0-4), verbosity (0-4)"),
        "{listed}"
    );
    // The mapping is kept with the dataset, and shown.
    assert!(
        listed.contains("read through the mapping question=conversation_a[0].content,answer_a=conversation_a[-1].content,answer_b=conversation_b[-1].content,human_label=winner; labels: model_a=A,model_b=B,tie=tie,tie (bothbad)=tie"),
        "{listed}"
    );
    // Ratings moved onto another scale: HelpSteer's 0-4 onto 1-5.
    let out = env.run(&[
        "import",
        &csv,
        "--name",
        "rescaled",
        "--map",
        "question=prompt,answer=response,human_label=helpfulness",
        "--rescale",
        "0-4:1-5",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("3 single items (labels: 1 1, 4 1, 5 1)"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn import_is_validated_all_or_nothing_and_idempotent() {
    let env = Env::new();
    let lines = lines(llmbar());

    // One malformed line in the middle: its number is reported and nothing is imported.
    let mut bad = lines[..10].to_vec();
    bad[4] = bad[4].replacen('{', "{{", 1);
    let bad = env.file("bad.jsonl", bad.join("\n"));
    check_invalid(
        &env,
        &["import", bad.to_str().unwrap()],
        &["bad.jsonl:5: line: invalid JSON"],
    );
    assert!(
        !datasets_listed(&env).contains("bad"),
        "{}",
        datasets_listed(&env)
    );

    let mut dup = lines[..4].to_vec();
    dup.push(lines[1].clone());
    let dup = env.file("dup.jsonl", dup.join("\n"));
    check_invalid(
        &env,
        &["import", dup.to_str().unwrap()],
        &["dup.jsonl:5: id: duplicate id \"llmbar_natural-0001\" (first at line 2)"],
    );

    let missing = env.file(
        "missing.jsonl",
        lines[0].replace("\"answer_b\"", "\"answer_c\""),
    );
    check_invalid(
        &env,
        &["import", missing.to_str().unwrap()],
        &[
            "missing.jsonl:1: answer_c: unknown field",
            "missing.jsonl:1: answer_b: is missing",
        ],
    );

    let label = env.file(
        "label.jsonl",
        lines[0]
            .replace("\"human_label\": \"B\"", "\"human_label\": \"C\"")
            .replace("\"human_label\": \"A\"", "\"human_label\": \"C\""),
    );
    check_invalid(
        &env,
        &["import", label.to_str().unwrap()],
        &["label.jsonl:1: human_label: \"C\" is not a pairwise label"],
    );

    let mut latin1 = lines[0].clone().into_bytes();
    latin1.extend_from_slice(b"\n{\"id\": \"caf\xe9\"}\n");
    let latin1 = env.file("latin1.jsonl", latin1);
    check_invalid(
        &env,
        &["import", latin1.to_str().unwrap()],
        &["latin1.jsonl:2: line: not valid UTF-8"],
    );

    let empty = env.file("empty.jsonl", "");
    check_invalid(
        &env,
        &["import", empty.to_str().unwrap()],
        &["empty.jsonl: the file has no items"],
    );

    let rating = env.file(
        "ratings.csv",
        "id,task,question,answer,human_label\nr1,single,q,a,4\nr2,single,q,a,9\n",
    );
    check_invalid(
        &env,
        &["import", rating.to_str().unwrap()],
        &["ratings.csv:3: human_label: 9 is outside the rating scale 1..5"],
    );
    let out = env.run(&["import", rating.to_str().unwrap(), "--scale", "1-10"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // Items without a label are kept, and said apart.
    let partly = env.file(
        "partly.csv",
        "id,task,question,answer,human_label\nu1,single,q,a,4\nu2,single,q,a,\nu3,single,q,a,5\n",
    );
    let out = env.run(&["import", partly.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("2 single items (labels: 4 1, 5 1), and 1 without a label"),
        "{}",
        text(&out.stdout)
    );

    let good = llmbar();
    let out = env.run(&["import", good.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout)
        .contains("imported \"llmbar_natural\": 100 pairwise items (labels: A 42, B 58)"));
    let out = env.run(&["import", good.to_str().unwrap()]);
    assert!(out.status.success());
    assert!(text(&out.stdout)
        .contains("already imported as \"llmbar_natural\" (same content): nothing to do"));
    let listed = datasets_listed(&env);
    assert_eq!(listed.matches("\n  llmbar_natural ").count(), 1, "{listed}");
}

fn experiment(env: &Env, name: &str, extra_judge: &str, sweep: &str) -> PathBuf {
    env.file(
        &format!("{name}.toml"),
        format!(
            "name = \"{name}\"\ndataset = \"{}\"\n[judge]\nbackend = \"llama\"\nmodel = \"default\"\ntemplate = \"pairwise\"\n{extra_judge}\n[sweep]\n{sweep}\n",
            llmbar_short().display()
        ),
    )
}

/// Items with reference answers: the plan names the built-in that grades against them
/// while the sweep's template does not, and is quiet once it does.
#[test]
fn a_plan_names_the_reference_guided_template() {
    let env = Env::new();
    let rows: String = (0..4)
        .map(|i| {
            let reference = if i < 3 { "\"reference\": \"4\", " } else { "" };
            format!(
                "{{\"id\": \"r{i}\", \"task\": \"pairwise\", \"question\": \"2 + 2?\", {reference}\"answer_a\": \"4\", \"answer_b\": \"5\", \"human_label\": \"{}\"}}\n",
                if i % 2 == 0 { "A" } else { "B" }
            )
        })
        .collect();
    let data = env.file("sums.jsonl", rows);
    let plan = |template: &str| {
        let exp = env.file(
            &format!("{template}.toml"),
            format!(
                "name = \"{template}\"\ndataset = \"{}\"\n[judge]\ntemplate = \"{template}\"\n[sweep]\nmax_tokens = 1\n",
                data.display()
            ),
        );
        let out = env.run(&["run", exp.to_str().unwrap(), "--plan"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let said = plan("pairwise");
    assert!(
        said.contains("3 of the 4 items judged carry a reference answer, which pairwise does not grade against: the built-in `pairwise_reference` checks each answer against it"),
        "{said}"
    );
    let said = plan("pairwise_reference");
    assert!(!said.contains("reference answer"), "{said}");
}

#[test]
fn bad_experiments_fail_before_any_model_is_loaded() {
    let env = Env::new();
    let typo = experiment(&env, "typo", "", "temprature = [0.0]");
    check_invalid(
        &env,
        &["run", typo.to_str().unwrap()],
        &["typo.toml", "unknown field `temprature`"],
    );
    let range = experiment(&env, "range", "", "top_p = [1.5]");
    check_invalid(
        &env,
        &["run", range.to_str().unwrap()],
        &["range.toml: sweep.top_p: 1.5 must be above 0 and at most 1"],
    );
    let jinja = env.file("mine.jinja", "Judge {{ question }} by {{ rubrik }}");
    let unknown = experiment(&env, "unknown", "", "")
        .to_str()
        .unwrap()
        .to_string();
    let text_ = std::fs::read_to_string(&unknown)
        .unwrap()
        .replace("\"pairwise\"", &format!("\"{}\"", jinja.display()));
    std::fs::write(&unknown, text_).unwrap();
    check_invalid(
        &env,
        &["run", &unknown],
        &["mine.jinja: unknown variable `rubrik`"],
    );
    let no_model = experiment(&env, "nomodel", "", "")
        .to_str()
        .unwrap()
        .to_string();
    let text_ = std::fs::read_to_string(&no_model)
        .unwrap()
        .replace("\"default\"", "\"/nonexistent/judge.gguf\"");
    std::fs::write(&no_model, text_).unwrap();
    let out = env.run(&["run", &no_model]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("model file /nonexistent/judge.gguf does not exist"),
        "{}",
        text(&out.stderr)
    );
    let digit = experiment(&env, "digit", "output = \"digit\"", "");
    check_invalid(
        &env,
        &["run", digit.to_str().unwrap()],
        &["judge.output: \"digit\" needs a rating dataset"],
    );
}

/// The main job: a 2×2 sweep on 6 items with the real model; interrupted with Ctrl-C,
/// resumed, and run again without duplicating anything.
#[test]
fn sweep_interrupt_resume_and_show() {
    let env = Env::new();
    let exp = experiment(
        &env,
        "grid",
        "",
        "temperature = [0.0, 0.8]\nmax_tokens = [4]\nfew_shot = [0, 1]\nseed = 3\n[limits]\nitems = 6",
    );
    let exp = exp.to_str().unwrap();

    // Start, wait for a few stored verdicts, then interrupt as a user would.
    let mut child = env
        .cmd(&["run", exp])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for(&env, "grid", &mut child, "three stored verdicts", |v| {
        v["experiment"]["n_stored"].as_u64().unwrap() >= 3
    });
    // A second run of it meanwhile is refused, and says by whom.
    check_invalid(
        &env,
        &["run", exp],
        &[
            "experiment \"grid\" is already running",
            &format!("(process {})", child.id()),
        ],
    );
    signal(&child, "INT");
    let out = child.wait_with_output().unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("interrupted:") && stderr.contains("again to resume"),
        "{stderr}"
    );
    // A run killed outright leaves its lock file, which locks nothing: the next run goes on.
    let mut child = env
        .cmd(&["run", exp])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let lock = env.dir.path().join("judgelab.sqlite-runs/grid.lock");
    let start = Instant::now();
    while std::fs::read_to_string(&lock).unwrap_or_default().trim()
        != format!("process {}", child.id())
    {
        assert!(start.elapsed() < Duration::from_secs(60), "no lock taken");
        std::thread::sleep(Duration::from_millis(20));
    }
    signal(&child, "KILL");
    child.wait().unwrap();
    let partial = env.show("grid")["experiment"]["n_stored"].as_u64().unwrap();
    assert!((3..24).contains(&partial), "{partial}");

    // Resume: only the missing verdicts are judged, then every call of each trial is timed
    // alone.
    let out = env
        .cmd(&["run", exp])
        .env("JUDGELAB_TIMED_CALLS", "6")
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "resuming \"grid\": 4 trials × 6 items: 24 verdicts, {partial} already stored"
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("judged {} verdicts", 24 - partial)),
        "{stderr}"
    );
    // Every verdict of a generating run is a model call of its own.
    assert!(
        stderr.contains(&format!(
            "{} model calls (1.0 verdicts a call)",
            24 - partial
        )),
        "{stderr}"
    );
    assert!(text(&out.stdout).contains("experiment \"grid\" on llmbar_short"));

    let v = env.show("grid");
    let e = &v["experiment"];
    assert_eq!(e["n_items"], 6);
    assert_eq!(e["n_stored"], 24);
    assert_eq!(e["few_shot_pool"].as_array().unwrap().len(), 1);
    for baseline in ["majority", "longer_answer"] {
        let b = &v["baselines"][baseline];
        assert!(
            (0.0..=1.0).contains(&b["accuracy"].as_f64().unwrap()),
            "{v}"
        );
        assert!(b["accuracy_ci"].is_array(), "{b}");
    }
    let trials = v["trials"].as_array().unwrap();
    assert_eq!(trials.len(), 4);
    for t in trials {
        assert!(t["id"].is_i64());
        // A local generation's confidence is read from its first tokens' log-probabilities.
        assert_eq!(t["calibration"]["confidence_kind"], "logprobs", "{t}");
        assert!(t["selective"]["curve"].is_array(), "{t}");
        let p = &t["params"];
        for key in [
            "temperature",
            "top_p",
            "max_tokens",
            "few_shot",
            "model",
            "template",
        ] {
            assert!(!p[key].is_null(), "params.{key} in {t}");
        }
        let m = t;
        assert_eq!(m["n"], 6, "{t}");
        let acc = m["accuracy"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&acc));
        let ci = m["accuracy_ci"].as_array().unwrap();
        assert!(
            ci[0].as_f64().unwrap() <= acc && acc <= ci[1].as_f64().unwrap(),
            "{t}"
        );
        assert!(m.get("kappa_ci").is_some(), "{t}");
        assert!(m["prompt_tokens_per_item"].as_f64().unwrap() > 50.0);
        assert!(m["completion_tokens_per_item"].as_f64().unwrap() <= 4.0);
        assert!((0.0..=1.0).contains(&m["parse_failure_rate"].as_f64().unwrap()));
        // Per request, timed alone: six calls each, so a p95 with an interval and no p99.
        assert_eq!(m["latency_concurrency"], 1, "{t}");
        for key in ["latency_ms", "ttft_ms"] {
            let (p50, p95) = (
                m[key]["p50"].as_f64().unwrap(),
                m[key]["p95"].as_f64().unwrap(),
            );
            assert!(0.0 < p50 && p50 <= p95, "{key} {m}");
            assert_eq!(m[key]["n"], 6, "{key} {m}");
            let ci = m[key]["p50_ci"].as_array().unwrap();
            assert!(ci[0].as_f64().unwrap() <= p50 && p50 <= ci[1].as_f64().unwrap());
            assert!(m[key]["p99"].is_null(), "p99 needs 100 calls: {m}");
        }
        assert!(m.get("kappa").is_some());
    }
    // How long they took is not compared here: the tests run side by side on shared cores
    // (`cargo xtask bench latency` compares them with a plain llama.cpp loop).
    assert!(stderr.contains("timed 24 calls alone"), "{stderr}");

    // Trials that differ only in sampling parameters show the same examples.
    assert_eq!(trials[2]["examples"], trials[3]["examples"]);
    assert_eq!(trials[0]["examples"].as_array().unwrap().len(), 0);
    assert_eq!(trials[2]["examples"], e["few_shot_pool"]);

    // A third run does nothing and duplicates nothing.
    let out = env.run(&["run", exp]);
    assert!(out.status.success());
    assert!(text(&out.stderr).contains("\"grid\" is complete: nothing to judge"));
    assert_eq!(env.show("grid")["experiment"]["n_stored"], 24);
    let listed = text(&env.run(&["list"]).stdout);
    assert!(
        listed.contains("grid") && listed.contains("24 verdicts"),
        "{listed}"
    );

    check_report(&env, &v);

    // The same name with other content is refused, and --replace starts it afresh.
    let changed = experiment(
        &env,
        "grid",
        "",
        "temperature = [0.0]\nmax_tokens = [2]\n[limits]\nitems = 2",
    );
    check_invalid(
        &env,
        &["run", changed.to_str().unwrap()],
        &[
            "already exists with different content (24 verdicts stored)",
            "--replace",
        ],
    );
    let out = env.run(&["run", changed.to_str().unwrap(), "--replace"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(env.show("grid")["experiment"]["n_stored"], 2);
}

#[test]
fn prompts_too_long_for_the_context_are_failures_not_dropped() {
    let env = Env::new();
    // A context too small for LLMBar's longer items: those verdicts are classified failures.
    let exp = experiment(
        &env,
        "tiny",
        "context_size = 256",
        "max_tokens = [2]\n[limits]\nitems = 6",
    );
    let out = env.run(&["run", exp.to_str().unwrap()]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let v = env.show("tiny");
    let m = &v["trials"][0];
    assert_eq!(
        (m["n"].as_u64(), m["n_errors"].as_u64()),
        (Some(6), Some(0)),
        "{m}"
    );
    assert!(m["parse_failure_rate"].as_f64().unwrap() > 0.0, "{m}");
    // Nothing is retried: the experiment is complete.
    let out = env.run(&["run", exp.to_str().unwrap()]);
    assert!(text(&out.stderr).contains("is complete: nothing to judge"));
}

/// Ratings: the built-in single template, digit verdicts, weighted kappa and Spearman.
#[test]
fn rating_datasets_are_judged_with_digits() {
    let env = Env::new();
    let topical = topical();
    let exp = env.file(
        "ratings.toml",
        format!(
            "name = \"usr\"\ndataset = \"{}\"\n[judge]\ntemplate = \"single\"\n[sweep]\nmax_tokens = 3\nfew_shot = 1\n[limits]\nitems = 4\n",
            topical.display()
        ),
    );
    let out = env.run(&["run", exp.to_str().unwrap()]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(stdout.contains("spearman"), "{stdout}");
    let v = env.show("usr");
    assert_eq!(v["experiment"]["task"], "single");
    let m = &v["trials"][0];
    assert_eq!(m["n"], 4, "{m}");
    assert!(m.get("spearman").is_some());
    assert!(m.get("spearman_ci").is_some() && m.get("kendall_ci").is_some());
    assert!(v["baselines"]["majority"].is_object());
    assert!(v["baselines"].get("longer_answer").is_none());
    assert_eq!(v["trials"][0]["examples"].as_array().unwrap().len(), 1);
    // The dataset was imported with its six USR criteria, each on its own scale.
    let listed = datasets_listed(&env);
    assert!(
        listed.contains("labelled on criteria: coherence (1-3), engagingness (1-3), groundedness (0-1), naturalness (1-3), overall (1-5), understandability (0-1)"),
        "{listed}"
    );
    // A rubric style needs a template that declares criteria; a rubric template is
    // checked against the dataset's criteria; a checklist is not timed at a load.
    let refused = |name: &str, sweep: &str, template: &str| {
        let exp = env.file(
            &format!("{name}.toml"),
            format!(
                "name = \"{name}\"\ndataset = \"{}\"\n[judge]\ntemplate = \"{template}\"\n[sweep]\n{sweep}\n[limits]\nitems = 4\n",
                topical.display()
            ),
        );
        let out = env.run(&["run", exp.to_str().unwrap(), "--plan"]);
        assert!(!out.status.success());
        text(&out.stderr)
    };
    let said = refused("styled", "style = [\"rubric\", \"checklist\"]", "single");
    assert!(
        said.contains("sweep.style: says how a rubric template's criteria are asked; the templates declare none"),
        "{said}"
    );
    let said = refused(
        "checklist",
        "style = \"checklist\"\nconcurrency = [1, 2]",
        "dialogue_rubric\"\nbackend = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m",
    );
    assert!(
        said.contains("sweep.concurrency: times one request per verdict at a load; a checklist's verdict is a call per criterion"),
        "{said}"
    );
    let said = refused("summaries", "max_tokens = 40", "summary_rubric");
    assert!(
        said.contains("criterion \"consistency\" is not one of the dataset's (\"coherence\", \"engagingness\""),
        "{said}"
    );
}

/// Labels that are means of several annotators (3.67): exact agreement means nothing on
/// them, so no output prints accuracy; each prints agreement within half a point, named
/// so, beside the metrics that fit continuous labels.
#[test]
fn labels_that_are_means_get_no_exact_accuracy() {
    let env = Env::new();
    let items: String = [1.3333, 2.6667, 4.6667, 3.3333, 2.0, 4.0]
        .iter()
        .enumerate()
        .map(|(i, label)| {
            format!(
                "{{\"id\": \"m{i}\", \"task\": \"single\", \"question\": \"Say hi {i}\", \"answer\": \"Hi there, number {i}\", \"human_label\": {label}}}\n"
            )
        })
        .collect();
    let data = env.file("means.jsonl", items);
    let exp = env.file(
        "means.toml",
        format!(
            "name = \"means\"\ndataset = \"{}\"\n[judge]\ntemplate = \"single\"\n[sweep]\nmax_tokens = 3\n",
            data.display()
        ),
    );
    let out = env.run(&["run", exp.to_str().unwrap()]);
    let table = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!table.contains("accuracy"), "{table}");
    assert!(
        table.contains("within_half_point") && table.contains("within half a point"),
        "{table}"
    );
    let v = env.show("means");
    let t = &v["trials"][0];
    assert!(t["accuracy"].is_null(), "{t}");
    assert!(t["within_half_point"].is_number(), "{t}");
    // The metrics that fit continuous labels are there, with their intervals.
    for key in [
        "spearman_ci",
        "alpha_interval_ci",
        "within_half_point_ci",
        "mae_ci",
    ] {
        assert!(t.get(key).is_some(), "{key}: {t}");
    }
    // The mean absolute error is shown beside them, and ranks nothing.
    assert!(table.contains(" mae "), "{table}");
    let out = env.run(&["show", "means", "--front", "mae,tokens"]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("not an error such as mae"));
    let report = env.dir.path().join("means-report");
    let out = env.run(&["report", "means", "--out", report.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let md = std::fs::read_to_string(report.join("report.md")).unwrap();
    assert!(
        !md.contains("| accuracy |") && !md.contains(", accuracy "),
        "{md}"
    );
    assert!(md.contains("| within half a point |"), "{md}");
    assert!(md.contains("mean absolute error (lower is better)"), "{md}");
    let out = env.run(&[
        "report",
        "means",
        "--metric",
        "mae",
        "--out",
        report.to_str().unwrap(),
    ]);
    assert!(
        !out.status.success() && text(&out.stderr).contains("mae does not rank the trials"),
        "{}",
        text(&out.stderr)
    );
    let html = std::fs::read_to_string(report.join("report.html")).unwrap();
    assert!(!html.contains("<th>accuracy</th>"), "{html}");
    assert!(html.contains("<th>within half a point</th>"), "{html}");
    let csv = std::fs::read_to_string(report.join("trials.csv")).unwrap();
    let (header, row) = csv.split_once('\n').unwrap();
    let at = header.split(',').position(|c| c == "accuracy").unwrap();
    assert_eq!(row.split(',').nth(at), Some(""), "{csv}");
}

/// A rubric template rates USR's five criteria in one call on the real model: each verdict
/// keeps its value per criterion (a grammar admits only a complete answer), the call's
/// verdict is their unweighted aggregate on the overall label's 1-5 scale, and
/// verdicts.csv has a column per criterion.
#[test]
fn a_rubric_rates_each_criterion_in_one_call() {
    let env = Env::new();
    let topical = topical();
    let exp = env.file(
        "rubric.toml",
        format!(
            "name = \"rubric\"\ndataset = \"{}\"\n[judge]\ntemplate = \"dialogue_rubric\"\n[sweep]\nmax_tokens = 60\nconstraint = [\"none\", \"grammar\"]\n[limits]\nitems = 3\n",
            topical.display()
        ),
    );
    let out = env.run(&["run", exp.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v = env.show("rubric");
    let trials = v["trials"].as_array().unwrap();
    assert_eq!(trials.len(), 2, "{v}");
    assert!(
        trials.iter().all(|t| t["n"] == 3 && t["n_errors"] == 0),
        "{v}"
    );
    let report = env.dir.path().join("rubric-report");
    let out = env.run(&["report", "rubric", "--out", report.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let verdicts = std::fs::read_to_string(report.join("verdicts.csv")).unwrap();
    let header: Vec<&str> = verdicts.lines().next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|c| *c == name).unwrap();
    let rows = csv_rows(&verdicts);
    assert_eq!(rows.len(), 6, "{verdicts}");
    let scales = [
        ("understandability", 0.0, 1.0),
        ("naturalness", 1.0, 3.0),
        ("coherence", 1.0, 3.0),
        ("engagingness", 1.0, 3.0),
        ("groundedness", 0.0, 1.0),
    ];
    let grammar = trials
        .iter()
        .find(|t| t["params"]["constraint"] == "grammar")
        .unwrap()["id"]
        .to_string();
    for r in rows.iter().filter(|r| r[col("trial_id")] == grammar) {
        // Complete, every criterion on its own scale; the verdict is their mean share.
        let mut shares = 0.0;
        for (name, lo, hi) in scales {
            let value: f64 = r[col(&format!("criterion_{name}"))]
                .parse()
                .unwrap_or_else(|_| panic!("{name}: {r:?}"));
            assert!((lo..=hi).contains(&value), "{name}: {r:?}");
            shares += (value - lo) / (hi - lo);
        }
        let verdict: f64 = r[col("verdict")].parse().unwrap();
        assert!((verdict - (1.0 + shares / 5.0 * 4.0)).abs() < 1e-9, "{r:?}");
    }
    // A free answer may leave a criterion out: that criterion fails alone.
    for r in &rows {
        for (name, _, _) in scales {
            let value = &r[col(&format!("criterion_{name}"))];
            let failure = &r[col(&format!("criterion_{name}_failure"))];
            assert!(value.is_empty() != failure.is_empty(), "{name}: {r:?}");
        }
    }
}

/// The same USR criteria asked as a rubric (one call) and as a checklist (a call per
/// criterion) on the real model: the checklist's calls are stored one per criterion and
/// read as one verdict per item, each style is scored on every criterion it asks
/// (`show --json`'s "criteria", `show --criterion`), and its cost is its calls'.
#[test]
fn a_checklist_asks_each_criterion_in_a_call_of_its_own() {
    let env = Env::new();
    let topical = topical();
    let exp = env.file(
        "styles.toml",
        format!(
            "name = \"styles\"\ndataset = \"{}\"\n[judge]\ntemplate = \"dialogue_rubric\"\n[sweep]\nmax_tokens = 60\nconstraint = \"grammar\"\nstyle = [\"rubric\", \"checklist\"]\n[limits]\nitems = 3\n",
            topical.display()
        ),
    );
    let out = env.run(&["run", exp.to_str().unwrap()]);
    let said = text(&out.stderr);
    assert!(out.status.success(), "{said}");
    // 3 rubric calls and 15 checklist calls, each timed verdict of the checklist 5 calls;
    // the run counts them as calls, 6 verdicts in all.
    assert!(said.contains("18 model calls"), "{said}");
    assert!(
        said.contains("6 verdicts in 18 calls (a checklist's call per criterion)")
            && said.contains("judged 18 calls"),
        "{said}"
    );
    let v = env.show("styles");
    let trials = v["trials"].as_array().unwrap();
    assert_eq!(trials.len(), 2, "{v}");
    let names = [
        "coherence",
        "engagingness",
        "groundedness",
        "naturalness",
        "understandability",
    ];
    for t in trials {
        assert!(t["n"] == 3 && t["n_errors"] == 0, "{t}");
        let criteria = t["criteria"].as_object().unwrap();
        assert_eq!(criteria.keys().collect::<Vec<_>>(), names, "{t}");
        for c in criteria.values() {
            assert_eq!(c["n"], 3, "{c}");
            assert!(
                c.get("spearman").is_some() && c.get("alpha_interval").is_some(),
                "{c}"
            );
        }
    }
    let tokens = |style: &str| {
        trials
            .iter()
            .find(|t| t["params"]["style"] == style)
            .unwrap()["prompt_tokens_per_item"]
            .as_f64()
            .unwrap()
    };
    // A checklist verdict's prompt tokens are its five calls'.
    assert!(tokens("checklist") > 3.0 * tokens("rubric"), "{v}");
    // One criterion read as the experiment: its labels, each trial's verdicts on it.
    let out = env.run(&["show", "styles", "--criterion", "coherence", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let one: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(one["trials"].as_array().unwrap().len(), 2, "{one}");
    assert!(
        one["trials"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["n"] == 3),
        "{one}"
    );
    let out = env.run(&["show", "styles", "--criterion", "overall"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("\"overall\" is not a criterion a trial of this experiment asks (coherence, engagingness, groundedness, naturalness, understandability)"),
        "{}",
        text(&out.stderr)
    );
    // verdicts.csv: a row per verdict, the checklist's with its value per criterion.
    let report = env.dir.path().join("styles-report");
    let out = env.run(&["report", "styles", "--out", report.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let verdicts = std::fs::read_to_string(report.join("verdicts.csv")).unwrap();
    let rows = csv_rows(&verdicts);
    assert_eq!(rows.len(), 6, "{verdicts}");
    // trials.csv and the report: each criterion's agreement beside the aggregate's.
    let trials_csv = std::fs::read_to_string(report.join("trials.csv")).unwrap();
    let header = trials_csv.lines().next().unwrap();
    for name in names {
        for column in [
            "spearman",
            "spearman_ci_low",
            "alpha_interval",
            "parse_failure_rate",
        ] {
            let key = format!("criterion_{name}_{column}");
            assert!(header.split(',').any(|c| c == key), "{key}: {header}");
        }
    }
    let md = std::fs::read_to_string(report.join("report.md")).unwrap();
    assert!(md.contains("| coherence: Spearman's rho |"), "{md}");
}

/// `examples/checklist-items.toml` on 6 items of the real model: engagingness and
/// groundedness asked as two yes/no items each (`examples/usr_items.jinja`), the other
/// three criteria as a value each, 7 calls a verdict; each item is stored as a call of its
/// own (a verdicts.csv column each), the criteria are scored as usual, and the items'
/// weights say which carry information.
#[test]
fn a_checklist_asks_a_criterions_yes_no_items() {
    let env = Env::new();
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let spec = std::fs::read_to_string(examples.join("checklist-items.toml"))
        .unwrap()
        .replace(
            "\"../datasets/topical_chat_usr.jsonl\"",
            &format!("{:?}", topical().display().to_string()),
        )
        .replace(
            "\"usr_items.jinja\"",
            &format!(
                "{:?}",
                examples.join("usr_items.jinja").display().to_string()
            ),
        )
        .replace("dev = 40", "dev = 6")
        .replace("test = 40\n", "");
    let exp = env.file("items.toml", spec);
    let out = env.run(&["run", exp.to_str().unwrap()]);
    let said = text(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("6 verdicts in 42 calls"), "{said}");
    let table = text(&out.stdout);
    assert!(
        table.contains("checklist item weights of #1: engagingness/1 "),
        "{table}"
    );
    let v = env.show("usr-checklist-items");
    let t = &v["trials"][0];
    assert_eq!(t["n"], 6, "{t}");
    let criteria: Vec<&String> = t["criteria"].as_object().unwrap().keys().collect();
    assert_eq!(
        criteria,
        [
            "coherence",
            "engagingness",
            "groundedness",
            "naturalness",
            "understandability"
        ]
    );
    let items = &t["item_weights"];
    for name in [
        "engagingness/1",
        "engagingness/2",
        "groundedness/1",
        "groundedness/2",
    ] {
        assert!(items["weights"][name].is_number(), "{name}: {items}");
        assert!(items["varies"][name].is_number(), "{name}: {items}");
    }
    let report = env.dir.path().join("items-report");
    let out = env.run(&[
        "report",
        "usr-checklist-items",
        "--out",
        report.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let verdicts = std::fs::read_to_string(report.join("verdicts.csv")).unwrap();
    let header = verdicts.lines().next().unwrap();
    assert!(
        header.contains("criterion_groundedness/2,criterion_groundedness/2_failure"),
        "{header}"
    );
    let md = std::fs::read_to_string(report.join("report.md")).unwrap();
    assert!(
        md.contains("A checklist's yes/no items, fitted the same way"),
        "{md}"
    );
}

/// On a CPU without the instructions of this build's llama.cpp kernels (x86-64-v3), the
/// binary still starts, says what local models compute on, and refuses a local run with
/// an error naming what the CPU lacks, instead of dying of an illegal instruction; nothing
/// is judged, and the same run goes through once the CPU has them. The CPU is seen two
/// ways: told by `JUDGELAB_CPU_FEATURES`, and read through CPUID from an emulated
/// Nehalem (`qemu-x86_64 -cpu Nehalem`, which `cargo xtask deps` installs).
#[test]
#[cfg(target_arch = "x86_64")]
fn an_older_cpu_is_told_what_it_lacks() {
    let env = Env::new();
    let info = env.run(&["info"]);
    let said = text(&info.stdout);
    assert!(info.status.success(), "{}", text(&info.stderr));
    assert!(
        said.contains("local models: CPU kernels x86-64-v3 (AVX2, FMA, F16C, BMI2) on "),
        "{said}"
    );

    let exp = experiment(
        &env,
        "old-cpu",
        "",
        "temperature = 0.0\nmax_tokens = 1\n[limits]\nitems = 2",
    );
    let lacks =
        "this CPU lacks AVX, AVX2, F16C, FMA, BMI2, which the local judge of this build needs";
    let run = |cmd: &mut Command| {
        let out = cmd.output().unwrap();
        (out.status.code(), text(&out.stdout), text(&out.stderr))
    };
    let (code, _, stderr) = run(env
        .cmd(&["run", exp.to_str().unwrap()])
        .env("JUDGELAB_CPU_FEATURES", "SSE4.2"));
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains(lacks) && stderr.contains("Intel Core from Haswell"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    let (_, stdout, _) = run(env.cmd(&["info"]).env("JUDGELAB_CPU_FEATURES", "SSE4.2"));
    assert!(
        stdout.contains(&format!("local models: local judge unavailable: {lacks}")),
        "{stdout}"
    );
    // The experiment may be stored before its judge loads; no verdict is.
    let shown = env.run(&["show", "old-cpu", "--json"]);
    if shown.status.success() {
        let v: Value = serde_json::from_slice(&shown.stdout).unwrap();
        assert_eq!(v["experiment"]["n_stored"], 0);
    }

    let qemu = Command::new("qemu-x86_64").arg("-version").output();
    assert!(
        qemu.is_ok_and(|o| o.status.success()),
        "qemu-x86_64 is missing: `cargo xtask deps` installs qemu-user"
    );
    let emulated = |args: &[&str]| {
        let mut cmd = Command::new("qemu-x86_64");
        cmd.args(["-cpu", "Nehalem"])
            .arg(env!("CARGO_BIN_EXE_judgelab"))
            .arg("--db")
            .arg(env.db())
            .args(args);
        run(&mut cmd)
    };
    let (code, stdout, stderr) = emulated(&["info"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stdout.contains(&format!("local models: local judge unavailable: {lacks}")),
        "{stdout}"
    );
    let (code, _, stderr) = emulated(&["run", exp.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains(lacks), "{stderr}");

    let out = env.run(&["run", exp.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(env.show("old-cpu")["experiment"]["n_stored"], 2);
}

/// With exact verdicts, a 12-point temperature × top_p grid costs the model calls of one
/// point: one per item, as `run` says; `show` has the expected metrics; a grammar leaves no
/// parse failure.
#[test]
fn an_exact_grid_costs_the_calls_of_one_point() {
    let env = Env::new();
    let calls = |stderr: &str| -> String {
        stderr
            .lines()
            .find(|l| l.contains("model calls ("))
            .unwrap_or_else(|| panic!("{stderr}"))
            .to_string()
    };
    let grid = experiment(
        &env,
        "grid",
        "exact = true",
        "temperature = [0.0, 0.3, 0.7, 1.0]\ntop_p = [0.8, 0.9, 1.0]\nmax_tokens = 1\nfew_shot = 1\nrepeats = 2\n[limits]\nitems = 3",
    );
    let out = env.run(&["run", grid.to_str().unwrap()]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("judged 72 verdicts"), "{stderr}");
    assert!(
        calls(&stderr).starts_with("3 model calls (24.0 verdicts a call), "),
        "{stderr}"
    );
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("E[kappa]") && stdout.contains("H_bits"),
        "{stdout}"
    );

    let point = experiment(
        &env,
        "point",
        "exact = true",
        "temperature = 0.7\nmax_tokens = 1\nfew_shot = 1\n[limits]\nitems = 3",
    );
    let out = env.run(&["run", point.to_str().unwrap()]);
    let stderr = text(&out.stderr);
    assert!(
        calls(&stderr).starts_with("3 model calls (1.0 verdicts a call), "),
        "{stderr}"
    );

    // The same point worded as the template and as a paraphrase of it, held against the
    // template as its reference; and compared, from an experiment of its own, with the
    // point above: the flip matrix, McNemar's p and the calls that moved most.
    let paraphrase = experiment(
        &env,
        "paraphrase",
        "exact = true",
        "temperature = 0.7\nmax_tokens = 1\nfew_shot = 1\n[limits]\nitems = 3\n[reference]\ntemplate = \"pairwise\"\n[robustness]\nparaphrases = [\"pairwise\", \"pairwise_paraphrase_1\"]",
    );
    let file = std::fs::read_to_string(&paraphrase).unwrap();
    std::fs::write(
        &paraphrase,
        file.replace(
            "template = \"pairwise\"\nexact",
            "template = [\"pairwise\", \"pairwise_paraphrase_1\"]\nexact",
        ),
    )
    .unwrap();
    let out = env.run(&["run", paraphrase.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let shown = env.show("paraphrase");
    let trials = shown["trials"].as_array().unwrap();
    assert!(trials[0].get("drift").is_none(), "{}", trials[0]);
    let drift = &trials[1]["drift"];
    assert_eq!(drift["reference"], trials[0]["id"], "{drift}");
    assert_eq!(drift["n_pairs"], 3, "{drift}");
    assert!(drift["kl_mean"]["value"].as_f64().unwrap() > 0.0, "{drift}");
    let columns: Vec<&str> = shown["table"]["columns"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["key"].as_str())
        .collect();
    assert!(
        columns.contains(&"flip_rate") && columns.contains(&"kl_mean"),
        "{columns:?}"
    );
    // The two wordings as paraphrases: the share of items no rewording changes.
    let group = &shown["robustness"][0];
    assert_eq!(
        group["trials"],
        json!([trials[0]["id"], trials[1]["id"]]),
        "{group}"
    );
    assert_eq!(group["n_items"], 3, "{group}");
    let stable = group["stable"]["value"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&stable), "{group}");
    assert!(columns.contains(&"wording_stable"), "{columns:?}");
    let worded = format!("paraphrase:{}", trials[1]["id"]);
    let out = env.run(&["compare", "point", &worded]);
    let said = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    for expected in [
        "on 3 calls of 3 items both judged",
        "flip matrix (rows: point:",
        "McNemar exact p = ",
        "moved most:\n  item ",
        "\n  llmbar_natural-",
    ] {
        assert!(said.contains(expected), "{expected:?} in {said}");
    }
    let out = env.run(&["compare", "point", &worded, "--json"]);
    let c: Value = serde_json::from_slice(&out.stdout).unwrap();
    let d = &c["drift"];
    let in_matrix: u64 = d["matrix"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r.as_array().unwrap())
        .map(|n| n.as_u64().unwrap())
        .sum();
    assert_eq!((d["n_pairs"].as_u64(), in_matrix), (Some(3), 3), "{c}");
    assert!(
        (0.0..=1.0).contains(&c["mcnemar_p"].as_f64().unwrap()),
        "{c}"
    );
    assert!(d["divergence"]["js_mean"].as_f64().unwrap() > 0.0, "{c}");
    assert!(
        !d["divergence"]["moved"].as_array().unwrap().is_empty(),
        "{c}"
    );
    assert_eq!(c["second"]["experiment"], "paraphrase", "{c}");
    // The same comparison as a section of the report: a bare id is a trial of the
    // experiment reported.
    let report = env.dir.path().join("compared");
    let first = trials[1]["id"].to_string();
    let args = ["report", "paraphrase", "--out", report.to_str().unwrap()];
    let out = env.run(&[&args[..], &["--compare", "point", &first]].concat());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let md = std::fs::read_to_string(report.join("report.md")).unwrap();
    for expected in [
        &format!("## Compared: point:{} and {worded}", c["first"]["trial"])[..],
        "\n| A | ",
        "McNemar exact p = ",
        "The calls whose beliefs moved most:",
    ] {
        assert!(md.contains(expected), "{expected:?} in {md}");
    }
    let html = std::fs::read_to_string(report.join("report.html")).unwrap();
    assert!(html.contains("<h2>Compared: point:"), "{html}");
    // An experiment alone stands for its pick; calls one side made alone (the grid's
    // second repeat) are counted and left out.
    let grid_trial = format!("grid:{}", env.show("grid")["trials"][0]["id"]);
    let out = env.run(&["compare", &grid_trial, "point", "--json"]);
    let c: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(c["drift"]["only_first"], 3, "{c}");
    assert_eq!(c["drift"]["n_pairs"], 3, "{c}");

    // Without `exact` written, one-token verdicts are exact by default: the same calls,
    // and the plan says what one pass serves and what timing adds (one request shape: the
    // twelve trials send the same timed requests).
    let default = experiment(
        &env,
        "default",
        "",
        "temperature = [0.0, 0.3, 0.7, 1.0]\ntop_p = [0.8, 0.9, 1.0]\nmax_tokens = 1\nfew_shot = 1\nrepeats = 2\n[limits]\nitems = 3",
    );
    let plan = env
        .cmd(&["run", default.to_str().unwrap(), "--plan"])
        .env("JUDGELAB_TIMED_CALLS", "20")
        .output()
        .unwrap();
    let said = text(&plan.stdout);
    assert!(
        said.contains("exact verdicts: one pass per item serves 12 trials")
            && said.contains("equal in law to llama.cpp's sampler")
            && said.contains("timing: 4 calls timed alone after judging, for latency at concurrency 1: 1 request shape serving 12 local trials"),
        "{said}"
    );
    let out = env
        .cmd(&["run", default.to_str().unwrap()])
        .env("JUDGELAB_TIMED_CALLS", "20")
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        calls(&stderr).starts_with("3 model calls (24.0 verdicts a call), "),
        "{stderr}"
    );
    let v = env.show("default");
    for t in v["trials"].as_array().unwrap() {
        assert_eq!(t["params"]["exact"], true, "{t}");
        // Every trial has the latency of the one sample its request shape shares.
        assert_eq!(t["latency_ms"], v["trials"][0]["latency_ms"], "{t}");
        assert_eq!(t["latency_ms"]["n"], 3, "{t}");
    }
    // The same file with exact = false generates: a call per verdict.
    let generating = experiment(
        &env,
        "generating",
        "exact = false",
        "temperature = 0.7\nmax_tokens = 1\nfew_shot = 1\n[limits]\nitems = 3",
    );
    let out = env.run(&["run", generating.to_str().unwrap()]);
    let stderr = text(&out.stderr);
    assert!(
        calls(&stderr).starts_with("3 model calls (1.0 verdicts a call), "),
        "{stderr}"
    );
    assert!(env.show("generating")["trials"][0]["params"]
        .get("exact")
        .is_none());

    let v = env.show("grid");
    for t in v["trials"].as_array().unwrap() {
        let e = &t["expected"];
        assert!(
            e["accuracy"].is_number() && e["entropy_bits"].is_number(),
            "{t}"
        );
        if t["params"]["temperature"] == 0.0 {
            assert_eq!(e["entropy_bits"], 0.0, "{t}");
        }
        // Exact verdicts carry the model's own confidence, whatever the trial samples at.
        let c = &t["calibration"];
        assert_eq!(c["confidence_kind"], "exact", "{t}");
        assert!(c["ece"].is_number() && c["brier"].is_number(), "{t}");
        assert!(c["n"].as_u64().unwrap() > 0, "{t}");
        assert!(
            t["selective"]["curve"]
                .as_array()
                .is_some_and(|c| !c.is_empty()),
            "{t}"
        );
    }
    // `[trust]` is outside the identity: added to the file, it resumes the same experiment
    // (nothing to judge), and `show` reads it from the file as last run.
    let mut text_now = std::fs::read_to_string(&grid).unwrap();
    text_now.push_str("\n[trust]\nagreement = 0.7\ncascade_threshold = 0.5\n");
    std::fs::write(&grid, text_now).unwrap();
    let out = env.run(&["run", grid.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v = env.show("grid");
    assert!(
        v["experiment"]["spec"]
            .as_str()
            .unwrap()
            .contains("cascade_threshold = 0.5"),
        "{}",
        v["experiment"]["spec"]
    );
    assert_eq!(v["trials"][0]["selective"]["target"]["agreement"], 0.7);
    assert!(v["cascades"].is_array());

    let constrained = experiment(
        &env,
        "constrained",
        "exact = true",
        "temperature = [0.0, 1.0]\nmax_tokens = 1\nconstraint = \"grammar\"\nrepeats = 5\n[limits]\nitems = 3",
    );
    let out = env.run(&["run", constrained.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    for t in env.show("constrained")["trials"].as_array().unwrap() {
        assert_eq!(t["parse_failure_rate"], 0.0, "{t}");
        assert_eq!(t["expected"]["failed"], 0.0, "{t}");
    }
}

/// `report` on the real grid experiment writes every file; the HTML is self-contained and
/// the CSVs agree with `show --json`.
fn check_report(env: &Env, shown: &Value) {
    let dir = env.dir.path().join("report");
    let out = env.run(&["report", "grid", "--out", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    for file in [
        "report.html",
        "report.md",
        "trials.csv",
        "verdicts.csv",
        "experiment.toml",
        "pareto-quality-cost.svg",
        "pareto-quality-cost.png",
        "pareto-quality-latency.svg",
        "pareto-quality-latency.png",
        "latency-cdf.png",
    ] {
        assert!(dir.join(file).is_file(), "{file} missing");
    }
    // A PNG's IHDR chunk holds its width and height, big-endian, at bytes 16..24.
    let png = std::fs::read(dir.join("pareto-quality-cost.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let side = |at: usize| u32::from_be_bytes(png[at..at + 4].try_into().unwrap());
    assert_eq!((side(16), side(20)), (1600, 1200));

    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("Which configuration to pick"), "{html}");
    assert!(html.matches("<svg").count() >= 4);
    for external in ["<script", "<link", "src=\"http", "url(http", "@import"] {
        assert!(!html.contains(external), "report.html loads {external}");
    }
    assert!(
        html.contains("name = &quot;grid&quot;"),
        "the experiment file is embedded"
    );

    let trials = std::fs::read_to_string(dir.join("trials.csv")).unwrap();
    let header = trials.lines().next().unwrap();
    for column in [
        "trial_id",
        "temperature",
        "kappa",
        "kappa_ci_low",
        "kappa_ci_high",
        "accuracy_ci_low",
        "front_quality_cost",
        "schema_version",
    ] {
        assert!(
            header.split(',').any(|c| c == column),
            "{column} not in {header}"
        );
    }
    let ids: Vec<String> = trials
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap().to_string())
        .collect();
    let shown_ids: Vec<String> = shown["trials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].to_string())
        .collect();
    assert_eq!(ids, shown_ids);
    // Every export says which version of its format it is.
    assert_eq!(shown["schema_version"], 3);
    assert!(
        trials.lines().skip(1).all(|l| l.ends_with(",3")),
        "{trials}"
    );

    let verdicts = std::fs::read_to_string(dir.join("verdicts.csv")).unwrap();
    assert!(verdicts
        .lines()
        .next()
        .unwrap()
        .ends_with(",raw_output,schema_version"));
    assert!(verdicts.starts_with("trial_id,item_id,repeat,swapped,human_label,verdict,confidence,failure_kind,error,prompt_tokens,completion_tokens,latency_ms,ttft_ms"));
    let mut reader = csv_rows(&verdicts);
    assert_eq!(reader.len(), 24);
    reader.retain(|r| r[6].is_empty() && r[7].is_empty());
    assert!(
        reader.iter().all(|r| !r[5].is_empty()),
        "a parsed verdict has its label"
    );

    // Two trials compared on the same items.
    let (first, second) = (shown_ids[0].as_str(), shown_ids[3].as_str());
    let out = env.run(&["compare", "grid", first, second, "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let c: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(c["n_pairs"], 6, "{c}");
    assert!((0.0..=1.0).contains(&c["mcnemar_p"].as_f64().unwrap()));
    let out = env.run(&["compare", "grid", first, "999"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("no trial 999"),
        "{}",
        text(&out.stderr)
    );

    // The front of any two or three objectives, by trial id.
    let out = env.run(&[
        "show",
        "grid",
        "--json",
        "--front",
        "kappa,tokens,latency_p95",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let statuses = v["front"]["trials"].as_object().unwrap();
    assert_eq!(statuses.len(), 4);
    assert!(statuses.values().any(|s| s == "front"), "{v}");

    // A metric the task does not define is the user's mistake.
    let out = env.run(&[
        "report",
        "grid",
        "--out",
        dir.to_str().unwrap(),
        "--metric",
        "spearman",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
}

/// The records of a CSV file after its header (quoted fields with commas and newlines
/// included), split with the same rules the writer used.
fn csv_rows(text: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let (mut row, mut field, mut quoted) = (Vec::new(), String::new(), false);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => row.push(std::mem::take(&mut field)),
            ('\n', false) => {
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
            }
            _ => field.push(c),
        }
    }
    rows.into_iter().skip(1).collect()
}

/// `examples/local-and-remote.toml` (the default model locally, and served by llama.cpp's
/// real `llama-server` with four slots) runs as one experiment, resumes what failed, and reports both
/// judges on one Pareto chart.
#[test]
fn a_local_and_a_remote_judge_in_one_experiment() {
    let env = Env::new();
    let port = free_port();
    let base_url = format!("http://127.0.0.1:{port}/v1");
    let example = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/local-and-remote.toml"),
    )
    .unwrap()
    .replace(
        "\"../datasets/llmbar_natural.jsonl\"",
        &format!("{:?}", llmbar_short().display().to_string()),
    )
    .replace("http://127.0.0.1:8080/v1", &base_url)
    .replace("items = 12", "items = 4");
    assert!(example.contains(&base_url) && example.contains("items = 4"));
    let file = env.file("local-and-remote.toml", &example);
    // First with the server down, giving up at once (speed only: the same experiment).
    let impatient = env.file(
        "impatient.toml",
        example.replace("concurrency = 4", "concurrency = 4\nmax_attempts = 1"),
    );
    let out = env.run(&["run", impatient.to_str().unwrap()]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("8 failed and will be retried"), "{err}");
    assert!(err.contains("failed calls, by cause:\n  8 × "), "{err}");
    let v = env.show("local-and-remote");
    let trials = v["trials"].as_array().unwrap();
    let by_judge = |t: &Value| {
        (
            t["params"]["model"].as_str().unwrap().to_string(),
            t["n"].as_u64().unwrap(),
        )
    };
    let got: Vec<(String, u64)> = trials.iter().map(by_judge).collect();
    assert_eq!(
        got,
        [
            ("smollm2-local".to_string(), 4),
            ("smollm2-local".to_string(), 4),
            ("smollm2-server".to_string(), 0),
            ("smollm2-server".to_string(), 0)
        ]
    );

    // The server up: resuming judges only the remote calls that failed.
    let server = LlamaServer::start_on(
        env.dir.path(),
        &judgelab_engine::default_model_path(),
        port,
        Slots::default(),
    );
    // Two calls of each local trial timed alone, so that it has a latency to chart.
    let out = env
        .cmd(&["run", file.to_str().unwrap()])
        .env("JUDGELAB_TIMED_CALLS", "2")
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("resuming") && err.contains("judged 8 verdicts"),
        "{err}"
    );
    // llama-server streams usage: one request per call, no prompt probe.
    let posts = server.posts();
    assert_eq!(posts, 8);
    let v = env.show("local-and-remote");
    for t in v["trials"].as_array().unwrap() {
        assert_eq!(
            (t["n"].as_u64(), t["n_errors"].as_u64()),
            (Some(4), Some(0)),
            "{t}"
        );
        // Both judges give their verdicts' log-probabilities: the local one its own, the
        // server the `top_logprobs` it was asked for.
        assert_eq!(t["calibration"]["confidence_kind"], "logprobs", "{t}");
    }
    // Each judge's latency at its own load: the local one's calls timed alone, the
    // served one's calls four at a time.
    let loads: Vec<(u64, u64)> = v["trials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["latency_concurrency"].as_u64().unwrap(),
                t["latency_ms"]["n"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(loads, [(1, 2), (1, 2), (4, 4), (4, 4)]);
    let server_trial = &v["trials"][2];
    assert!(
        server_trial["usd_per_1k_items"].as_f64().unwrap() > 0.0,
        "{server_trial}"
    );
    // Complete: a third run calls nothing.
    let out = env.run(&["run", file.to_str().unwrap()]);
    assert!(
        text(&out.stderr).contains("is complete: nothing to judge"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(server.posts(), posts);

    // One report, both judges on each Pareto chart.
    let dir = env.dir.path().join("mixed-report");
    let out = env.run(&["report", "local-and-remote", "--out", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let latency = std::fs::read_to_string(dir.join("pareto-quality-latency.svg")).unwrap();
    assert!(latency.contains("p95 latency per request at concurrency 1 or 4 (ms)"));
    for chart in ["pareto-quality-cost.svg", "pareto-quality-latency.svg"] {
        let svg = std::fs::read_to_string(dir.join(chart)).unwrap();
        assert!(
            svg.contains("smollm2-local") && svg.contains("smollm2-server"),
            "{chart}"
        );
    }
    let trials_csv = std::fs::read_to_string(dir.join("trials.csv")).unwrap();
    assert!(trials_csv.contains(",smollm2-server,"), "{trials_csv}");
}

/// `examples/remote-exact.toml`: the default model judged locally and served by llama.cpp's
/// real `llama-server`, each over a 12-point temperature × top_p grid with exact verdicts.
/// The server's grid costs one call per item (and one call asking whether it returns
/// log-probabilities), and its beliefs are the local judge's up to the two ggml builds.
#[test]
fn a_remote_grid_is_exact_from_one_call_per_item() {
    let env = Env::new();
    let server = LlamaServer::start(env.dir.path(), &judgelab_engine::default_model_path());
    let example = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/remote-exact.toml"),
    )
    .unwrap()
    .replace(
        "\"../datasets/llmbar_natural.jsonl\"",
        &format!("{:?}", llmbar_short().display().to_string()),
    )
    .replace("http://127.0.0.1:8080/v1", &server.base_url)
    .replace("items = 40", "items = 8");
    let file = env.file("remote-exact.toml", &example);
    let out = env.run(&["run", "--plan", file.to_str().unwrap()]);
    let plan = text(&out.stdout) + &text(&out.stderr);
    assert!(
        plan.contains(
            "judge \"smollm2-server\": exact verdicts if its server returns log-probabilities"
        ),
        "{plan}"
    );
    assert_eq!(server.posts(), 0, "the plan calls nothing");
    let out = env.run(&["run", file.to_str().unwrap()]);
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("generates its one-token verdicts"), "{err}");
    // One call asks; then one per item serves the server's 12 trials.
    assert_eq!(server.posts(), 1 + 8);
    let v = env.show("remote-exact");
    let trials = v["trials"].as_array().unwrap();
    assert_eq!(trials.len(), 24);
    for t in trials {
        assert_eq!(
            (t["n"].as_u64(), t["n_errors"].as_u64()),
            (Some(8), Some(0)),
            "{t}"
        );
        assert!(t["expected"]["accuracy"].is_number(), "{t}");
        let remote = t["params"]["model"] == "smollm2-server";
        assert_eq!(t["coverage"].is_object(), remote, "{t}");
    }
    // Known now: the plan says so without asking again.
    let out = env.run(&["run", "--plan", file.to_str().unwrap()]);
    assert!(text(&out.stdout).contains("exact verdicts from its server's log-probabilities"));
    assert_eq!(server.posts(), 9);
    // The two judges at temperature 1: the same model, two ggml builds.
    let out = env.run(&["compare", "remote-exact", "12", "24", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let c: Value = serde_json::from_slice(&out.stdout).unwrap();
    let js = c["drift"]["divergence"]["js_mean"].as_f64().unwrap();
    assert!(js < 0.01, "{c}");
}

/// A run against an endpoint that refuses the key says why its calls failed: the 401 and
/// where the key came from, with how many calls it failed (each at most one request: a 401
/// is never retried, and stops the judge's other calls).
#[test]
fn a_refused_key_is_printed_with_its_source() {
    let env = Env::new();
    let refuser = Refuser::bind(0, "401 Unauthorized");
    let file = env.file(
        "bad-key.toml",
        format!(
            "name = \"bad-key\"\ndataset = {:?}\n[judge]\nbackend = \"openai\"\nbase_url = {:?}\nmodel = \"smollm2\"\napi_key_env = \"JUDGELAB_TEST_BAD_KEY\"\ntemplate = \"pairwise\"\n[sweep]\nmax_tokens = 4\n[limits]\nitems = 3\n",
            llmbar().display().to_string(),
            refuser.base_url
        ),
    );
    let out = env
        .cmd(&["run", file.to_str().unwrap()])
        .env("JUDGELAB_TEST_BAD_KEY", "sk-judgelab-bad")
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("judged 3 verdicts; 3 failed")
            && err.contains("failed calls, by cause:\n  3 × ")
            && err.contains("401")
            && err.contains("JUDGELAB_TEST_BAD_KEY"),
        "{err}"
    );
    assert!(
        !err.contains("sk-judgelab-bad"),
        "the key is never printed: {err}"
    );
    // The calls go out together, but one that starts after the first 401 came back sees
    // the judge stopped and sends nothing: how many reach the server is a race. What holds
    // is that none is retried, and each request is one a call recorded.
    let attempts = stored_attempts(&env, "bad-key");
    assert_eq!(attempts.len(), 3);
    assert!(attempts.iter().all(|&a| a <= 1), "{attempts:?}");
    let sent = refuser.completions();
    assert!((1..=3).contains(&sent), "{sent}");
    assert_eq!(attempts.iter().sum::<u32>() as usize, sent, "{attempts:?}");
}

/// A prompt longer than a real llama-server's context is a `prompt_too_long` verdict after
/// one request, and the calls that fit are judged.
#[test]
fn a_prompt_longer_than_the_servers_context_fails_once() {
    let env = Env::new();
    let server = LlamaServer::start_on(
        env.dir.path(),
        &judgelab_engine::default_model_path(),
        0,
        Slots {
            parallel: 1,
            ctx_size: 300,
            ..Slots::default()
        },
    );
    let file = env.file(
        "small-context.toml",
        format!(
            "name = \"small-context\"\ndataset = {:?}\n[judge]\nbackend = \"openai\"\nbase_url = {:?}\nmodel = \"smollm2\"\nconcurrency = 1\ntemplate = \"pairwise\"\n[sweep]\nmax_tokens = 4\n[limits]\nitems = 6\n",
            llmbar().display().to_string(),
            server.base_url
        ),
    );
    let out = env.run(&["run", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v = env.show("small-context");
    let t = &v["trials"][0];
    assert_eq!(
        (t["n"].as_u64(), t["n_errors"].as_u64()),
        (Some(6), Some(0)),
        "{t}"
    );
    let report = env.dir.path().join("small-context-report");
    let out = env.run(&["report", "small-context", "--out", report.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let verdicts = std::fs::read_to_string(report.join("verdicts.csv")).unwrap();
    let header: Vec<&str> = verdicts.lines().next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|c| *c == name).unwrap();
    let rows = csv_rows(&verdicts);
    let too_long = rows
        .iter()
        .filter(|r| r[col("failure_kind")] == "prompt_too_long")
        .count();
    assert!(
        (1..6).contains(&too_long),
        "some of LLMBar's prompts fit 300 tokens and some do not: {too_long} of 6"
    );
    assert!(rows.iter().all(|r| r[col("attempts")] == "1"), "{verdicts}");
    assert_eq!(server.posts(), 6);
}

/// `judgelab load` ramps a remote trial against llama.cpp's real `llama-server` (four
/// slots): every level's requests and warm-up reach the server, its figures and the knee
/// come back as JSON on the last line, and the ramp is stored.
#[test]
fn a_load_ramp_against_a_real_llama_server() {
    let env = Env::new();
    let server = LlamaServer::start(env.dir.path(), &judgelab_engine::default_model_path());
    let file = env.file(
        "ramp.toml",
        format!(
            "name = \"ramp\"\ndataset = {:?}\n[judge]\nbackend = \"openai\"\nbase_url = {:?}\nmodel = \"smollm2\"\nconcurrency = 4\ntemplate = \"pairwise\"\n[sweep]\nmax_tokens = 4\n[limits]\nitems = 4\n",
            llmbar_short().display().to_string(),
            server.base_url
        ),
    );
    let out = env.run(&["run", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let trial = env.show("ramp")["trials"][0]["id"].to_string();
    let args = [
        "load",
        "ramp",
        "--trial",
        &trial,
        "--concurrency",
        "1,2,4",
        "--requests",
        "6",
        "--warmup",
        "1",
        "--slo-ms",
        "60000",
        "--json",
    ];
    let out = env.run(&args);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        stdout.contains("knee:") && stdout.contains("cold start:"),
        "{stdout}"
    );
    let v: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    let levels = v["levels"].as_array().unwrap();
    assert_eq!(levels.len(), 3, "{v}");
    for (l, c) in levels.iter().zip([1, 2, 4]) {
        assert_eq!(
            (l["concurrency"].as_u64(), l["requests"].as_u64()),
            (Some(c), Some(6))
        );
        assert_eq!(
            (l["errors"].as_u64(), l["retried"].as_u64()),
            (Some(0), Some(0)),
            "{l}"
        );
        assert!(l["throughput_vps"].as_f64().unwrap() > 0.0, "{l}");
        for key in ["ttft_ms", "latency_ms"] {
            let p = &l[key];
            assert!(
                p["p50"].as_f64().unwrap() > 0.0 && p["p50"].as_f64() <= p["p95"].as_f64(),
                "{l}"
            );
            assert!(p["p99"].is_null(), "p99 needs 100 requests: {l}");
        }
        assert!(
            l["ttft_ms"]["p50"].as_f64() <= l["latency_ms"]["p50"].as_f64(),
            "{l}"
        );
    }
    let knee = v["knee"].as_u64().unwrap();
    assert!([1, 2, 4].contains(&knee), "{v}");
    assert!(
        v["knee_reason"].as_str().unwrap().contains("throughput"),
        "{v}"
    );
    assert_eq!(v["warmup"]["requests"], 3);
    assert!(v["warmup"]["ttft_ms"].as_f64().unwrap() > 0.0);
    // The run's four calls, then each level's warm-up and six timed requests.
    assert_eq!(server.posts(), 4 + 3 * 7);
    // Stored: `show --json` lists it, and the report draws it.
    let shown = env.show("ramp");
    assert_eq!(shown["load_ramps"][0]["knee"], v["knee"], "{shown}");
    let report = env.dir.path().join("ramp-report");
    let out = env.run(&["report", "ramp", "--out", report.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let latency = std::fs::read_to_string(report.join("load-latency.svg")).unwrap();
    assert!(latency.contains("requests in flight") && latency.contains("TTFT p50"));
    let throughput = std::fs::read_to_string(report.join("load-throughput.svg")).unwrap();
    assert!(
        throughput.contains(&format!("knee at {knee}")),
        "the knee in the title"
    );
    assert!(report.join("load-throughput.png").is_file());
    let html = std::fs::read_to_string(report.join("report.html")).unwrap();
    assert!(html.contains("<h2>Under load</h2>"));
    // A bad level is refused before anything is sent.
    check_invalid(
        &env,
        &["load", "ramp", "--trial", &trial, "--concurrency", "0,2"],
        &["levels must be 1 or more"],
    );
    assert_eq!(server.posts(), 4 + 3 * 7);
}

/// A remote judge served by a pool of three real llama-servers, one of which is killed
/// mid-sweep: its calls in flight move to the others, its breaker keeps further calls
/// away, and the sweep ends with every verdict stored once, each saying which server
/// answered it.
/// `concurrency` swept for a remote judge: each level is a trial with the same verdicts,
/// asked once, and latency figures of its own, from a sample made again at that load.
#[test]
fn a_concurrency_sweep_shares_its_verdicts_and_times_each_load() {
    let env = Env::new();
    let server = LlamaServer::start(env.dir.path(), &judgelab_engine::default_model_path());
    let file = env.file(
        "loads.toml",
        format!(
            "name = \"loads\"\ndataset = {:?}\n[judge]\nbackend = \"openai\"\nbase_url = {:?}\nmodel = \"smollm2\"\nconcurrency = 2\ntemplate = \"pairwise\"\n[sweep]\nmax_tokens = 4\nconcurrency = [1, 4]\n[limits]\nitems = 12\n",
            llmbar_short().display().to_string(),
            server.base_url
        ),
    );
    // The verdicts first, with nothing timed: 12 calls answer both trials' 24 verdicts.
    let run = |timed: &str| {
        let out = env
            .cmd(&["run", file.to_str().unwrap()])
            .env("JUDGELAB_TIMED_CALLS", timed)
            .output()
            .unwrap();
        let err = text(&out.stderr);
        assert!(out.status.success(), "{err}");
        err
    };
    let err = run("0");
    assert!(
        err.contains("judged 24 verdicts") && err.contains("12 model calls (2.0 verdicts a call)"),
        "{err}"
    );
    assert_eq!(server.posts(), 12, "{err}");
    // Then each level's sample: its 8 timed calls, a warm-up of as many as it keeps in
    // flight and a tail of one fewer (8 + 1 + 0 at 1, 8 + 4 + 3 at 4), and no verdict
    // asked again. A busy server may make a request be retried.
    let err = run("8");
    assert!(
        err.contains("is complete: nothing to judge")
            && err.contains("timed 16 calls again at the load the sweep sets"),
        "{err}"
    );
    assert!(server.posts() >= 12 + 9 + 15, "{err}");

    let v = env.show("loads");
    let trials = v["trials"].as_array().unwrap();
    let levels: Vec<(u64, u64, u64)> = trials
        .iter()
        .map(|t| {
            (
                t["params"]["concurrency"].as_u64().unwrap(),
                t["latency_concurrency"].as_u64().unwrap(),
                t["latency_ms"]["n"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(levels, [(1, 1, 8), (4, 4, 8)], "{v}");
    assert_eq!(trials[0]["accuracy"], trials[1]["accuracy"], "{v}");
    assert_eq!(trials[0]["n"], 12, "{v}");
    for key in ["latency_ms", "ttft_ms"] {
        for t in trials {
            assert!(t[key]["p50"].as_f64().unwrap() > 0.0, "{key} {t}");
        }
    }
    // The table says which trial is which load: its `conc` column, once.
    let out = env.run(&["show", "loads"]);
    let table = text(&out.stdout);
    let rows: Vec<Vec<&str>> = table
        .lines()
        .skip_while(|l| !l.starts_with("trial"))
        .take(3)
        .map(|l| l.split_whitespace().collect())
        .collect();
    let conc: Vec<usize> = (0..rows[0].len())
        .filter(|&i| rows[0][i] == "conc")
        .collect();
    assert_eq!(conc.len(), 1, "{table}");
    // A trial's row lacks no column before `conc`: its interval cells are two words each.
    let from_end = rows[0].len() - conc[0];
    let levels: Vec<&str> = rows[1..].iter().map(|r| r[r.len() - from_end]).collect();
    assert_eq!(levels, ["1", "4"], "{table}");

    // The same verdict, word for word, in both trials.
    let report = env.dir.path().join("loads-report");
    let out = env.run(&["report", "loads", "--out", report.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let verdicts = std::fs::read_to_string(report.join("verdicts.csv")).unwrap();
    let header: Vec<&str> = verdicts.lines().next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|c| *c == name).unwrap();
    let rows = csv_rows(&verdicts);
    let answers = |trial: &str| -> Vec<(String, String)> {
        let mut a: Vec<_> = rows
            .iter()
            .filter(|r| r[col("trial_id")] == trial)
            .map(|r| (r[col("item_id")].clone(), r[col("raw_output")].clone()))
            .collect();
        a.sort();
        a
    };
    let ids: Vec<String> = trials.iter().map(|t| t["id"].to_string()).collect();
    assert_eq!(answers(&ids[0]).len(), 12, "{verdicts}");
    assert_eq!(answers(&ids[0]), answers(&ids[1]), "{verdicts}");
    let trials_csv = std::fs::read_to_string(report.join("trials.csv")).unwrap();
    assert!(
        trials_csv.lines().next().unwrap().contains("concurrency"),
        "{trials_csv}"
    );

    // Complete: another run asks nothing, and times nothing again.
    let posts = server.posts();
    let err = run("8");
    assert!(
        err.contains("is complete: nothing to judge") && !err.contains("timed"),
        "{err}"
    );
    assert_eq!(server.posts(), posts);
}

/// A race on the real model, killed outright during its rounds and resumed: the rounds
/// decided before the kill stand as they were, no verdict is lost or judged twice, a
/// dropped trial has verdicts only up to the round that dropped it, and only the trials the
/// selection kept judge the test split.
#[test]
fn a_race_killed_outright_resumes_with_the_same_drops() {
    let env = Env::new();
    let exp = experiment(
        &env,
        "race",
        "",
        "temperature = [0.0, 1.6]\nconstraint = [\"none\", \"grammar\"]\nmax_tokens = [4]\nseed = 5\n[limits]\ndev = 16\ntest = 4\n[selection]\nmetric = \"accuracy\"\nstrategy = \"race\"\nround = 4\nmin_items = 4\nalpha = 0.3",
    );
    let exp = exp.to_str().unwrap();
    // The plan, before any call: the full grid's 64 dev calls, the race's least (every
    // trial on the first round's 4 items, then one trial on the other 12), the test split.
    let out = env.run(&["run", exp, "--plan"]);
    let plan = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    for line in [
        "4 trials × 16 items: 64 verdicts in 64 calls",
        "race: 4 rounds; every trial judges the first 4 dev items, then trials clearly worse than the leader stop: between 28 calls (44% of the full grid's) and all 64",
        "test split: 4 items, judged only by the trials the selection keeps: up to 4 calls each",
    ] {
        assert!(plan.contains(line), "{line:?} in\n{plan}");
    }
    assert!(
        !env.run(&["show", "race", "--json"]).status.success(),
        "the plan stored nothing"
    );
    let race = |v: &Value| v["race"].as_array().cloned().unwrap_or_default();
    let mut child = env
        .cmd(&["run", exp])
        .env("JUDGELAB_TIMED_CALLS", "0")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(&env, "race", &mut child, "two rounds decided", |v| {
        race(v).iter().any(|s| s["round"] == 2)
    });
    signal(&child, "KILL");
    child.wait().unwrap();
    let before = race(&env.show("race"));

    let out = env
        .cmd(&["run", exp])
        .env("JUDGELAB_TIMED_CALLS", "0")
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("resuming \"race\""), "{stderr}");
    let v = env.show("race");
    let after = race(&v);
    for standing in &before {
        assert!(
            after.contains(standing),
            "{standing} changed on resuming:\n{after:?}"
        );
    }
    assert_eq!(
        after.iter().map(|s| s["round"].as_u64().unwrap()).max(),
        Some(4),
        "{stderr}"
    );

    let report = env.dir.path().join("race-report");
    let out = env.run(&["report", "race", "--out", report.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let verdicts = std::fs::read_to_string(report.join("verdicts.csv")).unwrap();
    let rows = csv_rows(&verdicts);
    let (trial_col, item_col) = (0, 1);
    let mut keys: Vec<(String, String)> = rows
        .iter()
        .map(|r| (r[trial_col].clone(), r[item_col].clone()))
        .collect();
    let n = keys.len();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), n, "a verdict was judged twice");
    for t in v["trials"].as_array().unwrap() {
        let id = t["id"].to_string();
        let judged = keys.iter().filter(|(trial, _)| *trial == id).count();
        let expect = match (&t["test_role"], &t["dropped"]) {
            (Value::String(_), _) => 16 + 4,
            (Value::Null, Value::Null) => 16,
            (Value::Null, dropped) => dropped["n_items"].as_u64().unwrap() as usize,
            (role, _) => panic!("test_role {role}"),
        };
        assert_eq!(judged, expect, "{t}");
    }
    assert!(
        v["trials"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["test_role"] == "pick"),
        "{v}"
    );
}

/// Runs the experiment in `file` and kills `server` once it has answered 3 calls; the
/// run's output, after it succeeded.
fn run_killing(env: &Env, file: &Path, server: &mut LlamaServer) -> String {
    let mut run = env
        .cmd(&["run", file.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while server.posts() < 3 {
        assert!(
            start.elapsed() < Duration::from_secs(300),
            "no call reached it"
        );
        assert!(run.try_wait().unwrap().is_none(), "the run ended first");
        std::thread::sleep(Duration::from_millis(5));
    }
    server.kill();
    let out = run.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    format!("{}{}", text(&out.stdout), text(&out.stderr))
}

/// The experiment's `verdicts.csv` from its report: the text, its header and its rows.
fn verdict_rows(env: &Env, experiment: &str) -> (String, Vec<String>, Vec<Vec<String>>) {
    let report = env.dir.path().join(format!("{experiment}-report"));
    let out = env.run(&["report", experiment, "--out", report.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let verdicts = std::fs::read_to_string(report.join("verdicts.csv")).unwrap();
    let header = verdicts
        .lines()
        .next()
        .unwrap()
        .split(',')
        .map(String::from)
        .collect();
    let rows = csv_rows(&verdicts);
    (verdicts, header, rows)
}

/// A pool of two llama-servers judging a temperature × top_p grid with exact verdicts,
/// one killed mid-run: every item's one call answers its six trials once, none is lost or
/// stored twice, and the live server was asked once per item it served (and, once, whether
/// it returns log-probabilities).
#[test]
fn a_pool_of_two_servers_keeps_exact_verdicts_whole_when_one_is_killed() {
    let env = Env::new();
    let model = judgelab_engine::default_model_path();
    let slots = Slots {
        parallel: 2,
        ctx_size: 4096,
        ..Slots::default()
    };
    let mut servers: Vec<LlamaServer> = (0..2)
        .map(|_| LlamaServer::start_on(env.dir.path(), &model, 0, slots))
        .collect();
    let urls: Vec<String> = servers.iter().map(|s| s.base_url.clone()).collect();
    let file = env.file(
        "pool-exact.toml",
        format!(
            "name = \"pool-exact\"\ndataset = {:?}\n[judge]\nbackend = \"openai\"\nbase_url = {urls:?}\nmodel = \"smollm2\"\nconcurrency = 2\ntemplate = \"pairwise\"\n[sweep]\nmax_tokens = 1\ntemperature = [0.0, 0.7, 1.0]\ntop_p = [0.9, 1.0]\n[limits]\nitems = 40\n",
            llmbar_short().display().to_string(),
        ),
    );
    let said = run_killing(&env, &file, &mut servers[1]);
    assert!(
        said.contains("judged 240 verdicts") && !said.contains("failed"),
        "{said}"
    );
    let (verdicts, header, rows) = verdict_rows(&env, "pool-exact");
    let col = |name: &str| header.iter().position(|c| c == name).unwrap();
    let mut keys: Vec<_> = rows
        .iter()
        .map(|r| (r[col("trial_id")].clone(), r[col("item_id")].clone()))
        .collect();
    keys.sort();
    keys.dedup();
    assert_eq!((rows.len(), keys.len()), (240, 240), "{verdicts}");
    assert!(
        rows.iter().all(|r| r[col("error")].is_empty()),
        "{verdicts}"
    );
    // An item's six trials came from one call, at one endpoint.
    let mut by_item: std::collections::HashMap<String, std::collections::HashSet<String>> =
        Default::default();
    for r in &rows {
        by_item
            .entry(r[col("item_id")].clone())
            .or_default()
            .insert(r[col("endpoint")].clone());
    }
    assert!(by_item.values().all(|e| e.len() == 1), "{by_item:?}");
    let items_at = |url: &str| by_item.values().filter(|e| e.contains(url)).count();
    assert_eq!(items_at(&urls[0]) + items_at(&urls[1]), 40);
    assert!(
        items_at(&urls[0]) > 0 && items_at(&urls[1]) >= 2,
        "{by_item:?}"
    );
    // The live server was asked once per item it served, and perhaps whether it returns
    // log-probabilities: nothing twice.
    let extra = servers[0].posts() - items_at(&urls[0]);
    assert!(
        extra <= 1,
        "{} posts for {} items",
        servers[0].posts(),
        items_at(&urls[0])
    );
}

#[test]
fn a_pool_of_three_llama_servers_loses_none_when_one_is_killed() {
    let env = Env::new();
    let model = judgelab_engine::default_model_path();
    let slots = Slots {
        parallel: 2,
        ctx_size: 4096,
        ..Slots::default()
    };
    let mut servers: Vec<LlamaServer> = (0..3)
        .map(|_| LlamaServer::start_on(env.dir.path(), &model, 0, slots))
        .collect();
    let urls: Vec<String> = servers.iter().map(|s| s.base_url.clone()).collect();
    let file = env.file(
        "pool.toml",
        format!(
            "name = \"pool\"\ndataset = {:?}\n[judge]\nbackend = \"openai\"\nbase_url = {urls:?}\nmodel = \"smollm2\"\nconcurrency = 3\ntemplate = \"pairwise\"\n[sweep]\nmax_tokens = 4\ntemperature = [0.0, 0.7]\n[limits]\nitems = 12\n",
            llmbar_short().display().to_string(),
        ),
    );
    let said = run_killing(&env, &file, &mut servers[1]);
    assert!(
        said.contains("judged 24 verdicts") && !said.contains("failed"),
        "{said}"
    );

    let (verdicts, header, rows) = verdict_rows(&env, "pool");
    let col = |name: &str| header.iter().position(|c| c == name).unwrap();
    let mut keys: Vec<_> = rows
        .iter()
        .map(|r| {
            (
                r[col("trial_id")].clone(),
                r[col("item_id")].clone(),
                r[col("swapped")].clone(),
            )
        })
        .collect();
    keys.sort();
    keys.dedup();
    assert_eq!((rows.len(), keys.len()), (24, 24), "{verdicts}");
    assert!(
        rows.iter().all(|r| r[col("error")].is_empty()),
        "{verdicts}"
    );
    let served = |url: &str| rows.iter().filter(|r| r[col("endpoint")] == url).count();
    assert_eq!(
        urls.iter().map(|u| served(u)).sum::<usize>(),
        24,
        "{verdicts}"
    );
    assert!(served(&urls[0]) > 0 && served(&urls[2]) > 0, "{verdicts}");
    // The live servers were asked once per verdict they gave: nothing was asked twice
    // there. The dead one was sent what it answered before it died, the calls it dropped
    // and the trial call its breaker let through, each counted as an attempt.
    for live in [0, 2] {
        assert_eq!(servers[live].posts(), served(&urls[live]), "{verdicts}");
    }
    let dead = (servers[1].posts(), served(&urls[1]));
    eprintln!(
        "requests and verdicts per server: {:?}",
        servers
            .iter()
            .zip(&urls)
            .map(|(s, u)| (s.posts(), served(u)))
            .collect::<Vec<_>>()
    );
    assert!(dead.0 > dead.1 && dead.1 >= 2, "{dead:?}");
    let attempts: usize = rows
        .iter()
        .map(|r| r[col("attempts")].parse::<usize>().unwrap())
        .sum();
    assert_eq!(
        attempts,
        servers.iter().map(LlamaServer::posts).sum::<usize>(),
        "{verdicts}"
    );
}

/// Each anomaly that moves a latency tail, injected by the relay in front of a real
/// llama-server, is found where a user looks for it in `judgelab load`'s output: the cold
/// start, p95 latency, TTFT and stream, the retried split and the retry rate, which equals the
/// share of requests the fault touched; and no request is lost to it. What a fault adds is
/// a lower bound on the figure it moves; the figures it leaves alone are checked at their
/// median, which the other tests running beside this one on shared cores do not move past
/// the injected delays.
#[test]
fn injected_anomalies_show_in_a_load_ramp() {
    let env = Env::new();
    // A remote trial judged through a relay that passes its 4 calls on untouched, then a
    // ramp at one level: a warm-up (request 0 of the faults), then 8 timed requests.
    let ramp = |name: &str, faults: Faults| -> (Value, usize) {
        let server = LlamaServer::with_faults(
            env.dir.path(),
            &judgelab_engine::default_model_path(),
            0,
            // One thread (the default): the figures move with what else the two cores
            // run, not with how a second thread of this server is scheduled beside it.
            Slots::default(),
            Faults { skip: 4, ..faults },
        );
        let file = env.file(
            &format!("{name}.toml"),
            format!(
                "name = \"{name}\"\ndataset = {:?}\n[judge]\nbackend = \"openai\"\nbase_url = {:?}\nmodel = \"smollm2\"\nconcurrency = 4\ntemplate = \"pairwise\"\n[sweep]\nmax_tokens = 4\n[limits]\nitems = 4\n",
                llmbar_short().display().to_string(),
                server.base_url
            ),
        );
        let out = env.run(&["run", file.to_str().unwrap()]);
        assert!(out.status.success(), "{name}: {}", text(&out.stderr));
        let trial = env.show(name)["trials"][0]["id"].to_string();
        let args = [
            "load",
            name,
            "--trial",
            &trial,
            "--concurrency",
            "1",
            "--requests",
            "8",
            "--warmup",
            "1",
            // Cache hits keep the requests short, so that the injected delays stand out
            // against what two shared cores do to a whole prefill.
            "--prompt-cache",
            "--json",
        ];
        let out = env.run(&args);
        assert!(out.status.success(), "{name}: {}", text(&out.stderr));
        let v: Value = serde_json::from_str(text(&out.stdout).lines().last().unwrap()).unwrap();
        let level = v["levels"][0].clone();
        assert_eq!(
            (level["requests"].as_u64(), level["errors"].as_u64()),
            (Some(8), Some(0)),
            "{name}: {level}"
        );
        let mut level = level;
        level["warmup"] = v["warmup"].clone();
        (level, server.touched())
    };
    let ms = |v: &Value, key: &str, p: &str| v[key][p].as_f64().unwrap();

    // A cold first request: the cold-start figure, not the level's.
    let (l, touched) = ramp(
        "cold",
        Faults {
            cold_first_ms: 1500,
            ..Faults::default()
        },
    );
    let cold = l["warmup"]["ttft_ms"].as_f64().unwrap();
    assert!(cold >= 1500.0, "{l}");
    // The level's median is not (its tail may be: these tests share two cores).
    assert!(ms(&l, "ttft_ms", "p50") < cold, "{l}");
    assert_eq!(touched, 1);

    // A delay of two of the eight requests shows in the tail and not in the median. How
    // long the others take depends on what else these two cores run, so the median is held
    // against the tail: p95 lies between the two delayed ones, p50 between two others.
    let tail_not_median = |l: &Value, key: &str, delay: f64| {
        let (p50, p95) = (ms(l, key, "p50"), ms(l, key, "p95"));
        assert!(p95 >= delay && p95 - p50 >= delay / 2.0, "{key}: {l}");
    };

    // Two of the eight held 2.5 s in a queue.
    let (l, touched) = ramp(
        "queued",
        Faults {
            queue_hold: Some((4, 2500)),
            ..Faults::default()
        },
    );
    tail_not_median(&l, "latency_ms", 2500.0);
    assert_eq!(touched, 2);

    // Two TTFT spikes of 1.5 s.
    let (l, touched) = ramp(
        "spiky",
        Faults {
            ttft_spike: Some((4, 1500)),
            ..Faults::default()
        },
    );
    tail_not_median(&l, "ttft_ms", 1500.0);
    assert_eq!(touched, 2);

    // Every piece of every answer 150 ms late (how many pieces an answer comes in depends on
    // how fast it is read): at least that on TTFT and latency.
    let (l, touched) = ramp(
        "slow",
        Faults {
            chunk_delay_ms: 150,
            ..Faults::default()
        },
    );
    assert!(
        ms(&l, "ttft_ms", "p50") >= 150.0 && ms(&l, "latency_ms", "p50") >= 150.0,
        "{l}"
    );
    assert_eq!(touched, 9);

    // Two streams cut: two requests retried, none lost; the retried split has them.
    let (l, touched) = ramp(
        "cut",
        Faults {
            cut_every: Some(4),
            ..Faults::default()
        },
    );
    assert_eq!((l["retried"].as_u64(), touched), (Some(2), 2), "{l}");
    assert_eq!(l["retry_rate"].as_f64(), Some(0.25));
    assert_eq!(l["retried_latency_ms"]["n"], 2, "{l}");

    // A burst of three 429s: one request retried three times, then answered.
    let (l, touched) = ramp(
        "burst",
        Faults {
            burst_429: Some((2, 3)),
            ..Faults::default()
        },
    );
    assert_eq!((l["retried"].as_u64(), touched), (Some(1), 3), "{l}");
    assert_eq!(l["first_try_latency_ms"]["n"], 7, "{l}");

    // Network jitter: every answer's first bytes held a seeded random 0-1.2 s. Each TTFT is
    // at least its request's draw, so each percentile of TTFT is at least the same order
    // statistic of the draws (p95 of eight lies between the 7th and 8th, p50 between the
    // 4th and 5th).
    let jitter = Faults {
        jitter_ms: 1200,
        ..Faults::default()
    };
    let (l, touched) = ramp("jittery", jitter);
    let mut draws: Vec<f64> = (1..=8).map(|n| jitter.jitter_of(n) as f64).collect();
    draws.sort_by(f64::total_cmp);
    assert!(draws[6] - draws[3] >= 200.0, "the draws spread: {draws:?}");
    assert!(
        ms(&l, "ttft_ms", "p95") >= draws[6] && ms(&l, "ttft_ms", "p50") >= draws[3],
        "{draws:?} {l}"
    );
    assert_eq!(touched, 9);

    // A KV-cache eviction on two of the eight: the server decodes their prompts again and
    // their streams stall 1.5 s after the first token. The stream's p95 has it (less the
    // few milliseconds the first event takes to reach the client, which TTFT counts and the
    // stall does not); its median does not.
    let (l, touched) = ramp(
        "evicted",
        Faults {
            evict: Some((4, 1500)),
            ..Faults::default()
        },
    );
    tail_not_median(&l, "stream_ms", 1400.0);
    assert!(ms(&l, "latency_ms", "p95") >= 1500.0, "{l}");
    assert_eq!((touched, l["errors"].as_u64()), (2, Some(0)), "{l}");
}

/// A failed call records the requests it really made: 3 to an endpoint that answers 503 to
/// each of `max_attempts = 3`, counted by the endpoint.
#[test]
fn a_failed_calls_attempts_are_the_requests_it_made() {
    let env = Env::new();
    let refuser = Refuser::bind(0, "503 Service Unavailable");
    let file = env.file(
        "busy.toml",
        format!(
            "name = \"busy\"\ndataset = {:?}\n[judge]\nbackend = \"openai\"\nbase_url = {:?}\nmodel = \"smollm2\"\nmax_attempts = 3\ntemplate = \"pairwise\"\n[sweep]\nmax_tokens = 4\n[limits]\nitems = 2\n",
            llmbar().display().to_string(),
            refuser.base_url
        ),
    );
    let out = env.cmd(&["run", file.to_str().unwrap()]).output().unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("2 × HTTP 503") && err.contains("gave up after 3 attempts"),
        "{err}"
    );
    assert_eq!(refuser.completions(), 6);
    assert_eq!(stored_attempts(&env, "busy"), [3, 3]);
}

/// The `attempts` column of an experiment's verdicts, as `report` exports it.
fn stored_attempts(env: &Env, experiment: &str) -> Vec<u32> {
    let out_dir = env.dir.path().join(format!("{experiment}-report"));
    let out = env
        .cmd(&["report", experiment, "--out", out_dir.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let verdicts = std::fs::read_to_string(out_dir.join("verdicts.csv")).unwrap();
    let header: Vec<&str> = verdicts.lines().next().unwrap().split(',').collect();
    let attempts = header.iter().position(|c| *c == "attempts").unwrap();
    csv_rows(&verdicts)
        .iter()
        .map(|r| r[attempts].parse().unwrap())
        .collect()
}

const SENTINEL_KEY: &str = "sk-judgelab-sentinel-4f1c2a";

/// Remote judging end to end against a real OpenAI-compatible server on 127.0.0.1: usage
/// tokens and TTFT recorded, a re-run that makes no HTTP call, and the API key nowhere.
#[test]
fn remote_judges_against_a_real_llama_cpp_python_server() {
    let env = Env::new();
    let server = LlamaCppPython::start(env.dir.path(), &judgelab_engine::default_model_path());
    let experiment = |name: &str, stream: bool| {
        env.file(
            &format!("{name}.toml"),
            format!(
                "name = \"{name}\"\ndataset = \"{}\"\n[judge]\nbackend = \"openai\"\nbase_url = \"{}\"\nmodel = \"smollm2\"\ntemplate = \"pairwise\"\napi_key_env = \"JUDGELAB_SENTINEL_KEY\"\nstream = {stream}\nconcurrency = 1\n[judge.prices.smollm2]\ninput = 0.5\noutput = 1.5\n[sweep]\ntemperature = [0.0, 0.7]\nfew_shot = [0, 1]\nmax_tokens = 4\n[limits]\nitems = 3\n",
                llmbar_short().display(),
                server.base_url
            ),
        )
    };
    let judgelab = |args: &[&str]| {
        env.cmd(args)
            .env("JUDGELAB_SENTINEL_KEY", SENTINEL_KEY)
            .output()
            .unwrap()
    };
    let mut logs = String::new();

    // Without streaming, the server reports usage.
    let whole = experiment("remote-whole", false);
    let out = judgelab(&["run", whole.to_str().unwrap()]);
    logs.push_str(&(text(&out.stdout) + &text(&out.stderr)));
    assert!(out.status.success(), "{logs}");
    let posts = server.posts();
    assert_eq!(posts, 12, "2×2 trials × 3 items");
    let v = env.show("remote-whole");
    for t in v["trials"].as_array().unwrap() {
        assert_eq!(t["n"], 3, "{t}");
        assert!(t["prompt_tokens_per_item"].as_f64().unwrap() > 50.0, "{t}");
        assert!(
            t["completion_tokens_per_item"].as_f64().unwrap() > 0.0,
            "{t}"
        );
        assert!(t["usd_per_1k_items"].as_f64().unwrap() > 0.0, "{t}");
    }

    // The same calls again, under another name: answered from the cache, no HTTP call.
    let again = env.file(
        "again.toml",
        std::fs::read_to_string(&whole)
            .unwrap()
            .replace("remote-whole", "remote-again"),
    );
    let out = judgelab(&["run", again.to_str().unwrap()]);
    logs.push_str(&(text(&out.stdout) + &text(&out.stderr)));
    assert!(out.status.success(), "{logs}");
    assert!(
        text(&out.stderr).contains("12 of them answered from the response cache"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(server.posts(), posts);

    // Streamed, time to first token is measured.
    let streamed = experiment("remote-stream", true);
    let out = judgelab(&["run", streamed.to_str().unwrap(), "--no-cache"]);
    logs.push_str(&(text(&out.stdout) + &text(&out.stderr)));
    assert!(out.status.success(), "{logs}");
    // The server streams no usage: one unstreamed request per distinct prompt (3 items ×
    // 2 few-shot counts) counts the prompt tokens.
    assert_eq!(server.posts(), posts + 12 + 6);
    let v = env.show("remote-stream");
    for t in v["trials"].as_array().unwrap() {
        assert!(t["prompt_tokens_per_item"].as_f64().unwrap() > 50.0, "{t}");
        assert!(
            t["completion_tokens_per_item"].as_f64().unwrap() > 0.0,
            "{t}"
        );
        let ttft = t["ttft_ms"]["p50"].as_f64().unwrap();
        assert!(
            ttft > 0.0 && ttft <= t["latency_ms"]["p50"].as_f64().unwrap() * 1.5,
            "{t}"
        );
    }

    // A streamed prompt longer than the server's context (16 few-shot examples of the
    // longer items, some 3,000 tokens in 2,048): llama-cpp-python cuts the stream before
    // any content, and the same request unstreamed says why. A `prompt_too_long` verdict
    // after those two requests, not five retries of a cut stream.
    let long = env.file(
        "remote-long.toml",
        std::fs::read_to_string(&streamed)
            .unwrap()
            .replace("remote-stream", "remote-long")
            .replace(
                &llmbar_short().display().to_string(),
                &llmbar().display().to_string(),
            )
            .replace("few_shot = [0, 1]", "few_shot = 16")
            .replace("temperature = [0.0, 0.7]", "temperature = 0.0")
            .replace("items = 3", "items = 1"),
    );
    let posts = server.posts();
    let out = judgelab(&["run", long.to_str().unwrap()]);
    logs.push_str(&(text(&out.stdout) + &text(&out.stderr)));
    assert!(out.status.success(), "{logs}");
    let long_report = env.dir.path().join("long-report");
    let out = judgelab(&[
        "report",
        "remote-long",
        "--out",
        long_report.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let verdicts = std::fs::read_to_string(long_report.join("verdicts.csv")).unwrap();
    assert_eq!(server.posts(), posts + 2, "{verdicts}");
    let header: Vec<&str> = verdicts.lines().next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|c| *c == name).unwrap();
    let rows = csv_rows(&verdicts);
    assert_eq!(rows.len(), 1, "{verdicts}");
    assert_eq!(
        (
            rows[0][col("failure_kind")].as_str(),
            rows[0][col("attempts")].as_str()
        ),
        ("prompt_too_long", "2"),
        "{verdicts}"
    );

    // Four streams in flight: llama-cpp-python ends the older ones with [DONE] and no
    // finish_reason as each new request arrives. The judge finds the server serves one
    // request at a time, goes on at one and says so, rather than storing empty answers as
    // parse failures with no time to first token, or retrying calls that would cut each
    // other's streams; the plan says it next time, and the next run starts at one.
    let crowded = env.file(
        "remote-crowded.toml",
        std::fs::read_to_string(&streamed)
            .unwrap()
            .replace("concurrency = 1", "concurrency = 4")
            .replace("remote-stream", "remote-crowded"),
    );
    let out = judgelab(&["run", crowded.to_str().unwrap(), "--no-cache"]);
    let err = text(&out.stderr);
    logs.push_str(&(text(&out.stdout) + &err));
    assert!(
        out.status.success()
            && err.contains("is served one request at a time")
            && err.contains("concurrency = 1 (in its [judge] or [[judges]] table"),
        "{err}"
    );
    let v = env.show("remote-crowded");
    for t in v["trials"].as_array().unwrap() {
        // Every answer whole, with its time to first token.
        assert_eq!(t["n_errors"], 0, "{t}");
        assert_eq!(t["ttft_ms"]["n"], t["latency_ms"]["n"], "{t}");
    }
    let out = judgelab(&["run", "--plan", crowded.to_str().unwrap()]);
    assert!(
        text(&out.stdout).contains("its server serves one request at a time"),
        "{}",
        text(&out.stdout)
    );

    // The key is nowhere: not in the database, the output, or a report.
    let report = env.dir.path().join("remote-report");
    let out = judgelab(&["report", "remote-whole", "--out", report.to_str().unwrap()]);
    logs.push_str(&(text(&out.stdout) + &text(&out.stderr)));
    assert!(out.status.success(), "{logs}");
    assert!(!logs.contains(SENTINEL_KEY));
    // Remote calls carry their cost and attempts into verdicts.csv.
    let verdicts = std::fs::read_to_string(report.join("verdicts.csv")).unwrap();
    let rows = csv_rows(&verdicts);
    let header: Vec<&str> = verdicts.lines().next().unwrap().split(',').collect();
    let cost = header.iter().position(|c| *c == "cost_usd").unwrap();
    let attempts = header.iter().position(|c| *c == "attempts").unwrap();
    assert_eq!(rows.len(), 12);
    assert!(rows
        .iter()
        .all(|r| r[cost].parse::<f64>().is_ok_and(|c| c > 0.0) && r[attempts] == "1"));
    let mut files: Vec<PathBuf> = std::fs::read_dir(&report)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.push(env.db());
    for file in files {
        let bytes = std::fs::read(&file).unwrap();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(SENTINEL_KEY),
            "the key is in {}",
            file.display()
        );
    }
}

/// A quantisation sweep makes its variant of the default model (Q4_1) with llama.cpp's
/// quantiser, once, into the model cache; the variant's sha256 is its trials' model; each
/// level is held against the source, its most precise.
#[test]
fn a_quantization_sweep_makes_each_variant_once() {
    let env = Env::new();
    let sweep = "quantization = [\"source\", \"Q8_0\"]\ntemperature = 1.0\nmax_tokens = 1\nconstraint = \"grammar\"\n[limits]\nitems = 3";
    let file = experiment(&env, "quant", "exact = true", sweep);
    let plan = env.run(&["run", file.to_str().unwrap(), "--plan"]);
    let said = text(&plan.stdout);
    assert!(plan.status.success(), "{}", text(&plan.stderr));
    assert!(
        said.contains("quantization Q8_0 of judge \"default\": ")
            && said.contains("the source is quantised already (mostly Q4_1)")
            && said.contains("requantising stacks its errors"),
        "{said}"
    );
    let out = env.run(&["run", file.to_str().unwrap()]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let v = env.show("quant");
    let trials = v["trials"].as_array().unwrap();
    assert_eq!(trials[0]["params"]["quantization"], "source");
    assert_eq!(trials[1]["params"]["quantization"], "Q8_0");
    assert_eq!(
        trials[0]["model_sha256"],
        judgelab_core::DEFAULT_MODEL_SHA256
    );
    let variant = trials[1]["model_sha256"].as_str().unwrap();
    assert_ne!(variant, judgelab_core::DEFAULT_MODEL_SHA256);
    assert_eq!(variant.len(), 64);
    // Held against the source by default: its flips and how far its beliefs moved.
    let drift = &trials[1]["drift"];
    assert_eq!(drift["reference"], trials[0]["id"], "{drift}");
    assert_eq!(drift["n_pairs"], 3, "{drift}");
    assert!(
        drift["kl_mean"]["value"].as_f64().unwrap() >= 0.0,
        "{drift}"
    );
    // Made once: another experiment with the same level finds it in the cache.
    let again = experiment(&env, "quant-again", "exact = true", sweep);
    let out = env.run(&["run", again.to_str().unwrap()]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("making Q8_0"), "{stderr}");
    assert_eq!(
        env.show("quant-again")["trials"][1]["model_sha256"],
        variant,
        "the same file, the same identity"
    );
    // A plan of levels only, none made by it: tokens are counted with the source's
    // vocabulary, nothing is made.
    let unmade = experiment(
        &env,
        "quant-plan",
        "exact = true",
        &sweep.replace("[\"source\", \"Q8_0\"]", "[\"Q5_1\", \"Q3_K_M\"]"),
    );
    let plan = env.run(&["run", unmade.to_str().unwrap(), "--plan"]);
    let said = text(&plan.stdout);
    assert!(plan.status.success(), "{}", text(&plan.stderr));
    assert!(
        said.contains("quantization Q5_1 of judge") && said.contains("prompt tokens"),
        "{said}"
    );
    // A remote judge cannot be quantised.
    let remote = env.file(
        "remote-quant.toml",
        "name = \"rq\"\ndataset = \"d\"\n[judge]\nbackend = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\ntemplate = \"pairwise\"\n[sweep]\nquantization = [\"source\", \"Q4_0\"]\n",
    );
    check_invalid(
        &env,
        &["run", remote.to_str().unwrap()],
        &["sweep.quantization", "needs backend = \"llama\""],
    );
}
