//! The input budget on the real default judge: Topical-Chat's dialogue histories cut to
//! `input_max_tokens` of SmolLM2's tokens, keeping their start and end; the plan says how
//! many items a level cuts, each verdict how many tokens its inputs lost, and the results
//! table the share of items cut.

use serde_json::Value;

use super::{csv_rows, text, topical, Env};

#[test]
fn long_inputs_are_cut_to_their_budget_in_the_judges_tokens() {
    let env = Env::new();
    let exp = env.file(
        "budget.toml",
        format!(
            "name = \"budget\"\ndataset = \"{}\"\n[judge]\ntemplate = \"single\"\n[sweep]\nmax_tokens = 1\ninput_max_tokens = [\"none\", 48]\n[limits]\nitems = 6\n",
            topical().display()
        ),
    );
    let exp = exp.to_str().unwrap();
    let out = env.run(&["run", exp, "--plan"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    assert!(
        said.contains("input_max_tokens = 48: cuts the question or an answer of ")
            && said.contains(" of 6 items (in the first local judge's tokens)"),
        "{said}"
    );
    let out = env.run(&["run", exp]);
    assert!(out.status.success(), "{}", text(&out.stderr));

    let report = env.dir.path().join("budget-report");
    let out = env.run(&["report", "budget", "--out", report.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let verdicts = std::fs::read_to_string(report.join("verdicts.csv")).unwrap();
    let header: Vec<&str> = verdicts.lines().next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let rows = csv_rows(&verdicts);
    let of = |trial: &str| -> Vec<&Vec<String>> {
        rows.iter()
            .filter(|r| r[col("trial_id")] == trial)
            .collect()
    };
    let (whole, cut) = (of("1"), of("2"));
    assert_eq!((whole.len(), cut.len()), (6, 6));
    assert!(whole.iter().all(|r| r[col("input_cut")].is_empty()));
    let mut n_cut = 0;
    for (w, c) in whole.iter().zip(&cut) {
        assert_eq!(w[col("item_id")], c[col("item_id")]);
        let tokens = |r: &Vec<String>| r[col("prompt_tokens")].parse::<i64>().unwrap();
        let lost: i64 = c[col("input_cut")].parse().unwrap();
        if lost == 0 {
            assert_eq!(tokens(w), tokens(c), "an item that fits is shown whole");
            continue;
        }
        n_cut += 1;
        // The marker stands where the tokens were: the prompt is shorter by fewer than
        // were cut.
        let shorter = tokens(w) - tokens(c);
        assert!(
            shorter > 0 && shorter < lost,
            "{shorter} shorter, {lost} cut"
        );
    }
    assert!(
        n_cut >= 3,
        "most dialogue histories are longer than 48 tokens"
    );

    let shown = env.show("budget");
    let cuts = &shown["trials"][1]["inputs_cut"];
    assert_eq!(cuts["n_items"], 6, "{cuts}");
    assert_eq!(cuts["n_cut"], n_cut, "{cuts}");
    assert_eq!(shown["trials"][0].get("inputs_cut"), None);
    let columns: Vec<&Value> = shown["table"]["columns"]
        .as_array()
        .unwrap()
        .iter()
        .collect();
    assert!(
        columns.iter().any(|c| c["key"] == "inputs_cut"),
        "{columns:?}"
    );
    assert_eq!(shown["trials"][1]["params"]["input_max_tokens"], 48);
}
