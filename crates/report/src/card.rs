//! A judge card as Markdown (`judge.md`): what defines the judge, whole, and what was
//! measured of it, for a reader or a paper's appendix. `judge.json` is the same card for
//! Judgelab to run.

use std::fmt::Write;

use judgelab_core::card::{measured, JudgeCard, Measured, Model};
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
            reproducible,
        } => format!(
            "llama.cpp, `{file}` (sha256 `{sha256}`{}), context {context_size} tokens{}",
            quantization
                .as_ref()
                .map_or(String::new(), |q| format!(", mostly {q}")),
            if *reproducible {
                ", each call decoded alone (`reproducible = true`)"
            } else {
                ""
            }
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
    measured(&mut out, card.measured.as_ref());
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

/// A figure to three decimals, "–" where there is none.
fn num(x: Option<f64>) -> String {
    x.map_or("–".to_string(), |x| {
        format!("{}", (x * 1000.0).round() / 1000.0)
    })
}

/// The measured part, as the card holds it.
fn measured(out: &mut String, m: Option<&Measured>) {
    let _ = writeln!(out, "## Measured where it was tuned\n");
    let Some(m) = m else {
        let _ = writeln!(out, "Nothing was measured.");
        return;
    };
    let score = |v: Option<&measured::Score>| match v {
        None => "not judged".to_string(),
        Some(v) => match v.ci {
            Some([lo, hi]) => format!(
                "{} [{}, {}] (n = {})",
                num(v.value),
                num(Some(lo)),
                num(Some(hi)),
                v.n
            ),
            None => format!("{} (n = {})", num(v.value), v.n),
        },
    };
    let metric = m.metric.name();
    let rows = [
        ("Experiment", format!("{}, trial {}", m.experiment, m.trial)),
        (
            "Dataset",
            format!(
                "{} ({} items, sha256 `{}`)",
                m.dataset.name, m.dataset.n_items, m.dataset.content_hash
            ),
        ),
        (
            "Split",
            format!(
                "{} dev items, {} test items, few-shot pool {}",
                m.split.dev_items, m.split.test_items, m.split.few_shot_pool
            ),
        ),
        (&*format!("{metric}, dev (95% CI)"), score(Some(&m.dev))),
        (&*format!("{metric}, test (95% CI)"), score(m.test.as_ref())),
        (
            "Parse failures",
            m.parse_failure_rate
                .map_or("–".into(), |r| format!("{:.1}%", 100.0 * r)),
        ),
        ("Failed calls", m.failed_calls.to_string()),
        (
            "Calibration (ECE, Brier)",
            m.calibration.as_ref().map_or("–".into(), |c| {
                format!("{}, {}", num(c.ece), num(c.brier))
            }),
        ),
        (
            "Selective threshold",
            m.selective
                .as_ref()
                .map_or("–".into(), |c| num(c.threshold)),
        ),
        (
            "Tokens per item (prompt, completion)",
            format!(
                "{}, {}",
                num(m.prompt_tokens_per_item),
                num(m.completion_tokens_per_item)
            ),
        ),
        ("$ per 1,000 items", num(m.usd_per_1k_items)),
        (
            "Latency p50, p95 (ms)",
            format!(
                "{}, {} at {} in flight",
                num(m.latency_ms.p50),
                num(m.latency_ms.p95),
                m.latency_concurrency.unwrap_or(1)
            ),
        ),
        (
            "Computed on",
            m.device.clone().unwrap_or_else(|| "–".into()),
        ),
    ];
    let _ = writeln!(out, "| | |\n|---|---|");
    for (k, v) in rows {
        let _ = writeln!(out, "| {k} | {v} |");
    }
    if !m.load_ramps.is_empty() {
        let _ = writeln!(out, "\nLoad ramps: {}", m.load_ramps.len());
        for r in &m.load_ramps {
            let knee = r.knee.map_or("–".to_string(), |k| k.to_string());
            let _ = writeln!(out, "- {}: knee at {knee} in flight", r.created_at);
        }
    }
}
