//! Judge cards on the real SmolLM2: a tuned trial exported as judge.json and judge.md runs
//! unchanged as the one judge of an experiment on other items — the same prompts, and its
//! trial carries the card's judge identity — and a card edited by hand, or an experiment
//! that sweeps what the card fixes, is refused.

use serde_json::Value;

use super::{check_invalid, experiment, lines, llmbar, text, Env};

#[test]
fn a_judge_card_runs_unchanged_on_other_items() {
    let env = Env::new();
    let tuned = experiment(
        &env,
        "tuned",
        "",
        "temperature = 0.0\ntop_p = 0.9\nmax_tokens = 4\nfew_shot = [0, 1]\nseed = 42\n[limits]\nitems = 4",
    );
    let out = env.run(&["run", tuned.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let shown = env.show("tuned");
    let trial = shown["trials"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["params"]["few_shot"] == 1)
        .unwrap()
        .clone();
    let identity = trial["judge_identity"].as_str().unwrap().to_string();
    // Where its calls were computed: this build has no GPU backend.
    assert_eq!(trial["device"], "CPU");

    let dir = env.dir.path().join("card");
    let id = trial["id"].to_string();
    let out = env.run(&[
        "export-judge",
        "tuned",
        "--trial",
        &id,
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let card: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("judge.json")).unwrap()).unwrap();
    assert_eq!(card["identity"], identity.as_str());
    let example = trial["examples"][0].as_str().unwrap();
    assert_eq!(card["judge"]["examples"][0]["id"], example);
    assert_eq!(card["judge"]["template"]["name"], "pairwise");
    assert_eq!(card["judge"]["model"]["quantization"], "Q4_1");
    assert_eq!(card["measured"]["metric"], "kappa");
    assert_eq!(card["measured"]["dev"]["n"], 4);
    assert_eq!(card["measured"]["dev"]["value"], trial["kappa"]);
    let md = std::fs::read_to_string(dir.join("judge.md")).unwrap();
    assert!(md.contains(&format!("Identity `{identity}`")), "{md}");
    assert!(md.contains("| kappa, dev (95% CI) |"), "{md}");
    assert!(md.contains("| Computed on | CPU |"), "{md}");

    // The items the tuned trial judged, under other ids, and one more: what it was shown
    // of them is the same, so the card's judge sends the same prompts.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let stored = |trial_id: i64| {
        runtime.block_on(async {
            let store = judgelab_store::Store::open(&env.db()).await.unwrap();
            store.verdicts(trial_id).await.unwrap()
        })
    };
    let tuned_calls = stored(trial["id"].as_i64().unwrap());
    let lines = lines(llmbar());
    let row = |id: &str| -> Value {
        lines
            .iter()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .find(|v| v["id"] == id)
            .unwrap()
    };
    let mut rows: Vec<String> = tuned_calls
        .iter()
        .map(|v| {
            let mut r = row(&v.item_id);
            r["id"] = format!("other-{}", v.item_id).into();
            r.to_string()
        })
        .collect();
    rows.push(lines[70].clone());
    env.file("other.jsonl", rows.join("\n"));
    let rerun = env.file(
        "rerun.toml",
        "name = \"rerun\"\ndataset = \"other.jsonl\"\n[[judges]]\nname = \"tuned\"\ncard = \"card/judge.json\"\n[limits]\nitems = 5\n",
    );
    let out = env.run(&["run", rerun.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let shown = env.show("rerun");
    let trials = shown["trials"].as_array().unwrap();
    assert_eq!(trials.len(), 1);
    let again = &trials[0];
    assert_eq!(again["judge_identity"], identity.as_str());
    assert_eq!(again["examples"][0], format!("card:{example}"));
    assert_eq!(again["params"]["temperature"], 0.0);
    assert_eq!(again["params"]["max_tokens"], 4);
    assert_eq!(shown["experiment"]["few_shot_pool"], Value::Array(vec![]));
    assert_eq!(again["n"], 5);
    let rerun_calls = stored(again["id"].as_i64().unwrap());
    for v in &tuned_calls {
        let other = rerun_calls
            .iter()
            .find(|r| r.item_id == format!("other-{}", v.item_id))
            .unwrap();
        assert_eq!(other.prompt_hash, v.prompt_hash, "{}", v.item_id);
    }
    // The card of the rerun is the same judge.
    let out = env.run(&[
        "export-judge",
        "rerun",
        "--trial",
        &again["id"].to_string(),
        "--out",
        env.dir.path().join("again").to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let card_again: Value = serde_json::from_str(
        &std::fs::read_to_string(env.dir.path().join("again/judge.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(card_again["identity"], identity.as_str());
    assert_eq!(card_again["judge"]["examples"][0]["id"], example);

    // Edited by hand: refused, as is sweeping what the card fixes.
    let edited = std::fs::read_to_string(dir.join("judge.json"))
        .unwrap()
        .replace("\"max_tokens\": 4", "\"max_tokens\": 8");
    env.file("edited.json", edited);
    let bad = env.file(
        "bad.toml",
        "name = \"bad\"\ndataset = \"other.jsonl\"\n[[judges]]\ncard = \"edited.json\"\n",
    );
    check_invalid(
        &env,
        &["run", bad.to_str().unwrap()],
        &[
            "edited.json: the card's definition hashes to",
            "it was edited",
        ],
    );
    let swept = env.file(
        "swept.toml",
        "name = \"swept\"\ndataset = \"other.jsonl\"\n[[judges]]\ncard = \"card/judge.json\"\n[sweep]\ntemperature = [0.0, 0.7]\n",
    );
    check_invalid(
        &env,
        &["run", swept.to_str().unwrap()],
        &["sweep.temperature: the judge card fixes it"],
    );
}
