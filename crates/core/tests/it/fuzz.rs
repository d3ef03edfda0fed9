//! A seeded mutation fuzzer over what users write by hand: dataset files, experiment files,
//! templates and judge cards. Each input is a bundled one (a dataset's first lines, a
//! Parquet file, an example experiment, a built-in template, a card) with a few mutations —
//! bytes flipped, ranges cut or repeated, syntax fragments and extreme values spliced in —
//! and is fed to the parser (a dataset also to the import wizard's peek and guesses, a
//! template to its validation, criteria and rendering, a card to the experiment that runs
//! it). Nothing may panic: bad input is an error. Runs in a debug build, so integer
//! overflow panics too.
//!
//! `JUDGELAB_FUZZ_ITERATIONS` (default 1,500 per kind) and `JUDGELAB_FUZZ_SEED` widen or
//! move the search; a panicking input is written to `target/fuzz-failures/` to replay.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use judgelab_core::card::JudgeCard;
use judgelab_core::dataset::mapping::{Mapping, Rescale};
use judgelab_core::dataset::{guess, parse, ImportOptions, Source};
use judgelab_core::rng::SplitMix64;
use judgelab_core::{Experiment, ItemText, OutputKind, Task, Template};

/// Fragments spliced into inputs: the syntax of each format, and values at the edges.
const FRAGMENTS: &[&str] = &[
    "{{",
    "}}",
    "{%",
    "%}",
    "{#",
    "#}",
    "{% block user %}",
    "{% endblock %}",
    "{% if ",
    "{% for x in ",
    "{% set criteria = [",
    "]",
    "[",
    "\"",
    "'",
    "=",
    ",",
    ":",
    "\n",
    "\r\n",
    "\t",
    "\\",
    "\\u0000",
    "\0",
    "é",
    "𝄞",
    "-1",
    "0",
    "1e309",
    "-1e309",
    "NaN",
    "inf",
    "99999999999999999999",
    "18446744073709551616",
    "-9223372036854775809",
    "null",
    "true",
    "[]",
    "{}",
    "[[judges]]",
    "[sweep]",
    "[limits]",
    "[selection]",
    "[reference]",
    "[robustness]",
    "temperature = ",
    "few_shot = ",
    "items = ",
    "repeats = ",
    "quantization = ",
    "\"label\": ",
    "\"answer_a\": ",
    "\"human_labels\": {",
    "\"scale\": ",
    "|length",
    "|join(",
    "loop.index",
    "range(999999999)",
];

