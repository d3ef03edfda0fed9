//! The real app, driven end to end under X (Xvfb when no display is set) through
//! tauri-driver and WebKitWebDriver, on a fresh database and the real default model: import
//! LLMBar Natural's 40 shortest items, preview a template, build a 2×2 sweep on 8 items, run
//! it, see four points on the Pareto chart, open a verdict, export the report; then a local
//! and a remote judge (a real llama-cpp-python server) in one experiment, run and resumed. A
//! screenshot of each screen goes to `target/e2e-screenshots/`.

use std::path::{Path, PathBuf};

use judgelab_testkit::{LlamaServer, Slots};
use serde_json::json;

use crate::webdriver::{display, Session};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

fn testid(id: &str) -> String {
    format!("[data-testid=\"{id}\"]")
}

/// Sets a `<select>` the way a user's choice does (its value, then a `change` event).
fn select(s: &Session, id: &str, value: &str) {
    s.find(&testid(id));
    let found = s.script(
        "const el = document.querySelector(arguments[0]);
         if (![...el.options].some(o => o.value === arguments[1])) return false;
         el.value = arguments[1];
         el.dispatchEvent(new Event('change', { bubbles: true }));
         return true;",
        json!([testid(id), value]),
    );
    assert_eq!(found, json!(true), "{id} has no option {value:?}");
}

/// Ticks (or unticks) a checkbox by clicking it when it is not already as wanted.
fn check(s: &Session, id: &str, on: bool) {
    let el = s.find(&testid(id));
    let checked = s.script(
        "return document.querySelector(arguments[0]).checked",
        json!([testid(id)]),
    );
    if checked != json!(on) {
        el.click();
    }
}

fn text_is(s: &Session, id: &str, want: &str, secs: u64) {
    s.wait_until(
        &format!("{id} reads {want:?}"),
        "const el = document.querySelector(arguments[0]); return !!el && el.textContent.trim() === arguments[1];",
        json!([testid(id), want]),
        secs,
    );
}

