//! Integration tests of the local judge on the real SmolLM2-135M-Instruct model
//! (`cargo xtask fetch-model` puts it in the user cache directory).

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock};

use judgelab_core::judge::StopReason;
use judgelab_core::{Judge, JudgeRequest, JudgeResponse, Message, Sampling};
use judgelab_llama::{LlamaError, LlamaJudge, LlamaOptions};

fn model_path() -> PathBuf {
    let path = dirs::cache_dir()
        .expect("a user cache directory")
        .join("judgelab/models")
        .join(judgelab_core::DEFAULT_MODEL_FILE);
    assert!(
        path.is_file(),
        "{} is missing: run `cargo xtask fetch-model` (or `cargo xtask test`)",
        path.display()
    );
    path
}

fn options(path: PathBuf) -> LlamaOptions {
    LlamaOptions {
        context_size: 2048,
        // Tests run two at a time: a judge on both cores beside another's waits for its
        // second thread.
        threads: Some(1),
        ..LlamaOptions::new("default", path)
    }
}

/// One judge for the whole test binary: loading is the slow part.
fn judge() -> &'static LlamaJudge {
    static JUDGE: OnceLock<LlamaJudge> = OnceLock::new();
    JUDGE.get_or_init(|| LlamaJudge::load(options(model_path())).expect("the default model loads"))
}

fn question(text: &str) -> Vec<Message> {
    vec![
        Message {
            role: "system".into(),
            content: "You are a judge. Answer with a single letter.".into(),
        },
        Message {
            role: "user".into(),
            content: text.into(),
        },
    ]
}

fn run(requests: Vec<JudgeRequest>) -> Vec<JudgeResponse> {
    let mut out = Vec::new();
    judge().judge_batch(requests, &Arc::new(AtomicBool::new(false)), &mut |r| {
        out.push(r)
    });
    out
}

fn request(key: usize, text: &str, temperature: f64, max_tokens: u32, seed: u32) -> JudgeRequest {
    JudgeRequest::new(
        key,
        question(text),
        Sampling {
            temperature,
            top_p: 0.9,
            max_tokens,
            seed,
        },
    )
}

#[test]
fn judges_a_batch_and_measures_every_call() {
    let info = judge().info();
    assert!(
        info.n_params > 100_000_000 && info.n_params < 200_000_000,
        "{info:?}"
    );
    assert_eq!(
        judge().identity().sha256.as_deref(),
        Some(judgelab_core::DEFAULT_MODEL_SHA256)
    );
    let prompt = "Which is the capital of France? (A) Paris (B) Rome";
    let responses = run(vec![
        request(7, prompt, 0.0, 4, 1),
        request(8, prompt, 0.0, 4, 2),
        request(9, prompt, 1.0, 6, 3),
    ]);
    assert_eq!(
        responses.iter().map(|r| r.key).collect::<Vec<_>>(),
        [7, 8, 9]
    );
    let completions: Vec<_> = responses
        .into_iter()
        .map(|r| r.result.expect("call succeeds"))
        .collect();
    for c in &completions {
        assert!(c.prompt_tokens > 20, "{c:?}");
        assert!(c.completion_tokens <= 6, "{c:?}");
        let ttft = c.ttft_ms.expect("a first token");
        assert!(ttft > 0.0 && ttft <= c.latency_ms, "{c:?}");
        if c.stop == StopReason::MaxTokens {
            assert!(c.completion_tokens == 4 || c.completion_tokens == 6);
        }
    }
    // Greedy decoding ignores the seed and repeats exactly.
    assert_eq!(completions[0].text, completions[1].text);
    // Each generation lists its first tokens' log-probabilities as OpenAI does: the
    // tokens it chose, in order, and greedy decoding chose the most likely.
    for c in &completions {
        let entries: Vec<serde_json::Value> =
            serde_json::from_str(c.logprobs.as_deref().expect("logprobs")).unwrap();
        let chosen: String = entries
            .iter()
            .map(|e| e["token"].as_str().unwrap())
            .collect();
        assert!(c.text.starts_with(&chosen), "{chosen:?} vs {:?}", c.text);
        for e in &entries {
            let top = e["top_logprobs"].as_array().unwrap();
            assert_eq!(top.len(), 10);
            let mass: f64 = top
                .iter()
                .map(|t| t["logprob"].as_f64().unwrap().exp())
                .sum();
            assert!(mass > 0.0 && mass <= 1.0 + 1e-9, "{e}");
        }
    }
    let greedy =
        serde_json::from_str::<serde_json::Value>(completions[0].logprobs.as_deref().unwrap())
            .unwrap();
    assert_eq!(greedy[0]["token"], greedy[0]["top_logprobs"][0]["token"]);
    assert_eq!(
        judge().count_tokens(&question(prompt)).unwrap(),
        completions[0].prompt_tokens as usize
    );
}

