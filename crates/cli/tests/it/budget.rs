//! The input budget on the real default judge: Topical-Chat's dialogue histories cut to
//! `input_max_tokens` of SmolLM2's tokens (locally) or by the estimate (served by
//! llama-server), keeping their start and end; the plan says how many items a level cuts,
//! each verdict how many tokens its inputs lost, and the results table the share of items
//! cut.

use serde_json::Value;

use judgelab_testkit::LlamaServer;

use super::{text, topical, verdict_rows, Env};

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

    let (_, header, rows) = verdict_rows(&env, "budget");
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
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

/// A remote judge cuts by its estimate (four characters a token). Its trials at two levels
/// send one request for an item that fits both, and each records its own cut: none for
/// the whole trial, a count (maybe 0) for the budget's.
#[test]
fn a_remote_judges_levels_share_the_requests_of_items_that_fit() {
    let env = Env::new();
    let server = LlamaServer::start(env.dir.path(), &judgelab_engine::default_model_path());
    let exp = env.file(
        "remote-budget.toml",
        format!(
            "name = \"remote-budget\"\ndataset = \"{}\"\n[judge]\nbackend = \"openai\"\nbase_url = {:?}\nmodel = \"smollm2\"\ntemplate = \"single\"\n[sweep]\nmax_tokens = 4\ninput_max_tokens = [\"none\", 256]\n[limits]\nitems = 6\n",
            topical().display(),
            server.base_url
        ),
    );
    let out = env.run(&["run", exp.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let (_, header, rows) = verdict_rows(&env, "remote-budget");
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let cuts = |trial: &str| -> Vec<String> {
        let rows = rows.iter().filter(|r| r[col("trial_id")] == trial);
        rows.map(|r| r[col("input_cut")].clone()).collect()
    };
    assert_eq!(cuts("1"), vec![String::new(); 6]);
    let at_256: Vec<u32> = cuts("2").iter().map(|c| c.parse().unwrap()).collect();
    let n_cut = at_256.iter().filter(|&&n| n > 0).count();
    assert!(n_cut > 0 && n_cut < 6, "{at_256:?}");
    // The whole trial's six requests, and one more for each item cut.
    assert_eq!(server.posts(), 6 + n_cut);
}
