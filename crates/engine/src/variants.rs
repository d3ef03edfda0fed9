//! The quantisation axis's model files: each local judge's file made in each type the
//! sweep asks for by llama.cpp's own quantiser, once, into the model cache where
//! [`ResolvedJudge::variants`] placed it; a variant's own sha256 is its identity in every
//! trial and verdict row. `run --plan` says what would be made and makes nothing.

use std::path::Path;
use std::time::Instant;

use judgelab_core::quantization;

use crate::resolve::Resolved;
use crate::{EngineError, RunEvent};

/// Makes each variant of `r`'s judges that the cache does not hold yet (in turn, with
/// `threads` threads, saying so as it goes), and reads every variant's sha256.
pub(crate) async fn make(
    r: &mut Resolved,
    threads: usize,
    on_event: &mut (dyn FnMut(RunEvent) + Send),
) -> Result<(), EngineError> {
    for j in r.judges.iter_mut() {
        let Some((source, _)) = j.made_from.clone() else {
            continue;
        };
        if !j.path.is_file() {
            on_event(RunEvent::Quantizing {
                judge: j.name().to_string(),
                level: j.level.name().to_string(),
                source: source.display().to_string(),
            });
            let (level, out) = (j.level, j.path.clone());
            let started = Instant::now();
            let made = {
                let out = out.clone();
                tokio::task::spawn_blocking(move || {
                    if let Some(dir) = out.parent() {
                        std::fs::create_dir_all(dir).map_err(|e| {
                            EngineError::Judge(format!("cannot create {}: {e}", dir.display()))
                        })?;
                    }
                    judgelab_llama::quantize::quantize(&source, &out, level, threads)
                        .map_err(EngineError::from)
                })
            };
            made.await
                .map_err(|e| EngineError::Judge(format!("the quantiser panicked: {e}")))??;
            on_event(RunEvent::Quantized {
                judge: j.name().to_string(),
                level: j.level.name().to_string(),
                path: out.display().to_string(),
                bytes: std::fs::metadata(&out).map_or(0, |m| m.len()),
                seconds: started.elapsed().as_secs_f64(),
                tensors: tensors(&out),
            });
        }
        let path = j.path.clone();
        j.sha256 = tokio::task::spawn_blocking(move || crate::check_model(&path))
            .await
            .map_err(|e| EngineError::Judge(format!("hashing panicked: {e}")))??;
    }
    Ok(())
}

/// What a GGUF file's tensors are, in words (`150 Q4_0, 61 F32`); empty where its header
/// cannot be read.
pub(crate) fn tensors(path: &Path) -> String {
    header(path).map_or(String::new(), |h| h.describe())
}

/// The type most of a model file's tensors have (`Q4_1`, `F16`).
pub(crate) fn main_type(header: &quantization::Header) -> Option<String> {
    header
        .census()
        .into_iter()
        .max_by_key(|(_, n)| *n)
        .map(|(kind, _)| kind)
}

/// A GGUF file's header: the first 32 MiB hold it for any model this tool loads (the
/// vocabulary is the largest part).
pub(crate) fn header(path: &Path) -> Option<quantization::Header> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(32 << 20)
        .read_to_end(&mut bytes)
        .ok()?;
    quantization::read_header(&bytes).ok()
}

/// What the plan says of `r`'s variants: per level, whether it is made already, and the
/// weight matrices whose rows its type's blocks do not fit (llama.cpp gives them another
/// type); that a quantised source is requantised. Empty without a quantisation axis.
pub(crate) fn plan_lines(r: &Resolved) -> Vec<String> {
    let mut lines = Vec::new();
    for j in r.judges.iter().filter(|j| j.made_from.is_some()) {
        let (source, _) = j.made_from.as_ref().expect("filtered");
        let source_header = header(source);
        let made = j.path.is_file();
        let mut line = format!(
            "quantization {} of judge {:?}: {}",
            j.level.name(),
            j.name(),
            if made {
                format!("made already ({})", j.path.display())
            } else {
                format!(
                    "made on the first run from {} by llama.cpp's quantiser, into {}",
                    source.display(),
                    j.path.display()
                )
            }
        );
        if let Some(h) = &source_header {
            if let Some(main) =
                main_type(h).filter(|k| !matches!(k.as_str(), "F32" | "F16" | "BF16"))
            {
                line += &format!(
                    "; the source is quantised already (mostly {main}): requantising stacks its errors"
                );
            }
            let (misfits, rows) = h.misfits(j.level);
            if misfits > 0 {
                let rows: Vec<String> = rows.iter().map(u64::to_string).collect();
                line += &format!(
                    "; {misfits} weight matrices have rows of {} weights, not a multiple of {}'s blocks of {}: llama.cpp makes them another type",
                    rows.join(" or "),
                    j.level.tensor_type().unwrap_or(""),
                    j.level
                        .tensor_type()
                        .and_then(quantization::block_size)
                        .unwrap_or(0)
                );
            }
        }
        lines.push(line);
    }
    lines
}