#[test]
fn seeded_sampling_repeats() {
    let prompt = "Write one word about the sea.";
    let a = run(vec![
        request(0, prompt, 1.5, 8, 42),
        request(1, prompt, 1.5, 8, 42),
    ]);
    let texts: Vec<String> = a.into_iter().map(|r| r.result.unwrap().text).collect();
    assert_eq!(texts[0], texts[1]);
}

#[test]
fn prompts_that_do_not_fit_the_context_are_classified() {
    let long = "word ".repeat(3000);
    let c = run(vec![request(0, &long, 0.0, 4, 0)])
        .remove(0)
        .result
        .unwrap();
    assert_eq!(c.stop, StopReason::PromptTooLong);
    assert!(
        c.prompt_tokens > 2048 && c.completion_tokens == 0 && c.text.is_empty(),
        "{c:?}"
    );
    // A prompt that fits, but not with max_tokens, generates until the context is full.
    let n = judge().count_tokens(&question("word ")).unwrap();
    let fits = "word ".repeat(2048 - n - 3 + 1);
    let c = run(vec![request(0, &fits, 1.0, 100, 0)])
        .remove(0)
        .result
        .unwrap();
    assert!(
        c.prompt_tokens as usize + c.completion_tokens as usize <= 2048,
        "{c:?}"
    );
    assert!(c.completion_tokens <= 3 + 1, "{c:?}");
}

#[test]
fn cancelled_batches_skip_the_rest() {
    let mut out = Vec::new();
    let cancel = Arc::new(AtomicBool::new(true));
    judge().judge_batch(vec![request(0, "hi", 0.0, 2, 0)], &cancel, &mut |r| {
        out.push(r)
    });
    assert!(out.is_empty());
}

#[test]
fn missing_and_corrupt_model_files_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.gguf");
    let err = LlamaJudge::load(options(missing.clone())).err().unwrap();
    assert!(matches!(err, LlamaError::Missing { .. }));
    assert!(err.to_string().contains(&missing.display().to_string()));

    let text = dir.path().join("notes.gguf");
    std::fs::write(&text, "hello world").unwrap();
    let err = LlamaJudge::load(options(text)).err().unwrap();
    assert!(
        err.to_string()
            .contains("is not a GGUF file (it starts with \"hell\""),
        "{err}"
    );

    // A truncated copy of the real model: the header is right, the tensors are missing.
    let truncated = dir.path().join("truncated.gguf");
    let bytes = std::fs::read(model_path()).unwrap();
    std::fs::write(&truncated, &bytes[..bytes.len() / 3]).unwrap();
    let err = LlamaJudge::load(options(truncated.clone())).err().unwrap();
    assert!(matches!(err, LlamaError::Load { .. }), "{err}");
    assert!(err.to_string().contains(&truncated.display().to_string()));
}

fn pairwise(question: &str, a: &str, b: &str) -> Vec<Message> {
    vec![
        Message {
            role: "system".into(),
            content: "You compare two answers. Reply with A or B only.".into(),
        },
        Message {
            role: "user".into(),
            content: format!(
                "Question: {question}\nAnswer A: {a}\nAnswer B: {b}\nWhich answer is better?"
            ),
        },
    ]
}

