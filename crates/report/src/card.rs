//! A judge card as Markdown (`judge.md`): what defines the judge, whole, and what was
//! measured of it, for a reader or a paper's appendix. `judge.json` is the same card for
//! Judgelab to run.

use std::fmt::Write;

use judgelab_core::card::{JudgeCard, Model};
use serde_json::Value;

/// Writes the card into `dir` (created if missing) as `judge.json` and `judge.md`; their
/// paths.
pub fn write(card: &JudgeCard, dir: &std::path::Path) -> std::io::Result<[std::path::PathBuf; 2]> {
    std::fs::create_dir_all(dir)?;
    let (json, md) = (dir.join("judge.json"), dir.join("judge.md"));
    let text = serde_json::to_string_pretty(card).expect("a card serialises");
    std::fs::write(&json, text + "\n")?;
    std::fs::write(&md, markdown(card))?;
    Ok([json, md])
}

/// The card in Markdown.
pub fn markdown(card: &JudgeCard) -> String {
    let j = &card.judge;
    let mut out = String::new();
    let p = &j.params;
    let _ = writeln!(out, "# Judge card: {}\n", j.name);
    let _ = writeln!(
        out,
        "Identity `{}` (sha256 of what changes its verdicts). Exported {} by Judgelab {}; \
         run it as a judge with `[[judges]] card = \"judge.json\"`.\n",
        card.identity, card.exported_at, card.judgelab_version
    );
    let _ = writeln!(out, "## Definition\n");
    let model = match &j.model {
        Model::Llama {
            file,
            sha256,
            quantization,
            context_size,
        } => format!(
            "llama.cpp, `{file}` (sha256 `{sha256}`{}), context {context_size} tokens",
            quantization
                .as_ref()
                .map_or(String::new(), |q| format!(", mostly {q}"))
        ),
        Model::Openai { model, endpoint } => format!(
            "`{model}` on an OpenAI-compatible endpoint ({})",
            endpoint
                .get("base_url")
                .and_then(Value::as_str)
                .unwrap_or("?")
        ),
    };
    let rows = [
        ("Model", model),
        ("Task", j.task.describe()),
        ("Output", format!("{:?}", j.output).to_lowercase()),
        (
            "Ties allowed",
            if j.allow_tie { "yes" } else { "no" }.into(),
        ),
        ("Template", format!("`{}` (below)", j.template.name)),
        ("Temperature", p.temperature.to_string()),
        ("top_p", p.top_p.to_string()),
        ("max_tokens", p.max_tokens.to_string()),
        ("Few-shot examples", format!("{} (below)", j.examples.len())),
        ("Answer order", name(serde_json::to_value(p.order))),
        ("Constraint", name(serde_json::to_value(p.constraint))),
        (
            "Verdict read",
            if p.exact {
                "exactly, from the first token's distribution"
            } else {
                "from the generated text"
            }
            .into(),
        ),
    ];
    let _ = writeln!(out, "| | |\n|---|---|");
    for (k, v) in rows {
        let _ = writeln!(out, "| {k} | {} |", v.replace('|', "\\|"));
    }
    let _ = writeln!(
        out,
        "\n### Template\n\n````jinja\n{}\n````\n",
        j.template.source.trim_end()
    );
    if !j.examples.is_empty() {
        let _ = writeln!(out, "### Few-shot examples\n");
        for (i, e) in j.examples.iter().enumerate() {
            let _ = writeln!(
                out,
                "{}. `{}`, human label {}: {}",
                i + 1,
                e.id,
                e.human_label,
                one_line(&e.question)
            );
        }
        out.push('\n');
    }
    measured(&mut out, &card.measured);
    out
}

/// A unit variant's serialised name (`ab`, `grammar`).
fn name(value: serde_json::Result<Value>) -> String {
    match value {
        Ok(Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}

fn one_line(text: &str) -> String {
    let line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(120) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line,
    }
}

/// The measured part, as the card holds it.
fn measured(out: &mut String, m: &Value) {
    let _ = writeln!(out, "## Measured where it was tuned\n");
    if m.is_null() {
        let _ = writeln!(out, "Nothing was measured.");
        return;
    }
    let s = |v: &Value| match v {
        Value::Null => "–".to_string(),
        Value::Number(n) => n.as_f64().map_or(n.to_string(), |x| {
            format!("{}", (x * 1000.0).round() / 1000.0)
        }),
        Value::String(t) => t.clone(),
        other => other.to_string(),
    };
    let score = |v: &Value| match v {
        Value::Null => "not judged".to_string(),
        v => match v["ci"].as_array() {
            Some(ci) if ci.len() == 2 => format!(
                "{} [{}, {}] (n = {})",
                s(&v["value"]),
                s(&ci[0]),
                s(&ci[1]),
                s(&v["n"])
            ),
            _ => format!("{} (n = {})", s(&v["value"]), s(&v["n"])),
        },
    };
    let metric = s(&m["metric"]);
    let rows = [
        (
            "Experiment",
            format!("{}, trial {}", s(&m["experiment"]), s(&m["trial"])),
        ),
        (
            "Dataset",
            format!(
                "{} ({} items, sha256 `{}`)",
                s(&m["dataset"]["name"]),
                s(&m["dataset"]["n_items"]),
                s(&m["dataset"]["content_hash"])
            ),
        ),
        (
            "Split",
            format!(
                "{} dev items, {} test items, few-shot pool {}",
                s(&m["split"]["dev_items"]),
                s(&m["split"]["test_items"]),
                s(&m["split"]["few_shot_pool"])
            ),
        ),
        (&*format!("{metric}, dev (95% CI)"), score(&m["dev"])),
        (&*format!("{metric}, test (95% CI)"), score(&m["test"])),
        (
            "Parse failures",
            m["parse_failure_rate"]
                .as_f64()
                .map_or("–".into(), |r| format!("{:.1}%", 100.0 * r)),
        ),
        ("Failed calls", s(&m["failed_calls"])),
        (
            "Calibration (ECE, Brier)",
            match &m["calibration"] {
                Value::Null => "–".into(),
                c => format!("{}, {}", s(&c["ece"]), s(&c["brier"])),
            },
        ),
        (
            "Selective threshold",
            match &m["selective"] {
                Value::Null => "–".into(),
                c => s(&c["threshold"]),
            },
        ),
        (
            "Tokens per item (prompt, completion)",
            format!(
                "{}, {}",
                s(&m["prompt_tokens_per_item"]),
                s(&m["completion_tokens_per_item"])
            ),
        ),
        ("$ per 1,000 items", s(&m["usd_per_1k_items"])),
        (
            "Latency p50, p95 (ms)",
            format!(
                "{}, {} at {} in flight",
                s(&m["latency_ms"]["p50"]),
                s(&m["latency_ms"]["p95"]),
                match &m["latency_concurrency"] {
                    Value::Null => "1".to_string(),
                    v => s(v),
                }
            ),
        ),
        ("Computed on", s(&m["device"])),
    ];
    let _ = writeln!(out, "| | |\n|---|---|");
    for (k, v) in rows {
        let _ = writeln!(out, "| {k} | {v} |");
    }
    if let Some(ramps) = m["load_ramps"].as_array().filter(|r| !r.is_empty()) {
        let _ = writeln!(out, "\nLoad ramps: {}", ramps.len());
        for r in ramps {
            let _ = writeln!(
                out,
                "- {}: knee at {} in flight",
                s(&r["created_at"]),
                s(&r["knee"])
            );
        }
    }
}
