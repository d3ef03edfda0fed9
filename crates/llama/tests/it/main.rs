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

/// `judgelab_core::sampling` against llama.cpp itself: 2,000 draws per setting from one
/// forward pass, each token's frequency within 4 standard errors of its exact probability.
#[test]
fn exact_distributions_match_the_real_sampler() {
    use judgelab_core::sampling::Ranked;

    let messages = [
        Message {
            role: "system".into(),
            content: "You compare two answers. Reply with A or B only.".into(),
        },
        Message {
            role: "user".into(),
            content: "Question: What is the capital of France?\nAnswer A: Paris.\nAnswer B: Lyon.\nWhich answer is better?".into(),
        },
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
    let draws = judgelab_llama::draws::draw(&model_path(), &messages, &settings, None, n).unwrap();
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
            let sigma = (p * (1.0 - p) / n as f64).sqrt();
            assert!(
                (f - p).abs() <= 4.0 * sigma + 0.002,
                "token {token} at {s:?}: drawn {f:.4}, exact {p:.4}"
            );
        }
        let compared = exact.iter().filter(|(_, p)| *p >= 0.01).count();
        assert!(
            compared >= 2,
            "a setting with one likely token tests little: {s:?}"
        );
    }
}