/// `judgelab_core::sampling` against llama.cpp itself, on three prompts: 2,000 draws per
/// setting from one forward pass. Each token's frequency, and each verdict's (tokens read
/// through the verdict parser, as the engine reads them), lies within 4 standard errors of
/// its exact probability. With the verdict grammar in front of the chain, the real grammar
/// sampler draws only verdicts, as often as the exact distribution over the tokens that
/// spell one says.
#[test]
fn exact_distributions_match_the_real_sampler() {
    use judgelab_core::sampling::{Ranked, VerdictDistribution};
    use judgelab_core::verdict::{self, OutputKind};
    use judgelab_core::Task;

    let prompts = [
        pairwise("What is the capital of France?", "Paris.", "Lyon."),
        pairwise(
            "Write a haiku about rain.",
            "Rain taps the window, soft.",
            "I like rain.",
        ),
        pairwise("What is 2 + 2?", "5", "4"),
    ];
    let settings: Vec<Sampling> = [(0.7, 0.9), (1.0, 1.0), (1.5, 0.8)]
        .iter()
        .map(|&(temperature, top_p)| Sampling {
            temperature,
            top_p,
            max_tokens: 1,
            seed: 42,
        })
        .collect();
    let n = 2000;
    let vocabulary = judge().vocabulary().unwrap();
    let token_verdicts = verdict::token_verdicts(OutputKind::Label, Task::Pairwise, &vocabulary);
    let within = |f: f64, p: f64, what: &str| {
        let sigma = (p * (1.0 - p) / n as f64).sqrt();
        assert!(
            (f - p).abs() <= 4.0 * sigma + 0.002,
            "{what}: drawn {f:.4}, exact {p:.4}"
        );
    };
    let mut compared = 0;
    for messages in &prompts {
        let draws =
            judgelab_llama::draws::draw(&model_path(), messages, &settings, None, n).unwrap();
        let ranked = Ranked::new(&draws.logits);
        for (s, counts) in settings.iter().zip(&draws.counts) {
            let exact = ranked.distribution(s.temperature, s.top_p);
            let support: std::collections::HashMap<usize, f64> = exact.iter().copied().collect();
            // top_p cuts the same tokens (up to a float rounding at the very edge of the cut).
            let outside: usize = counts
                .iter()
                .filter(|(t, _)| !support.contains_key(&(**t as usize)))
                .map(|(_, c)| c)
                .sum();
            assert!(outside * 100 <= n, "{outside} draws outside top_p at {s:?}");
            for &(token, p) in exact.iter().filter(|(_, p)| *p >= 0.01) {
                let f = counts.get(&(token as i32)).copied().unwrap_or(0) as f64 / n as f64;
                within(f, p, &format!("token {token} at {s:?}"));
                compared += 1;
            }
            let verdicts = VerdictDistribution::new(&exact, &token_verdicts);
            let mut drawn: std::collections::HashMap<Option<String>, usize> = Default::default();
            for (&token, &c) in counts {
                let label = token_verdicts[token as usize].label().map(|l| l.to_text());
                *drawn.entry(label).or_default() += c;
            }
            let share = |k: Option<String>| drawn.get(&k).copied().unwrap_or(0) as f64 / n as f64;
            for (label, p) in &verdicts.labels {
                within(
                    share(Some(label.to_text())),
                    *p,
                    &format!("verdict {label:?} at {s:?}"),
                );
            }
            within(
                share(None),
                verdicts.failed,
                &format!("no verdict at {s:?}"),
            );
        }
    }
    assert!(
        compared >= 12,
        "settings with one likely token test little: {compared}"
    );

    // The verdict grammar in front of the chain.
    let grammar = verdict::grammar(OutputKind::Label, Task::Pairwise, false);
    let spelled: Vec<usize> = ["A", "B"]
        .iter()
        .map(|s| vocabulary.iter().position(|p| p == s).unwrap())
        .collect();
    let warm = &settings[1..2];
    let draws =
        judgelab_llama::draws::draw(&model_path(), &prompts[1], warm, Some(&grammar), n).unwrap();
    let masked: Vec<f32> = draws
        .logits
        .iter()
        .enumerate()
        .map(|(t, &l)| {
            if spelled.contains(&t) {
                l
            } else {
                f32::NEG_INFINITY
            }
        })
        .collect();
    let exact = Ranked::new(&masked).distribution(warm[0].temperature, warm[0].top_p);
    let counts = &draws.counts[0];
    assert_eq!(counts.values().sum::<usize>(), n);
    assert!(
        counts.keys().all(|t| spelled.contains(&(*t as usize))),
        "{counts:?}"
    );
    for (token, p) in exact {
        let f = counts.get(&(token as i32)).copied().unwrap_or(0) as f64 / n as f64;
        within(f, p, &format!("token {token} under the grammar"));
    }
}

