//! `judgelab align` on the real SmolLM2: from an exact pairwise trial, within a budget of
//! calls; its plan, its candidates (one a proposer's, and sampling moves that cost no
//! call), the races that stop losers early,
//! the test split's confirmation, a rerun that spends nothing, the files it writes, no
//! test item in any proposer prompt, and its best judge run again as an ordinary
//! experiment with the dev score the lineage says.

use serde_json::Value;

use super::{check_invalid, experiment, lines, llmbar_short, text, Env};

const SWEEP: &str = "temperature = [0.0]\nmax_tokens = [1]\nseed = 42\n[limits]\npool = 5\ntest = 15\n[selection]\nmetric = \"accuracy\"\nstrategy = \"race\"\nround = 5\nmin_items = 10";

fn last_json(stdout: &[u8]) -> Value {
    let out = text(stdout);
    serde_json::from_str(out.lines().last().unwrap()).unwrap()
}

#[test]
fn align_searches_within_its_budget_and_confirms_on_the_test_split() {
    let env = Env::new();
    // Each call decoded alone, as the alignment's candidates are: the start's copied
    // verdicts are what its judge gives run again too.
    let exp = experiment(&env, "al", "reproducible = true", SWEEP);
    let out = env.run(&["run", exp.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let trial = env.show("al")["trials"][0]["id"]
        .as_i64()
        .unwrap()
        .to_string();

    // The plan: the start's verdicts are stored; a generation is a rewrite, an example
    // set and the debiased order (twice the calls) on 20 dev items, and the confirmation
    // up to 15 + 30.
    let align = |extra: &[&str]| {
        let mut args = vec!["align", "al", "--trial", trial.as_str()];
        args.extend_from_slice(extra);
        env.run(&args)
    };
    let out = align(&["--budget-calls", "200", "--plan"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("the start 0 calls, each generation up to 80 judge calls and 1 proposer calls, the confirmation on the test split up to 45: at most 126 calls"),
        "{}",
        text(&out.stdout)
    );
    check_invalid(
        &env,
        &["align", "al", "--trial", &trial, "--budget-calls", "100"],
        &[
            "a budget of 100 calls does not cover one generation",
            "126 calls",
        ],
    );

    let dir = env.dir.path().join("aligned");
    let args = [
        "--budget-calls",
        "200",
        "--json",
        "--out",
        dir.to_str().unwrap(),
    ];
    let out = align(&args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let said = last_json(&out.stdout);
    let spent = said["spent_calls"].as_u64().unwrap();
    assert!(spent <= 126, "{said}");
    assert!(said["candidates"].as_u64().unwrap() >= 3, "{said}");
    let verdict = said["verdict"].as_str().unwrap();
    assert!(
        ["confirmed", "not confirmed"].contains(&verdict)
            || verdict.starts_with("nothing to confirm"),
        "{said}"
    );
    let table = text(&out.stdout);
    assert!(table.contains("test (15 items): start "), "{table}");

    // Run again: nothing is spent twice, and it ends the same.
    let again = last_json(&align(&args).stdout);
    assert_eq!(again, said);

    // The files, and what the proposer saw: dev mistakes, never a test item.
    let lineage: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("lineage.json")).unwrap()).unwrap();
    let candidates = lineage["candidates"].as_array().unwrap();
    let proposed: Vec<&Value> = candidates
        .iter()
        .filter(|c| c["move"] == "rewrite")
        .collect();
    assert!(!proposed.is_empty(), "{lineage}");
    assert!(candidates.iter().any(|c| c["move"] == "order"), "{lineage}");
    // Sampling moves read their verdicts from their child's exact passes: while the child
    // races beside them, they cost no call of their own.
    let sampling: Vec<&Value> = candidates
        .iter()
        .filter(|c| c["move"] == "sampling")
        .collect();
    assert!(!sampling.is_empty(), "{lineage}");
    for c in &sampling {
        let parent = &candidates[c["parent"].as_u64().unwrap() as usize];
        assert_ne!(parent["move"], "sampling", "{lineage}");
        if c["dev_items"].as_u64() <= parent["dev_items"].as_u64() {
            assert_eq!(c["calls"], 0, "{lineage}");
        }
    }
    let items: Vec<Value> = lines(llmbar_short())
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let test: Vec<&str> = lineage["test_items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(test.len(), 15);
    for c in &proposed {
        let prompt = c["proposal"]["prompt"].to_string();
        for item in items
            .iter()
            .filter(|i| test.contains(&i["id"].as_str().unwrap()))
        {
            let question = item["question"].as_str().unwrap();
            let shown = serde_json::to_string(&question[..question.len().min(80)]).unwrap();
            assert!(
                !prompt.contains(shown.trim_matches('"')),
                "test item {} in {prompt}",
                item["id"]
            );
        }
        assert!(prompt.contains("It got these cases wrong"), "{prompt}");
    }
    for name in ["best.jinja", "judge.json", "judge.md"] {
        assert!(dir.join(name).is_file(), "{name}");
    }

    // The alignment's report opens with its section: the chart, the candidates, the test.
    let report = env.dir.path().join("report");
    let alignment = lineage["alignment"].as_str().unwrap();
    let out = env.run(&["report", alignment, "--out", report.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let md = std::fs::read_to_string(report.join("report.md")).unwrap();
    assert!(md.contains("## Alignment"), "{md}");
    assert!(md.contains("test (15 items): start "), "{md}");
    assert!(report.join("alignment.png").is_file());

    // The best judge as the lineage has it is a trial of the alignment's experiment, which
    // `show` reads as any other: its dev score is the lineage's.
    let best = &candidates[lineage["best"].as_u64().unwrap() as usize];
    let shown = env.show(lineage["alignment"].as_str().unwrap());
    let trial = shown["trials"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == best["trial_id"])
        .unwrap();
    assert_eq!(trial["accuracy"], best["dev"]["accuracy"], "{trial}");
    // Run again from best.jinja and its parameters in an ordinary experiment whose judge
    // decodes each call alone, it is the same judge (its identity) with the same dev score.
    let p = &best["params"];
    let sweep = SWEEP.replace(
        "temperature = [0.0]",
        &format!(
            "temperature = [{}]\ntop_p = [{}]\norder = [\"{}\"]\nfew_shot = [{}]\nfew_shot_set = [{}]",
            p["temperature"],
            p["top_p"],
            p["order"].as_str().unwrap_or("ab"),
            p["few_shot"].as_u64().unwrap_or(0),
            p["few_shot_set"].as_u64().unwrap_or(0)
        ),
    );
    let template = dir.join("best.jinja");
    let again = env.file(
        "again.toml",
        std::fs::read_to_string(experiment(&env, "again", "", &sweep))
            .unwrap()
            .replace(
                "template = \"pairwise\"",
                &format!(
                    "template = {:?}\nreproducible = true",
                    template.to_str().unwrap()
                ),
            ),
    );
    let out = env.run(&["run", again.to_str().unwrap(), "--plan"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = env.run(&["run", again.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let rerun = &env.show("again")["trials"][0];
    assert_eq!(rerun["judge_identity"], trial["judge_identity"], "{rerun}");
    assert_eq!(rerun["accuracy"], best["dev"]["accuracy"], "{rerun} {best}");
    assert_eq!(rerun["n_errors"], best["dev"]["n_errors"], "{rerun} {best}");
}

/// Killed (SIGKILL) again and again while it searches, then run to its end: it keeps to its
/// plan, each candidate is made once, and what it stored is not judged again (every
/// verdict of the alignment is one call: none is stored twice).
#[test]
fn align_killed_and_run_again_keeps_to_its_budget() {
    let env = Env::new();
    let exp = experiment(&env, "ak", "", SWEEP);
    let out = env.run(&["run", exp.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let trial = env.show("ak")["trials"][0]["id"]
        .as_i64()
        .unwrap()
        .to_string();
    let args = [
        "align",
        "ak",
        "--trial",
        &trial,
        "--budget-calls",
        "200",
        "--json",
    ];
    for seconds in [4, 9, 15] {
        let mut child = env
            .cmd(&args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_secs(seconds));
        child.kill().unwrap();
        child.wait().unwrap();
    }
    let out = env.run(&args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let said = last_json(&out.stdout);
    assert!(said["spent_calls"].as_u64().unwrap() <= 126, "{said}");
    assert!(said["stopped"].is_null(), "{said}");
    // One trial per candidate, and the verdicts of each are one per item and order.
    let shown = env.show(&format!("ak-align-{trial}"));
    let trials = shown["trials"].as_array().unwrap();
    assert_eq!(
        trials.len() as u64,
        said["candidates"].as_u64().unwrap(),
        "{said}"
    );
    let again = last_json(&env.run(&args).stdout);
    assert_eq!(again, said);
}