#[test]
fn the_whole_workflow_in_the_real_app() {
    let model = judgelab_engine::default_model_path();
    assert!(
        model.is_file(),
        "the default model {} is missing: run `cargo xtask test` (it fetches it)",
        model.display()
    );
    let shots = root().join("target").join("e2e-screenshots");
    std::fs::create_dir_all(&shots).expect("screenshot folder");
    let shot = |s: &Session, name: &str| s.screenshot(&shots.join(format!("{name}.png")));
    let tmp = tempfile::tempdir().expect("temp dir");
    let db = tmp.path().join("judgelab.sqlite");
    let (display, _xvfb) = display();
    let app = Path::new(env!("CARGO_BIN_EXE_judgelab-app"));
    // Two calls of each local trial timed alone: the timing phase runs, in a tenth of the
    // default's time.
    let s = Session::start(
        app,
        &display,
        &[
            ("JUDGELAB_DB", &db),
            ("JUDGELAB_TIMED_CALLS", Path::new("2")),
        ],
    );

    // Datasets: a bad file is refused with its line; LLMBar Natural imports.
    s.find(&testid("nav-datasets")).click();
    let bad = tmp.path().join("bad.jsonl");
    std::fs::write(
        &bad,
        "{\"id\":\"1\",\"question\":\"q\",\"answer_a\":\"a\",\"answer_b\":\"b\",\"label\":\"A\"}\n{\"id\":\"2\",\"question\":\"q\"}\n",
    )
    .expect("bad file");
    s.find(&testid("import-path"))
        .fill(bad.to_str().expect("utf-8"));
    s.find(&testid("import-button")).click();
    let error = s.find(&testid("error-panel")).text();
    assert!(error.contains("bad.jsonl:2"), "error panel: {error}");
    let llmbar = root().join("datasets").join("llmbar_short.jsonl");
    s.find(&testid("import-path"))
        .fill(llmbar.to_str().expect("utf-8"));
    s.find(&testid("import-name")).fill("llmbar_short");
    s.find(&testid("import-button")).click();
    s.wait(
        "[data-testid=\"dataset-row\"][data-name=\"llmbar_short\"]",
        30,
    )
    .click();
    s.wait(&testid("item-row"), 15);
    s.wait_until(
        "the first items are shown",
        "return document.body.innerText.includes('llmbar_natural-0001')",
        json!([]),
        15,
    );
    shot(&s, "01-datasets");

    // A file as its authors published it, through the import wizard: the MT-Bench-style
    // Parquet fixture (answers inside conversations, the label in `winner`), its fields and
    // label values guessed, the whole file previewed, then imported with its mapping.
    let parquet = root().join("crates/core/tests/it/data/mt_bench_style.parquet");
    s.find(&testid("import-path"))
        .fill(parquet.to_str().expect("utf-8"));
    s.find(&testid("import-map")).click();
    s.wait(&testid("wizard-row"), 30);
    s.wait(&testid("map-label"), 30);
    let mapped = s.script(
        "return [...document.querySelectorAll(arguments[0])].map(e => [e.dataset.target ?? e.dataset.value, e.value]);",
        json!(["[data-testid=map-field], [data-testid=map-label]"]),
    );
    let pairs: Vec<(String, String)> = serde_json::from_value(mapped).expect("pairs");
    for want in [
        ("question", "conversation_a[0].content"),
        ("answer_a", "conversation_a[-1].content"),
        ("answer_b", "conversation_b[-1].content"),
        ("human_label", "winner"),
        ("model_a", "A"),
        ("model_b", "B"),
        ("tie", "tie"),
    ] {
        assert!(
            pairs.contains(&(want.0.to_string(), want.1.to_string())),
            "{want:?} not guessed: {pairs:?}"
        );
    }
    // "tie (bothbad)", MT-Bench's tie where both answers are bad, is a tie too.
    assert!(
        pairs
            .iter()
            .any(|(v, l)| v.starts_with("tie") && v != "tie" && l == "tie"),
        "{pairs:?}"
    );
    s.find(&testid("wizard-preview")).click();
    let preview = s.wait(&testid("wizard-preview-result"), 60).text();
    assert!(preview.contains("4 pairwise items"), "{preview}");
    assert_eq!(s.count(&testid("wizard-item")), 4);
    shot(&s, "01b-import-wizard");
    s.find(&testid("wizard-import")).click();
    s.wait(
        "[data-testid=\"dataset-row\"][data-name=\"mt_bench_style\"]",
        30,
    )
    .click();
    let mapping = s.wait(&testid("dataset-mapping"), 15).text();
    assert!(
        mapping.contains("answer_a=conversation_a[-1].content")
            && mapping.contains("human_label=winner"),
        "{mapping}"
    );
    shot(&s, "01c-dataset-mapped");
    s.find("[data-testid=\"dataset-row\"][data-name=\"llmbar_short\"]")
        .click();

    // Templates: the built-in pairwise template, previewed with its token count.
    s.find(&testid("nav-templates")).click();
    s.find(&testid("template-row")).click();
    s.wait_until(
        "the preview counts tokens",
        "const el = document.querySelector(arguments[0]); return !!el && /[0-9]+/.test(el.textContent);",
        json!([testid("token-count")]),
        60,
    );
    assert!(s.find(&testid("preview")).text().len() > 100);
    shot(&s, "02-templates");

    // Judges: the default model is there, and what local models compute on.
    s.find(&testid("nav-judges")).click();
    s.wait_until(
        "the default judge is listed",
        "return document.body.innerText.includes('SmolLM2')",
        json!([]),
        15,
    );
    let compute = s.wait(&testid("local-compute"), 15).text();
    assert!(
        compute.contains(&judgelab_engine::local_compute().summary()),
        "{compute}"
    );
    assert_eq!(s.count(&testid("unsupported-cpu")), 0);
    shot(&s, "03-judges");

    // Builder: temperature × few-shot on 8 items = 4 trials, raced on 6 dev items in rounds
    // of 2 (24 calls at most), the kept trials confirmed on the other 2.
    s.find(&testid("nav-builder")).click();
    s.find(&testid("exp-name")).fill("e2e-sweep");
    select(&s, "exp-dataset", "llmbar_short");
    check(&s, "exp-judge-default", true);
    check(&s, "exp-template-pairwise", true);
    s.find(&testid("exp-temperature")).fill("0, 0.7");
    s.find(&testid("exp-top_p")).fill("0.9");
    s.find(&testid("exp-max_tokens")).fill("4");
    s.find(&testid("exp-few_shot")).fill("0, 1");
    s.find(&testid("exp-items")).fill("8");
    s.find(&testid("exp-seed")).fill("42");
    select(&s, "exp-strategy", "race");
    select(&s, "exp-metric", "accuracy");
    s.find(&testid("exp-test")).fill("2");
    s.wait(&testid("exp-round"), 10).fill("2");
    s.wait(&testid("exp-min_items"), 10).fill("2");
    text_is(&s, "plan-trials", "4", 60);
    text_is(&s, "plan-calls", "24", 10);
    let race = s.wait(&testid("plan-race"), 10).text();
    assert!(
        race.contains("every trial judges the first 2 dev items, 3 rounds"),
        "{race}"
    );
    assert!(s.find(&testid("plan-test")).text().contains("2 items"));
    shot(&s, "04-builder");
    s.find(&testid("run-button")).click();

    // Runs: pause after the first verdicts (the calls in flight are recorded), resume (only
    // what is missing is judged), and go on until finished.
    s.wait(&testid("run-status"), 15);
    s.wait_until(
        "the first verdicts are stored",
        "const el = document.querySelector(arguments[0]); return !!el && Number(el.dataset.done) >= 2;",
        json!([testid("run-progress")]),
        300,
    );
    s.find(&testid("pause-button")).click();
    s.wait_until(
        "the run pauses",
        "const el = document.querySelector(arguments[0]); return !!el && el.dataset.state === 'paused';",
        json!([testid("run-status")]),
        120,
    );
    let paused_at = s
        .find(&testid("run-progress"))
        .attr("data-done")
        .and_then(|d| d.parse::<u32>().ok())
        .expect("progress has data-done");
    assert!(
        (2..26).contains(&paused_at),
        "paused at {paused_at} of at most 26"
    );
    s.find(&testid("resume-button")).click();
    s.wait_until(
        "the run finishes",
        "const el = document.querySelector(arguments[0]); if (el && el.dataset.state === 'failed') return true; return !!el && el.dataset.state === 'finished';",
        json!([testid("run-status")]),
        600,
    );
    let status = s.find(&testid("run-status"));
    assert_eq!(
        status.attr("data-state").as_deref(),
        Some("finished"),
        "run: {}",
        status.text()
    );
    shot(&s, "05-runs");

    // Results: four trials, four points; a point opens its trial, a verdict its prompt.
    s.find(&testid("nav-results")).click();
    select(&s, "results-experiment", "e2e-sweep");
    s.wait_until(
        "four points on the Pareto chart",
        "return document.querySelectorAll(arguments[0]).length === 4",
        json!([testid("pareto-point")]),
        60,
    );
    assert!(s.count(&format!("{} tbody tr", testid("trials-table"))) >= 4);
    // The pick is confirmed on the test split, and the race drawn round by round.
    let status = s.wait(&testid("selection-status"), 30).text();
    assert!(
        status.contains("kept after the 6 dev items and judged on 2 test items"),
        "{status}"
    );
    assert!(s.count(&testid("confirmed-row")) >= 1);
    assert!(s
        .find(&testid("selection-race"))
        .text()
        .contains("Raced in rounds of 2"));
    assert_eq!(s.count(&format!("{} svg", testid("race-chart"))), 1);
    let roles: Vec<String> = (0..4)
        .map(|i| {
            s.script(
                "return document.querySelectorAll(arguments[0])[arguments[1]].textContent",
                json!([
                    format!("{} [data-column=\"selection\"]", testid("trial-row")),
                    i
                ]),
            )
            .as_str()
            .unwrap_or_default()
            .to_string()
        })
        .collect();
    assert!(roles.iter().any(|r| r == "pick"), "{roles:?}");
    shot(&s, "06-results");
    s.script(
        "document.querySelector(arguments[0]).scrollIntoView()",
        json!([testid("selection-card")]),
    );
    shot(&s, "06-results-selection");
    // Local generations carry their tokens' log-probabilities: every trial has a
    // confidence, its calibration and what it decides alone.
    s.script(
        "document.querySelector(arguments[0]).scrollIntoView()",
        json!([testid("trust-card")]),
    );
    s.wait(&testid("trust-row"), 30);
    s.wait(&testid("reliability-chart"), 30);
    shot(&s, "06-results-trust");
    // On items without a label: a dataset of four, imported, judged by the pick from the
    // Results screen and corrected with its labelled items; the trial's metrics and exports
    // never see these verdicts (verdicts.csv below has the run's 32 rows).
    let unlabelled = tmp.path().join("unlabelled.jsonl");
    let lines: String = std::fs::read_to_string(&llmbar)
        .expect("llmbar")
        .lines()
        .skip(20)
        .take(4)
        .enumerate()
        .map(|(i, line)| {
            let mut item: serde_json::Value = serde_json::from_str(line).expect("json");
            item["id"] = format!("u-{i}").into();
            item["human_label"] = serde_json::Value::Null;
            format!("{item}\n")
        })
        .collect();
    std::fs::write(&unlabelled, lines).expect("unlabelled.jsonl");
    s.find(&testid("nav-datasets")).click();
    s.find(&testid("import-path"))
        .fill(unlabelled.to_str().expect("utf-8"));
    s.find(&testid("import-name")).fill("unlabelled");
    s.find(&testid("import-button")).click();
    s.wait(
        "[data-testid=\"dataset-row\"][data-name=\"unlabelled\"]",
        30,
    );
    s.find(&testid("nav-results")).click();
    select(&s, "results-experiment", "e2e-sweep");
    s.wait(&testid("estimate-card"), 30);
    s.script(
        "document.querySelector(arguments[0]).scrollIntoView()",
        json!([testid("estimate-card")]),
    );
    s.wait_until(
        "the estimate offers the dataset",
        "const el = document.querySelector(arguments[0]); return !!el && [...el.options].some(o => o.value === 'unlabelled')",
        json!([testid("estimate-dataset")]),
        30,
    );
    select(&s, "estimate-dataset", "unlabelled");
    s.find(&testid("estimate-start")).click();
    s.wait_until(
        "the estimate ends",
        "return !!document.querySelector(arguments[0]) || !!document.querySelector(arguments[1])",
        json!([testid("estimate-reading"), testid("estimate-error")]),
        300,
    );
    if s.count(&testid("estimate-error")) > 0 {
        panic!("estimate: {}", s.find(&testid("estimate-error")).text());
    }
    let reading = s.find(&testid("estimate-reading")).text();
    assert!(
        reading.contains("on 4 items without a label") && reading.contains("PPI++"),
        "{reading}"
    );
    assert!(s
        .find(&testid("estimate-judged"))
        .text()
        .contains("on unlabelled"));
    shot(&s, "06-results-estimate");
    // A panel of three trials, composed from the Results screen with no call: a row of its
    // own in the trials table, and a composed point on the Pareto chart beside its members.
    s.script(
        "document.querySelector(arguments[0]).scrollIntoView()",
        json!([testid("panels-card")]),
    );
    for i in 0..3 {
        s.script(
            "document.querySelectorAll(arguments[0])[arguments[1]].click()",
            json!([testid("panel-member"), i]),
        );
    }
    s.find(&testid("panel-name")).fill("vote3");
    s.find(&testid("panel-compose")).click();
    s.wait_until(
        "the panel is composed",
        "return !!document.querySelector(arguments[0]) || !!document.querySelector(arguments[1])",
        json!([testid("panel-row"), testid("panel-error")]),
        60,
    );
    if s.count(&testid("panel-error")) > 0 {
        panic!("panel: {}", s.find(&testid("panel-error")).text());
    }
    let reading = s.find(&testid("panel-reading")).text();
    assert!(reading.starts_with("vote3: majority of #"), "{reading}");
    assert_eq!(s.count(&testid("panel-trial-row")), 1);
    s.wait_until(
        "the panel on the Pareto chart",
        "return [...document.querySelectorAll('.svg-layer')].some(el => el.textContent.includes('vote3 panel'))",
        json!([]),
        30,
    );
    assert_eq!(
        s.count(&testid("pareto-point")),
        4,
        "its members' points stay"
    );
    shot(&s, "06-results-panel");
    // Two trials compared: the paired test, and how their verdicts drifted (the flip
    // matrix counts every call both made).
    s.script(
        "document.querySelector(arguments[0]).scrollIntoView({block: 'center'})",
        json!([testid("compare-button")]),
    );
    s.find(&testid("compare-button")).click();
    s.wait(&testid("compare-result"), 60);
    let drift = s.find(&testid("compare-drift")).text();
    assert!(drift.contains(" calls flipped from #"), "{drift}");
    assert_eq!(s.count(&testid("compare-matrix")), 1);
    // A call whose belief moved most opens both trials' verdicts on it, side by side.
    s.script(
        "document.querySelector(arguments[0]).scrollIntoView({block: 'start'})",
        json!([testid("compare-card")]),
    );
    shot(&s, "06-results-compare");
    s.wait(&testid("moved-row"), 10).click();
    s.wait(&testid("compare-verdicts"), 30);
    assert_eq!(
        s.count(&format!(
            "{} {}",
            testid("compare-verdicts"),
            testid("verdict-detail")
        )),
        2
    );
    s.script(
        "document.querySelector(arguments[0]).scrollIntoView({block: 'start'})",
        json!([testid("compare-verdicts")]),
    );
    shot(&s, "06-results-compare-verdicts");
    // The same point worded as a paraphrase, in an experiment of its own on the same
    // items: the second judge comes from it.
    let worded = tmp.path().join("e2e-paraphrase.toml");
    std::fs::write(
        &worded,
        format!(
            "name = \"e2e-paraphrase\"\ndataset = {:?}\n[judge]\ntemplate = \"pairwise_paraphrase_1\"\n[sweep]\ntemperature = 0\ntop_p = 0.9\nmax_tokens = 4\nfew_shot = 1\nseed = 42\n[limits]\nitems = 8\ntest = 2\n",
            llmbar.to_str().expect("utf-8")
        ),
    )
    .expect("experiment file");
    run_file(&db, &worded);
    s.find(&testid("nav-datasets")).click();
    s.find(&testid("nav-results")).click();
    select(&s, "results-experiment", "e2e-sweep");
    s.wait_until(
        "the experiments on the same dataset",
        "const el = document.querySelector(arguments[0]); return !!el && [...el.options].some(o => o.value === 'e2e-paraphrase');",
        json!([testid("compare-other")]),
        60,
    );
    select(&s, "compare-other", "e2e-paraphrase");
    s.wait_until(
        "the paraphrase's trial",
        "const el = document.querySelector(arguments[0]); return !!el && el.options.length === 1 && el.value !== '';",
        json!([testid("compare-second")]),
        60,
    );
    s.find(&testid("compare-button")).click();
    s.wait(&testid("compare-result"), 60);
    let drift = s.find(&testid("compare-drift")).text();
    assert!(
        drift.contains(" calls flipped from #") && drift.contains("to e2e-paraphrase #"),
        "{drift}"
    );
    s.script(
        "document.querySelector(arguments[0]).scrollIntoView({block: 'start'})",
        json!([testid("compare-card")]),
    );
    shot(&s, "06-results-compare-paraphrase");
    // Kept for the report: Export writes it as a section.
    s.find(&testid("compare-keep")).click();
    s.script(
        "document.querySelector(arguments[0]).scrollIntoView({block: 'center'})",
        json!([testid("pareto-point")]),
    );
    s.find(&testid("pareto-point")).click();
    s.wait(&testid("trial-view"), 30);
    s.wait(&testid("verdict-row"), 30).click();
    let detail = s.wait(&testid("verdict-detail"), 30).text();
    assert!(detail.len() > 200, "verdict detail: {detail}");
    shot(&s, "07-verdict");
    // The trial's judge as a judge card.
    let cards = tmp.path().join("card");
    s.find(&testid("judge-card-dir"))
        .fill(cards.to_str().expect("utf-8"));
    s.find(&testid("export-judge")).click();
    s.wait(&testid("judge-card-written"), 60);
    let card: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(cards.join("judge.json")).expect("judge.json"),
    )
    .expect("a card");
    assert_eq!(card["judgelab_card"], 1);
    assert!(cards.join("judge.md").is_file());

    // Export: the report folder, with its files on disk.
    if s.count(&testid("nav-export")) > 0 {
        s.find(&testid("nav-export")).click();
    }
    let out = tmp.path().join("report");
    s.find(&testid("export-dir"))
        .fill(out.to_str().expect("utf-8"));
    s.find(&testid("export-report")).click();
    s.wait_until(
        "the report is written",
        "const el = document.querySelector(arguments[0]); return !!el && el.textContent.includes('report.html');",
        json!([testid("export-files")]),
        120,
    );
    assert_eq!(
        s.count(&format!("{} li", testid("export-pairs"))),
        1,
        "the comparison kept in Results"
    );
    shot(&s, "08-export");
    let md = std::fs::read_to_string(out.join("report.md")).expect("report.md");
    assert!(
        md.contains("## Compared: e2e-sweep:") && md.contains(" and e2e-paraphrase:"),
        "{md}"
    );
    // What the screen lists is on disk (the CLI's test checks the report's every file).
    let listed = s.script(
        "return document.querySelector(arguments[0]).textContent",
        json!([testid("export-files")]),
    );
    let listed = listed.as_str().expect("text");
    for file in [
        "report.html",
        "trials.csv",
        "verdicts.csv",
        "pareto-quality-cost.png",
    ] {
        assert!(listed.contains(file), "{file} is not listed: {listed}");
        assert!(out.join(file).is_file(), "{file} was not exported");
    }
    let trials = std::fs::read_to_string(out.join("trials.csv")).expect("trials.csv");
    // A header, the four trials and the panel.
    assert_eq!(trials.lines().count(), 6, "{trials}");
    let verdicts = csv::Reader::from_path(out.join("verdicts.csv"))
        .expect("verdicts.csv")
        .records()
        .count();
    assert_eq!(verdicts, 32, "one row per call");

    labelling_queue(&s, tmp.path(), &shot);

    mixed_judges(&s, tmp.path(), &shot);

    rubric_criteria(&s, &db, tmp.path(), &shot);

    // Closing the window mid-run loses nothing: the calls in flight are recorded first.
    s.find(&testid("nav-builder")).click();
    s.find(&testid("exp-name")).fill("e2e-close");
    check(&s, "exp-remote-smollm2-server", false);
    s.find(&testid("exp-temperature")).fill("0, 0.7");
    s.find(&testid("exp-few_shot")).fill("0, 1");
    s.find(&testid("exp-items")).fill("8");
    text_is(&s, "plan-calls", "32", 60);
    s.find(&testid("run-button")).click();
    s.wait_until(
        "the second run stores verdicts",
        "const el = document.querySelector(arguments[0]); return !!el && Number(el.dataset.done) >= 2;",
        json!([testid("run-progress")]),
        300,
    );
    let shown = s
        .find(&testid("run-progress"))
        .attr("data-done")
        .and_then(|d| d.parse::<usize>().ok())
        .expect("progress has data-done");
    s.close_window();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while app_running(app) {
        assert!(
            std::time::Instant::now() < deadline,
            "the app did not exit after its window closed"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    s.quit();
    let stored = tokio::runtime::Runtime::new()
        .expect("runtime")
        .block_on(async {
            let store = judgelab_store::Store::open(&db).await.expect("database");
            let e = store
                .experiment_by_name("e2e-close")
                .await
                .expect("query")
                .expect("the closed run's experiment is stored");
            let n = store.count_verdicts(e.id).await.expect("count");
            store.close().await;
            n
        });
    assert!(
        (shown..32).contains(&stored),
        "{stored} verdicts stored after closing at {shown} of 32"
    );
}

/// The labelling queue of the raced experiment: five items labelled with the keyboard, each
/// item's verdicts shown only once it is labelled; the Results screen's metrics against the
/// new labels, with the people's agreement beside the pick's; the labels exported as JSONL
/// and imported again as a dataset.
fn labelling_queue(s: &Session, dir: &Path, shot: &dyn Fn(&Session, &str)) {
    s.find(&testid("nav-label")).click();
    s.find(&testid("label-annotator")).fill("e2e");
    s.wait_until(
        "the queue is e2e's",
        "const el = document.querySelector(arguments[0]); return !!el && el.textContent.includes('e2e has labelled 0 of');",
        json!([testid("label-progress")]),
        30,
    );
    s.wait(&testid("label-item"), 15);
    // The keys go to the page, not to the annotator's field.
    s.script(
        "document.activeElement && document.activeElement.blur(); return true",
        json!([]),
    );
    assert_eq!(
        s.count(&testid("label-last")),
        0,
        "no verdict is shown before a label"
    );
    let mut labelled = Vec::new();
    for (i, key) in ["a", "b", "a", "t", "b"].into_iter().enumerate() {
        let item = s
            .find(&testid("label-item"))
            .attr("data-item")
            .expect("the item shown");
        s.press(key);
        s.wait_until(
            "the queue moves on",
            "const el = document.querySelector(arguments[0]); return !!el && el.dataset.item !== arguments[1];",
            json!([testid("label-item"), item]),
            30,
        );
        let last = s.find(&testid("label-last")).text();
        assert!(last.contains(&item), "{last}");
        assert!(last.contains("The trials said: #"), "{last}");
        let given = s.find(&testid("label-given")).text();
        let want = if key == "t" {
            "tie".to_string()
        } else {
            key.to_uppercase()
        };
        assert_eq!(given, want, "item {i}");
        labelled.push(item);
    }
    text_is(
        s,
        "label-progress",
        "e2e has labelled 5 of 40 items of llmbar_short",
        15,
    );
    shot(s, "09-label");

    // Results against e2e's labels: the metrics change, and the people's agreement shows.
    s.find(&testid("nav-results")).click();
    s.wait(&testid("trial-row"), 60);
    let before = s.find(&testid("trials-table")).text();
    select(s, "results-labels", "annotations|e2e");
    s.wait_until(
        "the metrics are against e2e's labels",
        "const el = document.querySelector(arguments[0]); return !!el && el.textContent.includes(\"e2e's labels (5 items carry one)\");",
        json!([testid("results-labels-description")]),
        60,
    );
    let after = s.find(&testid("trials-table")).text();
    assert_ne!(
        before, after,
        "the trials table is the same against other labels"
    );
    s.wait(&testid("humans-pair"), 30);
    let pair = s.script(
        "return [...document.querySelector(arguments[0]).cells].map(c => c.textContent.trim())",
        json!([testid("humans-pair")]),
    );
    assert_eq!(pair[0], "dataset and e2e", "{pair}");
    assert_eq!(pair[1], "5", "{pair}");
    assert!(s.count(&testid("humans-judge")) >= 1);
    s.script(
        "document.querySelector(arguments[0]).scrollIntoView()",
        json!([testid("humans-card")]),
    );
    shot(s, "10-results-labels");
    select(s, "results-labels", "original|");
    s.wait_until(
        "the metrics are against the dataset's labels again",
        "const el = document.querySelector(arguments[0]); return !!el && el.textContent.includes(\"the dataset's labels\");",
        json!([testid("results-labels-description")]),
        60,
    );

    // The labels as a dataset file, imported again.
    s.find(&testid("nav-label")).click();
    let file = dir.join("e2e-labels.jsonl");
    s.find(&testid("label-export-path"))
        .fill(file.to_str().expect("utf-8"));
    select(s, "label-export-who", "e2e");
    s.find(&testid("label-export")).click();
    let done = s.wait(&testid("label-exported"), 30).text();
    assert!(done.contains("wrote 40 items (40 with a label)"), "{done}");
    let text = std::fs::read_to_string(&file).expect("the labels file");
    for id in &labelled {
        assert!(
            text.lines()
                .any(|l| l.contains(&format!("\"id\":\"{id}\""))
                    && l.contains("\"annotator\":\"e2e\"")),
            "{id} is not exported with e2e's label"
        );
    }
    s.find(&testid("nav-datasets")).click();
    s.find(&testid("import-path"))
        .fill(file.to_str().expect("utf-8"));
    s.find(&testid("import-name")).fill("e2e-labels");
    s.find(&testid("import-button")).click();
    s.wait(
        "[data-testid=\"dataset-row\"][data-name=\"e2e-labels\"]",
        30,
    );
}

/// A local and a remote judge in one experiment: the default model, and the same model
/// served by llama.cpp's real `llama-server` (four slots), added under Judges. Run before the server is
/// up, the remote calls fail and the run card says why; resumed with the server up, only
/// they are judged; the Pareto chart shows a point for each judge, and running it again
/// calls nothing.
/// A rubric experiment, rubric against checklist on Topical-Chat USR's criteria (run by the
/// engine on the app's database while the app is open): the Results screen reads it on each
/// verdict's aggregate, and, chosen in its criterion select, on one criterion against that
/// criterion's labels; every figure follows.
/// Runs the experiment `file` into the app's database beside the app (no timed calls).
fn run_file(db: &Path, file: &Path) {
    tokio::runtime::Runtime::new()
        .expect("runtime")
        .block_on(async {
            let store = judgelab_store::Store::open(db).await.expect("database");
            let options = judgelab_engine::RunOptions {
                timed_calls: 0,
                ..Default::default()
            };
            let done = judgelab_engine::run_experiment(&store, file, options, &mut |_| {})
                .await
                .unwrap_or_else(|e| panic!("{} runs: {e:#}", file.display()));
            assert_eq!(done.n_errors, 0);
            store.close().await;
        });
}

fn rubric_criteria(s: &Session, db: &Path, dir: &Path, shot: &dyn Fn(&Session, &str)) {
    let topical = root().join("datasets").join("topical_chat_usr.jsonl");
    let file = dir.join("e2e-rubric.toml");
    std::fs::write(
        &file,
        format!(
            "name = \"e2e-rubric\"\ndataset = {:?}\n[judge]\ntemplate = \"dialogue_rubric\"\n[sweep]\nmax_tokens = 60\nconstraint = \"grammar\"\nstyle = [\"rubric\", \"checklist\"]\n[limits]\nitems = 6\n",
            topical.to_str().expect("utf-8")
        ),
    )
    .expect("experiment file");
    run_file(db, &file);
    s.find(&testid("nav-datasets")).click();
    s.find(&testid("nav-results")).click();
    select(s, "results-experiment", "e2e-rubric");
    s.wait_until(
        "the rubric's criteria can be chosen",
        "const el = document.querySelector(arguments[0]); return !!el && el.options.length === 6;",
        json!([testid("results-criterion")]),
        60,
    );
    s.wait(&testid("trial-row"), 60);
    assert_eq!(s.count(&testid("trial-row")), 2);
    let aggregate = s.find(&testid("trials-table")).text();
    assert!(aggregate.contains("coherence: Spearman"), "{aggregate}");
    shot(s, "15-results-rubric");
    select(s, "results-criterion", "coherence");
    s.wait_until(
        "the results are read on coherence",
        "const el = document.querySelector(arguments[0]); return !!el && el.textContent.includes(\"the dataset's labels on coherence (1-3)\");",
        json!([testid("results-labels-description")]),
        60,
    );
    let coherence = s.find(&testid("trials-table")).text();
    assert_ne!(aggregate, coherence, "the table follows the criterion");
    assert_eq!(s.count(&testid("trial-row")), 2);
    shot(s, "16-results-criterion");
    select(s, "results-criterion", "");
    s.wait_until(
        "the results are read on each verdict's aggregate again",
        "const el = document.querySelector(arguments[0]); return !!el && !el.textContent.includes(\"coherence\");",
        json!([testid("results-labels-description")]),
        60,
    );
}

fn mixed_judges(s: &Session, dir: &Path, shot: &dyn Fn(&Session, &str)) {
    // The endpoint is added before its server starts, as happens: the first run fails its
    // remote calls and says why.
    let port = judgelab_testkit::free_port();
    s.find(&testid("nav-judges")).click();
    s.find(&testid("remote-name")).fill("smollm2-server");
    s.find(&testid("remote-url"))
        .fill(&format!("http://127.0.0.1:{port}/v1"));
    s.find(&testid("remote-model")).fill("smollm2");
    // One call per slot of the server.
    s.find(&testid("remote-concurrency")).fill("4");
    s.find(&testid("add-remote-judge")).click();
    s.wait(
        "[data-testid=\"remote-row\"][data-name=\"smollm2-server\"]",
        15,
    );
    shot(s, "09-judges-remote");

    // Builder: one point per judge on 4 items = 2 trials, 8 calls.
    s.find(&testid("nav-builder")).click();
    s.find(&testid("exp-name")).fill("e2e-mixed");
    check(s, "exp-judge-default", true);
    check(s, "exp-remote-smollm2-server", true);
    s.find(&testid("exp-temperature")).fill("0");
    s.find(&testid("exp-few_shot")).fill("0");
    s.find(&testid("exp-items")).fill("4");
    // The draft keeps the first experiment's race: this one is a grid without a test split.
    select(s, "exp-strategy", "grid");
    // WebDriver's clear fires no input event, which is what the form listens to.
    s.script(
        "const el = document.querySelector(arguments[0]);
         el.value = '';
         el.dispatchEvent(new Event('input', { bubbles: true }));",
        json!([testid("exp-test")]),
    );
    text_is(s, "plan-trials", "2", 60);
    text_is(s, "plan-calls", "8", 10);
    shot(s, "10-builder-mixed");
    // A run's card says how often it was started and, once it ends, what it judged.
    let card = "[data-testid=\"run-card\"][data-name=\"e2e-mixed\"]";
    let generation = || {
        s.script(
            "const el = document.querySelector(arguments[0]); return el ? Number(el.dataset.generation) : -1;",
            json!([card]),
        )
        .as_i64()
        .expect("a number")
    };
    let run = |what: &str| -> u32 {
        let before = generation();
        s.find(&testid("nav-builder")).click();
        text_is(s, "plan-calls", "8", 60);
        s.find(&testid("run-button")).click();
        s.wait_until(
            what,
            "const el = document.querySelector(arguments[0]); if (!el || Number(el.dataset.generation) <= arguments[1]) return false; const st = el.querySelector('[data-testid=run-status]').dataset.state; return st === 'finished' || st === 'failed';",
            json!([card, before]),
            600,
        );
        let status = s.find(&format!("{card} {}", testid("run-status")));
        assert_eq!(
            status.attr("data-state").as_deref(),
            Some("finished"),
            "run: {}",
            status.text()
        );
        s.find(card)
            .attr("data-judged-now")
            .and_then(|d| d.parse::<u32>().ok())
            .expect("the card says what the run judged")
    };
    // The local calls are judged; the remote ones fail, with their cause on the card.
    assert_eq!(run("the run without its server finishes"), 8);
    s.wait(&format!("{card} {}", testid("run-failures")), 15);
    let failures = s.script(
        "return document.querySelector(arguments[0]).textContent",
        json!([format!("{card} {}", testid("run-failures"))]),
    );
    let failures = failures.as_str().expect("text");
    assert!(
        failures.contains("4 ×") && failures.contains(&format!("127.0.0.1:{port}")),
        "failed calls: {failures}"
    );
    shot(s, "11-runs-failed");

    // The server up: running again judges only the four remote calls.
    let server = LlamaServer::start_on(
        dir,
        &judgelab_engine::default_model_path(),
        port,
        Slots::default(),
    );
    assert_eq!(run("the resumed run finishes"), 4);
    assert_eq!(s.count(&format!("{card} {}", testid("run-failures"))), 0);
    let posts = server.posts();
    assert_eq!(posts, 4, "requests that reached the server");
    shot(s, "12-runs-mixed");

    // Results: both judges on one Pareto chart.
    s.find(&testid("nav-results")).click();
    select(s, "results-experiment", "e2e-mixed");
    s.wait_until(
        "two points on the Pareto chart",
        "return document.querySelectorAll(arguments[0]).length === 2",
        json!([testid("pareto-point")]),
        60,
    );
    let labels = s.script(
        "return [...document.querySelectorAll(arguments[0])].map(el => el.textContent.trim()).join(' | ')",
        json!([format!("{} .label-cell", testid("trial-row"))]),
    );
    let labels = labels.as_str().expect("text");
    assert!(
        labels.contains("=default") && labels.contains("=smollm2-server"),
        "trial labels: {labels}"
    );
    shot(s, "13-results-mixed");

    // Under load: a ramp of the remote trial, levels 1 and 2 of four timed requests each,
    // with live progress; the latest ramp's table and the report's two charts appear.
    let remote = s.script(
        "return [...document.querySelector(arguments[0]).options].find(o => o.textContent.includes('smollm2-server')).value",
        json!([testid("load-trial")]),
    );
    select(s, "load-trial", remote.as_str().expect("a trial id"));
    s.find(&testid("load-levels")).fill("1, 2");
    s.find(&testid("load-requests")).fill("4");
    s.find(&testid("load-start")).click();
    s.wait_until(
        "the ramp's summary",
        "const el = document.querySelector(arguments[0]); return !!el && /Knee at|No knee/.test(el.textContent) && !!document.querySelector(arguments[1] + ' svg') && !!document.querySelector(arguments[2] + ' svg')",
        json!([testid("load-summary"), testid("load-latency"), testid("load-throughput")]),
        300,
    );
    let message = s.find(&testid("load-message")).text();
    assert!(message.starts_with("Ramp finished"), "{message}");
    // Each level's two warm-up requests and four timed ones reached the server.
    assert_eq!(server.posts(), posts + 2 * (2 + 4));
    let posts = server.posts();
    s.script(
        "document.querySelector(arguments[0]).scrollIntoView({ block: 'start' })",
        json!([testid("load-card")]),
    );
    shot(s, "14-results-load");

    // Improve this judge: this experiment has no test split, so the plan says what the
    // search needs before anything is judged.
    s.find(&testid("align-plan")).click();
    let error = s.wait(&testid("align-error"), 30).text();
    assert!(error.contains("a test split"), "{error}");
    s.script(
        "document.querySelector(arguments[0]).scrollIntoView({ block: 'start' })",
        json!([testid("align-card")]),
    );
    shot(s, "17-results-align");

    // Running it again resumes it: everything is stored, nothing is called.
    assert_eq!(run("the complete run finishes"), 0);
    assert_eq!(
        server.posts(),
        posts,
        "a resumed run called the server again"
    );
}

/// Whether a process of the app's binary is alive.
fn app_running(app: &Path) -> bool {
    std::process::Command::new("pgrep")
        .arg("-f")
        .arg(app)
        .output()
        .is_ok_and(|o| o.status.success())
}