/// A batch of prompts with a long common prefix: the prefix is decoded once and kept for
/// the next batch, every call's tokens are its whole prompt, and the verdicts match whole
/// decodes of each prompt alone (label logits within tenths; the greedy token the same
/// wherever the whole decode's lead is clear).
/// A long rubric every prompt shares, then a yes/no question.
fn ask(question: &str) -> Vec<Message> {
    vec![
        Message {
            role: "system".into(),
            content: "You are a careful judge. ".repeat(40),
        },
        Message {
            role: "user".into(),
            content: format!(
                "Question: {question}\nAnswer A: yes\nAnswer B: no\nReply with A or B."
            ),
        },
    ]
}

/// An exact pass's request for `question`: the first output token's logits, nothing
/// generated.
fn logits_request(key: usize, question: &str) -> JudgeRequest {
    JudgeRequest {
        key,
        messages: ask(question),
        sampling: Sampling {
            temperature: 0.0,
            top_p: 1.0,
            max_tokens: 0,
            seed: 0,
        },
        logits: true,
        grammar: None,
        uncached: false,
    }
}

/// `requests` judged by `judge` in one batch: their completions, by key.
fn completions(
    judge: &LlamaJudge,
    requests: Vec<JudgeRequest>,
) -> Vec<judgelab_core::judge::Completion> {
    let mut out = Vec::new();
    judge.judge_batch(requests, &Arc::new(AtomicBool::new(false)), &mut |r| {
        out.push(r)
    });
    out.sort_by_key(|r| r.key);
    out.into_iter().map(|r| r.result.unwrap()).collect()
}