/// How many inputs of each kind.
fn iterations() -> usize {
    std::env::var("JUDGELAB_FUZZ_ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_500)
}

fn seed() -> u64 {
    std::env::var("JUDGELAB_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(7)
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `input` with one to four mutations.
fn mutate(rng: &mut SplitMix64, input: &[u8]) -> Vec<u8> {
    let mut out = input.to_vec();
    let at = |rng: &mut SplitMix64, len: usize| rng.below(len as u64 + 1) as usize;
    for _ in 0..1 + rng.below(4) {
        let len = out.len();
        match rng.below(6) {
            0 if len > 0 => {
                let i = at(rng, len - 1);
                out[i] ^= 1 << rng.below(8);
            }
            1 => {
                let (a, b) = (at(rng, len), at(rng, len));
                out.drain(a.min(b)..a.max(b));
            }
            2 => {
                let (a, b) = (at(rng, len), at(rng, len));
                let piece = out[a.min(b)..a.max(b)].to_vec();
                let i = at(rng, len);
                out.splice(i..i, piece);
            }
            3 => {
                // A line far past what a lexer's column counter may hold, now and then.
                let long = "x".repeat(70_000);
                let i = at(rng, len);
                out.splice(i..i, long.into_bytes());
            }
            _ => {
                let fragment = FRAGMENTS[rng.below(FRAGMENTS.len() as u64) as usize];
                let i = at(rng, len);
                out.splice(i..i, fragment.bytes());
            }
        }
    }
    out
}

/// Feeds `iterations()` mutations of `seeds` to `run`; panics with the inputs that panicked.
fn fuzz(kind: &str, seeds: &[(String, Vec<u8>)], run: impl Fn(&str, &[u8])) {
    assert!(!seeds.is_empty(), "no {kind} to start from");
    let mut rng = SplitMix64::new(seed() ^ kind.len() as u64);
    let mut failed = Vec::new();
    for i in 0..iterations() {
        let (name, input) = &seeds[i % seeds.len()];
        let mutated = mutate(&mut rng, input);
        if catch_unwind(AssertUnwindSafe(|| run(name, &mutated))).is_err() {
            let dir = root().join("target/fuzz-failures");
            std::fs::create_dir_all(&dir).unwrap();
            let path = dir.join(format!("{kind}-{i}-{name}"));
            std::fs::write(&path, &mutated).unwrap();
            failed.push(path.display().to_string());
        }
    }
    assert!(
        failed.is_empty(),
        "{kind}: inputs that panicked: {failed:#?}"
    );
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn datasets_never_panic() {
    let mut seeds = Vec::new();
    for file in [
        "llmbar_natural.jsonl",
        "topical_chat_usr.jsonl",
        "pandalm_test.jsonl",
    ] {
        let all = std::fs::read_to_string(root().join("datasets").join(file)).unwrap();
        let head: String = all.lines().take(3).map(|l| format!("{l}\n")).collect();
        seeds.push((file.to_string(), head.into_bytes()));
    }
    // A Parquet file and a gzipped line, read as their content.
    let fixture = root().join("crates/core/tests/it/data/mt_bench_style.parquet");
    seeds.push(("rows.parquet".to_string(), std::fs::read(fixture).unwrap()));
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, &seeds[0].1).unwrap();
    seeds.push(("rows.jsonl.gz".to_string(), gz.finish().unwrap()));
    // The same rows as CSV, and as TSV.
    seeds.push((
        "rows.csv".to_string(),
        b"id,question,answer_a,answer_b,label\n1,q,a,b,A\n2,\"q, quoted\",a,b,B\n".to_vec(),
    ));
    seeds.push((
        "rows.tsv".to_string(),
        b"prompt\tresponse\thelpfulness\tcoherence\np\tr\t3\t4\nq\ts\t1\t2\n".to_vec(),
    ));
    let rescaled = ImportOptions {
        mapping: Some(Mapping {
            rescale: Some(Rescale::parse("0-4:1-5").unwrap()),
            ..Mapping::parse(
                "question=prompt,answer=response,human_label=helpfulness,human_labels.coherence=coherence",
                None,
            )
            .unwrap()
        }),
        ..ImportOptions::default()
    };
    fuzz("dataset", &seeds, |name, bytes| {
        let _ = parse(name, bytes, &ImportOptions::default());
        let scaled = ImportOptions {
            scale: Some((1, 3)),
            ..ImportOptions::default()
        };
        let _ = parse(name, bytes, &scaled);
        let mapped = ImportOptions {
            mapping: Some(
                Mapping::parse(
                    "question=conversation_a[0].content,answer_a=conversation_a[-1].content,answer_b=conversation_b[-1].content,human_label=winner",
                    Some("model_a=A,model_b=B,tie=tie"),
                )
                .unwrap(),
            ),
            ..ImportOptions::default()
        };
        let _ = parse(name, bytes, &mapped);
        let _ = parse(name, bytes, &rescaled);
        // What the import wizard reads of a file before any mapping.
        if let Ok(peek) = guess::peek(name, Source::Bytes(bytes), 5) {
            for (target, path) in guess::guess(&peek) {
                if target == "human_label" {
                    if let Ok((values, _)) =
                        guess::label_values(name, Source::Bytes(bytes), &path, 100)
                    {
                        let _ = guess::guess_labels(&values);
                    }
                }
            }
        }
    });
}

/// A judge card as `export-judge` writes it, and the experiment that runs it.
#[test]
fn judge_cards_never_panic() {
    let card = serde_json::json!({
        "judgelab_card": 1,
        "identity": "",
        "judge": {
            "name": "default", "task": {"kind": "pairwise"}, "allow_tie": false, "output": "label",
            "template": {"name": "pairwise", "source": Template::builtin("pairwise").unwrap().source},
            "params": {"model": "default", "template": "pairwise", "temperature": 0.0, "top_p": 0.9,
                       "max_tokens": 4, "few_shot": 1, "few_shot_max_tokens": null},
            "examples": [{"id": "e1", "question": "q", "answer_a": "a", "answer_b": "b", "answer": null,
                          "reference": null, "human_label": "B", "meta": {}}],
            "model": {"backend": "llama", "file": "m.gguf", "sha256": "ab", "quantization": "Q4_1",
                      "context_size": 8192},
        },
        "measured": null,
        "exported_at": "2026-12-06T00:00:00Z",
        "judgelab_version": "0.1.0",
    });
    let mut card: JudgeCard = serde_json::from_value(card).unwrap();
    card.identity = card.judge.identity();
    let seeds = vec![(
        "judge.json".to_string(),
        serde_json::to_string_pretty(&card).unwrap().into_bytes(),
    )];
    let runs = Experiment::from_toml(
        "card.toml",
        "name = \"card\"\ndataset = \"d.jsonl\"\n[[judges]]\ncard = \"judge.json\"\n",
    )
    .unwrap();
    fuzz("card", &seeds, |name, bytes| {
        if let Ok(card) = JudgeCard::from_json(name, &text(bytes)) {
            if let Ok(e) = runs.clone().with_card(&card.judge) {
                let _ = e.trials();
                let _ = e.identity();
            }
        }
    });
}

#[test]
fn experiment_files_never_panic() {
    let mut seeds = Vec::new();
    for entry in std::fs::read_dir(root().join("examples")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            seeds.push((name, std::fs::read(&path).unwrap()));
        }
    }
    seeds.sort();
    fuzz("experiment", &seeds, |name, bytes| {
        let _ = Experiment::from_toml(name, &text(bytes));
    });
}

#[test]
fn templates_never_panic() {
    let seeds: Vec<(String, Vec<u8>)> = Template::builtin_names()
        .map(|n| {
            let t = Template::builtin(n).unwrap();
            (n.to_string(), t.source.into_bytes())
        })
        .collect();
    let single = Task::Single {
        scale_min: 1,
        scale_max: 5,
    };
    let text_of = ItemText {
        id: "1",
        question: "q",
        answer_a: Some("a"),
        answer_b: Some("b"),
        answer: None,
        reference: None,
    };
    fuzz("template", &seeds, |name, bytes| {
        let t = Template::new(name, &text(bytes));
        let _ = t.validate(Task::Pairwise, OutputKind::Label);
        let _ = t.validate(single, OutputKind::Json);
        let _ = t.criteria();
        let _ = t.render(&judgelab_core::template::RenderContext::new(
            Task::Pairwise,
            OutputKind::Label,
            true,
            text_of,
            &[],
        ));
    });
}
