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
        said.contains("input_max_tokens = 48: shortens the question or an answer of ")
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

/// `input_strategy = "summary"` on the real default judge, summarising for itself: an
/// input over the budget is replaced by the summary it wrote first, each item's first
/// call carries what its summaries cost, and the trial's tokens per item count them.
#[test]
fn a_judge_summarises_long_inputs_for_itself_and_pays_for_it_in_tokens() {
    let env = Env::new();
    let exp = env.file(
        "summaries.toml",
        format!(
            "name = \"summaries\"\ndataset = \"{}\"\n[judge]\ntemplate = \"single\"\n[sweep]\nmax_tokens = 1\ninput_max_tokens = 48\ninput_strategy = [\"head_tail\", \"summary\"]\n[limits]\nitems = 3\n",
            topical().display()
        ),
    );
    let exp = exp.to_str().unwrap();
    let out = env.run(&["run", exp, "--plan"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    assert!(
        said.contains(
            "each kept head and tail, or replaced by a summary each trial's judge writes first"
        ) && said.contains("summaries, each written once and stored (0 of them stored already)"),
        "{said}"
    );
    let out = env.run(&["run", exp]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let (_, header, rows) = verdict_rows(&env, "summaries");
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let number = |r: &Vec<String>, name: &str| r[col(name)].parse::<u32>().unwrap();
    let (head_tail, summary): (Vec<&Vec<String>>, Vec<&Vec<String>>) =
        rows.iter().partition(|r| r[col("trial_id")] == "1");
    assert_eq!((head_tail.len(), summary.len()), (3, 3));
    assert!(head_tail.iter().all(|r| r[col("summary_calls")].is_empty()));
    let mut n_summaries = 0;
    for r in &summary {
        let calls = number(r, "summary_calls");
        assert_eq!(calls > 0, number(r, "input_cut") > 0, "{r:?}");
        if calls > 0 {
            assert!(number(r, "summary_prompt_tokens") > 48 * calls);
            assert!(number(r, "summary_completion_tokens") <= 48 * calls);
        }
        n_summaries += calls;
    }
    assert!(
        n_summaries > 0,
        "Topical-Chat's histories run past 48 tokens"
    );
    let shown = env.show("summaries");
    let per_item = |i: usize| {
        shown["trials"][i]["prompt_tokens_per_item"]
            .as_f64()
            .unwrap()
    };
    assert!(per_item(1) > per_item(0), "{} {}", per_item(1), per_item(0));
    assert_eq!(shown["trials"][1]["params"]["input_strategy"], "summary");
}

/// A named summariser that is not swept, behind llama-server, with a price: its summaries
/// are written once and stored, so that another experiment asking the same makes no call
/// to write them again, and their dollars count in the trial's.
#[test]
fn a_remote_summariser_writes_each_summary_once_and_its_cost_counts() {
    let env = Env::new();
    let server = LlamaServer::start(env.dir.path(), &judgelab_engine::default_model_path());
    let spec = |name: &str| {
        format!(
            "name = \"{name}\"\ndataset = \"{}\"\n[[judges]]\nname = \"judge\"\nbackend = \"openai\"\nbase_url = {url:?}\nmodel = \"smollm2\"\nprice = {{ input = 1.0, output = 2.0 }}\n[[judges]]\nname = \"cheap\"\nbackend = \"openai\"\nbase_url = {url:?}\nmodel = \"smollm2\"\nprice = {{ input = 0.5, output = 1.0 }}\n[judge]\ntemplate = \"single\"\n[sweep]\njudge = \"judge\"\nmax_tokens = 4\ninput_max_tokens = 64\ninput_strategy = \"summary\"\n[summary]\njudge = \"cheap\"\n[limits]\nitems = 4\n",
            topical().display(),
            url = server.base_url
        )
    };
    let exp = env.file("remote-summaries.toml", spec("remote-summaries"));
    let out = env.run(&["run", exp.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let (_, header, rows) = verdict_rows(&env, "remote-summaries");
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let number = |r: &Vec<String>, name: &str| r[col(name)].parse::<f64>().unwrap();
    assert_eq!(rows.len(), 4);
    let n_summaries: f64 = rows.iter().map(|r| number(r, "summary_calls")).sum();
    assert!(n_summaries > 0.0);
    // Each of the judge's calls, and each summary. Topical-Chat's items share dialogue
    // histories, six responses to each: a history is summarised once, and each item that
    // shows it counts the summary's cost.
    let posts = server.posts();
    assert!(
        posts > 4 && posts <= 4 + n_summaries as usize,
        "{posts} posts"
    );
    // The trial's dollars per 1,000 items: its calls' and its summaries', at each price.
    let spent: f64 = rows
        .iter()
        .map(|r| {
            let summaries = number(r, "summary_prompt_tokens") * 0.5
                + number(r, "summary_completion_tokens") * 1.0;
            // An item with nothing to summarise has no summary's dollars.
            let cost = r[col("summary_cost_usd")].parse().unwrap_or(0.0);
            assert!((cost - summaries / 1e6).abs() < 1e-12, "{r:?}");
            number(r, "cost_usd") + summaries / 1e6
        })
        .sum();
    let shown = env.show("remote-summaries");
    let usd = shown["trials"][0]["usd_per_1k_items"].as_f64().unwrap();
    assert!((usd - spent / 4.0 * 1000.0).abs() < 1e-9, "{usd} {spent}");

    // Another experiment asking the same: the summaries are read, the judge's calls
    // replayed from the response cache; nothing is sent.
    let again = env.file("again.toml", spec("again"));
    let out = env.run(&["run", again.to_str().unwrap(), "--plan"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let written = posts - 4;
    let plan = text(&out.stdout);
    assert!(
        plan.contains(&format!("; {written} summaries, each written once and stored ({written} of them stored already)")),
        "{plan}"
    );
    let out = env.run(&["run", again.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(server.posts(), posts);
    let (_, _, again_rows) = verdict_rows(&env, "again");
    assert_eq!(
        again_rows
            .iter()
            .map(|r| &r[col("summary_calls")])
            .collect::<Vec<_>>(),
        rows.iter()
            .map(|r| &r[col("summary_calls")])
            .collect::<Vec<_>>()
    );
}