#[test]
fn shared_prefixes_are_decoded_once_and_change_nothing_that_matters() {
    let questions = [
        "Is water wet?",
        "Is the sky green?",
        "Do cats bark?",
        "Is ice cold?",
        "Is fire hot?",
    ];
    let request = logits_request;
    let shared = LlamaJudge::load(LlamaOptions {
        parallel: 2,
        ..options(model_path())
    })
    .unwrap();
    let alone = LlamaJudge::load(LlamaOptions {
        parallel: 1,
        share_prefix: false,
        ..options(model_path())
    })
    .unwrap();
    let call = completions;
    let first = call(&shared, (0..3).map(|i| request(i, questions[i])).collect());
    let second = call(&shared, (3..5).map(|i| request(i, questions[i])).collect());
    let whole: Vec<_> = (0..5)
        .map(|i| call(&alone, vec![request(i, questions[i])]).remove(0))
        .collect();
    let lengths: Vec<u32> = whole.iter().map(|c| c.prompt_tokens).collect();
    let prefix = judge().count_tokens(&ask("")).unwrap() as u32 - 30; // the rubric and the chat template around it
    assert!(prefix > 200, "{prefix}");
    // The first batch pays for the prefix once; the second pays for none of it.
    let paid = |cs: &[judgelab_core::judge::Completion]| {
        cs.iter().map(|c| c.decoded_tokens.unwrap()).sum::<u32>()
    };
    assert!(
        paid(&first) <= lengths[..3].iter().sum::<u32>() - 2 * prefix,
        "{} vs {lengths:?}",
        paid(&first)
    );
    assert!(
        paid(&second) < lengths[3..].iter().sum::<u32>() - 2 * prefix + 20,
        "{}",
        paid(&second)
    );
    for (i, c) in first.iter().chain(&second).enumerate() {
        assert_eq!(c.prompt_tokens, lengths[i]);
        assert_eq!(c.completion_tokens, 0);
        let (a, b) = (
            c.logits.as_ref().unwrap(),
            whole[i].logits.as_ref().unwrap(),
        );
        let argmax = |l: &[f32]| (0..l.len()).max_by(|&x, &y| l[x].total_cmp(&l[y])).unwrap();
        // Another summation order moves the label logits by tenths at most (measured here:
        // up to 0.3 with 28-token suffixes, less with longer ones).
        let vocabulary = shared.vocabulary().unwrap();
        let moved = ["A", "B", " A", " B"]
            .iter()
            .map(|l| vocabulary.iter().position(|p| p == l).unwrap())
            .map(|t| (a[t] - b[t]).abs())
            .fold(0f32, f32::max);
        assert!(moved < 0.5, "call {i}: label logits moved by {moved}");
        let top = argmax(b);
        let runner_up = b
            .iter()
            .enumerate()
            .filter(|(t, _)| *t != top)
            .map(|(_, l)| *l)
            .fold(f32::MIN, f32::max);
        if b[top] - runner_up > 0.5 {
            assert_eq!(argmax(a), top, "call {i}");
        }
    }
}

/// A batch that shares nothing with the cached prefix drops it and decodes in full.
#[test]
fn a_batch_sharing_nothing_drops_the_cached_prefix() {
    let judge = LlamaJudge::load(LlamaOptions {
        parallel: 2,
        context_size: 512,
        ..options(model_path())
    })
    .unwrap();
    let ask = |key: usize, system: String, question: &str| JudgeRequest {
        key,
        messages: vec![
            Message {
                role: "system".into(),
                content: system,
            },
            Message {
                role: "user".into(),
                content: question.into(),
            },
        ],
        sampling: Sampling {
            temperature: 0.0,
            top_p: 1.0,
            max_tokens: 2,
            seed: 0,
        },
        logits: false,
        grammar: None,
        uncached: false,
    };
    let long = "Judge fairly. ".repeat(100);
    for round in 0..2 {
        let requests = if round == 0 {
            vec![
                ask(0, long.clone(), "Is A better?"),
                ask(1, long.clone(), "Is B better?"),
            ]
        } else {
            // Nothing in common beyond the chat template, and together too long for the
            // cells left beside the old prefix (2 × ~410 + ~310 > 1,024).
            vec![
                ask(0, "x ".repeat(400), "Is A better?"),
                ask(1, "y ".repeat(400), "Is B better?"),
            ]
        };
        let mut out = Vec::new();
        judge.judge_batch(requests, &Arc::new(AtomicBool::new(false)), &mut |r| {
            out.push(r)
        });
        assert_eq!(out.len(), 2);
        for r in out {
            let c = r.result.unwrap_or_else(|e| panic!("round {round}: {e}"));
            if round == 1 {
                assert_eq!(c.decoded_tokens, Some(c.prompt_tokens), "decoded in full");
            }
        }
    }
}

/// The cache starts small and grows to what a batch needs, up to the window; a grown
/// context judges as a small one does.
#[test]
fn the_cache_grows_to_a_long_prompt() {
    let judge = LlamaJudge::load(LlamaOptions {
        parallel: 2,
        context_size: 4096,
        ..options(model_path())
    })
    .unwrap();
    let judged = |requests: Vec<JudgeRequest>| {
        let mut out = Vec::new();
        judge.judge_batch(requests, &Arc::new(AtomicBool::new(false)), &mut |r| {
            out.push(r.result.unwrap())
        });
        out
    };
    // More tokens than the 2,048 cells the cache starts with.
    let c = judged(vec![request(0, &"word ".repeat(2100), 0.0, 2, 0)]).remove(0);
    assert!(c.prompt_tokens > 2100, "{c:?}");
    assert_ne!(c.stop, StopReason::PromptTooLong, "{c:?}");
    assert_eq!(c.decoded_tokens, Some(c.prompt_tokens), "{c:?}");
    let short = "Which is the capital of France? (A) Paris (B) Rome";
    let grown = judged(vec![request(0, short, 0.0, 4, 0)]).remove(0);
    let small = run(vec![request(0, short, 0.0, 4, 0)])
        .remove(0)
        .result
        .unwrap();
    assert_eq!(grown.text, small.text);
}

