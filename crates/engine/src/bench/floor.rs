//! The floors a benchmark's run is held against: a plain llama.cpp loop decodes the run's
//! prompts whole, one sequence on a cleared cache, no engine and no store, as llama-bench
//! measures prompt processing. The *build's* floor runs the loop over Judgelab's own
//! llama.cpp (`judgelab_llama::bench`); the *hardware's* floor runs it over llama.cpp
//! from the same vendored source built for this machine's own instruction set
//! (`judgelab-floor`, `crates/llama/floor`, which `cargo xtask bench` builds once into the
//! user cache and passes), on the token ids the build's loop decoded. Each floor's tokens
//! per second divide the least work of the run (the prompts' shared prefix once plus each
//! item's suffix once) into a wall time.
//!
//! Both benchmarks measure their floors right after their run, so that the ratio compares
//! two measurements minutes apart at most on a shared, noisy host.

use std::path::Path;
use std::process::Command;

use judgelab_core::Message;
use serde::{Deserialize, Serialize};

use crate::EngineError;

/// The floors of one run's prompts; in `judgelab bench --json` its fields sit beside the
/// ways'.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Floors {
    /// The shared prefix once plus each item's suffix once.
    pub min_prompt_tokens: u64,
    /// `min_prompt_tokens` at the speed of the hardware's floor, or of the build's where
    /// the hardware's was not measured.
    pub floor_wall_s: f64,
    pub floor_tokens_per_s: f64,
    /// Which floor `floor_wall_s` is: `hardware` or `build`.
    pub floor: &'static str,
    /// The plain loop over Judgelab's own llama.cpp build.
    pub build_floor_wall_s: f64,
    pub build_floor_tokens_per_s: f64,
    /// The CPU kernels of Judgelab's build (`x86-64-v3 (AVX2, FMA, F16C, BMI2)`).
    pub build_kernels: String,
    /// The plain loop over llama.cpp built for this machine, where measured.
    pub hardware_floor_wall_s: Option<f64>,
    pub hardware_floor_tokens_per_s: Option<f64>,
    /// llama.cpp's list of the instruction sets the native build uses.
    pub hardware_kernels: Option<String>,
}

/// What the native build measured.
#[derive(Debug, Clone, PartialEq, Deserialize)]
struct HardwareFloor {
    tokens: usize,
    seconds: f64,
    /// llama.cpp's own list of the instruction sets the build uses (`AVX2 = 1 | …`).
    system_info: String,
}

/// Measures both floors of `prompts` (one per item, in the model's chat template) with
/// the model at `model`; the hardware's only where `tool` is given. The token ids the
/// tool reads are written to `dir`.
pub(crate) async fn measure(
    model: &Path,
    prompts: Vec<Vec<Message>>,
    threads: Option<usize>,
    tool: Option<&Path>,
    dir: &Path,
    on_phase: &mut (dyn FnMut(&'static str) + Send),
) -> Result<Floors, EngineError> {
    on_phase("floor");
    let n = prompts.len() as u64;
    let build = tokio::task::spawn_blocking({
        let model = model.to_path_buf();
        move || judgelab_llama::bench::plain_prefill(&model, &prompts, threads)
    })
    .await
    .map_err(|e| EngineError::Judge(format!("the floor loop panicked: {e}")))?
    .map_err(EngineError::Judge)?;
    let min_prompt_tokens = build.tokens as u64 - n.saturating_sub(1) * build.shared_prefix as u64;
    let hardware = match tool {
        Some(tool) => {
            on_phase("hardware floor");
            let measured = native(tool, model, &build.token_ids, threads, dir)?;
            if measured.tokens != build.tokens {
                return Err(EngineError::Judge(format!(
                    "the floor tool decoded {} tokens where this build's loop decoded {}",
                    measured.tokens, build.tokens
                )));
            }
            Some(measured)
        }
        None => None,
    };
    // The least work at each floor's speed.
    let at = |tokens: usize, seconds: f64| min_prompt_tokens as f64 * seconds / tokens as f64;
    let build_floor_wall_s = at(build.tokens, build.seconds);
    let hardware_floor_wall_s = hardware.as_ref().map(|h| at(h.tokens, h.seconds));
    let floor_wall_s = hardware_floor_wall_s.unwrap_or(build_floor_wall_s);
    Ok(Floors {
        min_prompt_tokens,
        floor_wall_s,
        floor_tokens_per_s: min_prompt_tokens as f64 / floor_wall_s.max(1e-9),
        floor: if hardware.is_some() {
            "hardware"
        } else {
            "build"
        },
        build_floor_wall_s,
        build_floor_tokens_per_s: build.tokens_per_second(),
        build_kernels: judgelab_llama::compute::kernels(),
        hardware_floor_wall_s,
        hardware_floor_tokens_per_s: hardware
            .as_ref()
            .map(|h| h.tokens as f64 / h.seconds.max(1e-9)),
        hardware_kernels: hardware.map(|h| h.system_info),
    })
}

/// Runs `tool` on the prompts' token ids (written to `dir`), with the model and threads
/// the rest of the benchmark uses.
fn native(
    tool: &Path,
    model: &Path,
    token_ids: &[Vec<i32>],
    threads: Option<usize>,
    dir: &Path,
) -> Result<HardwareFloor, EngineError> {
    let file = dir.join("floor-tokens.txt");
    let text: String = token_ids
        .iter()
        .map(|ids| {
            let line: Vec<String> = ids.iter().map(i32::to_string).collect();
            line.join(" ") + "\n"
        })
        .collect();
    std::fs::write(&file, text).map_err(|source| EngineError::Io {
        path: file.display().to_string(),
        source,
    })?;
    let threads =
        threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()));
    let shown = tool.display().to_string();
    let output = Command::new(tool)
        .arg(model)
        .arg(&file)
        .arg(threads.to_string())
        .output()
        .map_err(|e| EngineError::Judge(format!("cannot start the floor tool {shown}: {e}")))?;
    if !output.status.success() {
        return Err(EngineError::Judge(format!(
            "the floor tool {shown} failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        )));
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    serde_json::from_str(stdout.trim()).map_err(|e| {
        EngineError::Judge(format!(
            "the floor tool {shown} printed {:?}, not its JSON line: {e}",
            stdout.trim()
        ))
    })
}
