//! The hardware's floor: `judgelab-floor` (`crates/llama/floor`), llama.cpp from the same
//! vendored source built for this machine's own instruction set, decodes the token ids
//! that Judgelab's plain loop decoded, the same way (each prompt whole). `cargo xtask bench` builds it once
//! into the user cache and passes its path.

use std::path::Path;
use std::process::Command;

use serde::Deserialize;

use crate::EngineError;

/// What the native build measured.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(crate) struct HardwareFloor {
    pub tokens: usize,
    pub seconds: f64,
    /// llama.cpp's own list of the instruction sets the build uses (`AVX2 = 1 | …`).
    pub system_info: String,
}

/// Runs `tool` on the prompts' token ids (written to `dir`), with the model and threads
/// the rest of the benchmark uses.
pub(crate) fn measure(
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