/// Several sequences generate together, each with its own sampler; a grammar holds every
/// output to a verdict.
#[test]
fn batched_generation_and_grammars() {
    use judgelab_core::verdict::{self, OutputKind};
    let grammar = verdict::grammar(OutputKind::Label, judgelab_core::Task::Pairwise, true);
    let requests: Vec<JudgeRequest> = (0..4)
        .map(|i| JudgeRequest {
            grammar: (i % 2 == 1).then(|| grammar.clone()),
            ..request(
                i,
                "Which is the capital of France? (A) Paris (B) Rome",
                1.0,
                6,
                i as u32,
            )
        })
        .collect();
    let responses = run(requests);
    assert_eq!(responses.len(), 4);
    for r in responses {
        let c = r.result.unwrap();
        if r.key % 2 == 1 {
            assert!(["A", "B", "tie"].contains(&c.text.as_str()), "{c:?}");
            assert_eq!(c.stop, StopReason::EndOfTurn, "{c:?}");
        } else {
            assert!(c.completion_tokens >= 1, "{c:?}");
        }
    }
}

/// llama.cpp's quantiser makes a variant of the default model (Q4_1) in another type: its
/// header says what it holds, it loads and judges; a type whose blocks do not fit some rows
/// gives them another type, as the source's shapes predict.
#[test]
fn the_quantiser_makes_variants_that_load() {
    use judgelab_core::quantization::{read_header, Quantization};
    let dir = tempfile::tempdir().unwrap();
    let source = model_path();
    let header = |p: &std::path::Path| read_header(&std::fs::read(p).unwrap()).unwrap();
    let source_header = header(&source);
    assert!(
        source_header.census().contains_key("Q4_1"),
        "{}",
        source_header.describe()
    );

    let q8 = dir.path().join("q8.gguf");
    judgelab_llama::quantize::quantize(&source, &q8, Quantization::Q8_0, 2).unwrap();
    let made = header(&q8);
    assert!(made.census()["Q8_0"] > 100, "{}", made.describe());
    assert_eq!(made.tensors.len(), source_header.tensors.len());
    assert!(!dir.path().join("q8.gguf.partial").exists());
    let judge = LlamaJudge::load(options(q8.clone())).expect("the Q8_0 variant loads");
    let mut out = Vec::new();
    judge.judge_batch(
        vec![request(0, "Reply with one word.", 0.0, 4, 1)],
        &Arc::new(AtomicBool::new(false)),
        &mut |r| out.push(r),
    );
    assert!(out[0].result.is_ok(), "{out:?}");

    // SmolLM2-135M's rows of 576 weights are no multiple of Q2_K's 256: those tensors fall
    // back to Q4_0 (the rows of 1,536 get Q3_K by Q2_K's own mix): its "Q2_K" holds no
    // Q2_K tensor at all, which is why the plan and the run say what a variant holds.
    let (misfits, rows) = source_header.misfits(Quantization::Q2K);
    assert!(misfits > 0 && rows.contains(&576), "{rows:?}");
    let q2 = dir.path().join("q2.gguf");
    judgelab_llama::quantize::quantize(&source, &q2, Quantization::Q2K, 2).unwrap();
    let census = header(&q2).census();
    assert!(census["Q4_0"] > 100, "{census:?}");
    assert!(std::fs::metadata(&q2).unwrap().len() < std::fs::metadata(&q8).unwrap().len());

    let missing = judgelab_llama::quantize::quantize(
        &dir.path().join("none.gguf"),
        &dir.path().join("x.gguf"),
        Quantization::Q4_0,
        2,
    );
    assert!(
        matches!(missing, Err(LlamaError::Quantize { .. })),
        "{missing:?}"
    );
}

/// A judge that decodes each call alone (`[judge] reproducible`: one sequence at a time, no
/// shared prefix) gives a prompt the same logits, bit for bit, alone, after another call
/// and beside others in a batch; a batched judge with a shared prefix moves them (measured
/// here: by about half a logit at most over the vocabulary).
#[test]
fn a_judge_decoding_alone_gives_a_prompt_the_same_logits_whatever_came_before() {
    let request = logits_request;
    let call = |judge: &LlamaJudge, requests: Vec<JudgeRequest>| {
        let out = completions(judge, requests);
        out.into_iter()
            .map(|c| c.logits.unwrap())
            .collect::<Vec<_>>()
    };
    let alone = LlamaJudge::load(LlamaOptions {
        parallel: 1,
        share_prefix: false,
        ..options(model_path())
    })
    .unwrap();
    let batched = LlamaJudge::load(LlamaOptions {
        parallel: 4,
        ..options(model_path())
    })
    .unwrap();
    let p = "Is water wet, and is that obvious to anyone who has been out in the rain?";
    let first = call(&alone, vec![request(0, p)]).remove(0);
    let after = call(&alone, vec![request(0, "Do cats bark?"), request(1, p)]).remove(1);
    let beside = call(
        &alone,
        vec![
            request(0, "Is fire hot?"),
            request(1, p),
            request(2, "Is ice cold?"),
        ],
    )
    .remove(1);
    assert!(first == after && first == beside);
    let moved = call(
        &batched,
        vec![
            request(0, "Do cats bark?"),
            request(1, "Is ice cold?"),
            request(2, p),
        ],
    )
    .remove(2);
    let most = first
        .iter()
        .zip(moved.iter())
        .map(|(x, y)| (x - y).abs())
        .fold(0f32, f32::max);
    assert!(most < 1.0, "{most}");
}

/// Where each token of a text starts lays the model's own pieces end to end: as many
/// starts as the text has tokens, on char boundaries, each piece the text between two; an
/// input cut to a budget by them (`core::cut`) is within it in the model's tokens.
#[test]
fn token_starts_lay_the_models_pieces_end_to_end() {
    let judge = judge();
    let texts = [
        "so , i 'm reading the latest film from studio ghibli",
        " a leading space, and naïve café déjà vu — with 日本語 and an emoji 🙂!",
        "",
    ];
    for text in texts {
        let starts = judge.token_starts(text).unwrap();
        let alone = |t: &str| {
            let m = [Message {
                role: "user".into(),
                content: t.into(),
            }];
            judge.count_tokens(&m).unwrap()
        };
        // The chat template's tokens around the text, counted on an empty message.
        let around = alone("");
        let n = alone(text) - around;
        assert!(
            starts.len().abs_diff(n) <= 1,
            "{text:?}: {starts:?} against {n}"
        );
        assert!(starts.windows(2).all(|w| w[0] <= w[1]), "{starts:?}");
        assert!(
            starts.iter().all(|&s| text.is_char_boundary(s)),
            "{starts:?}"
        );
        if !text.is_empty() {
            assert_eq!(starts[0], 0);
        }
    }
    let long: String = (0..200).map(|i| format!("word{i} ")).collect();
    let mut starts = |t: &str| judge.token_starts(t);
    let cut = judgelab_core::cut::head_tail(&long, 40, &mut starts)
        .unwrap()
        .expect("cut");
    let n = judge.token_starts(&cut.text).unwrap().len();
    assert!((30..=40).contains(&n), "{n} tokens: {}", cut.text);
    assert!(cut.text.starts_with("word0 word1") && cut.text.ends_with("word199 "));
}
