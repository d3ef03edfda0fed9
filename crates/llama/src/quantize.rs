//! A model file made in another type by llama.cpp's own quantiser (`llama_model_quantize`,
//! as its `llama-quantize` tool calls it): the quantisation axis's variants.

use std::ffi::CString;
use std::path::Path;

use judgelab_core::quantization::Quantization;

use crate::LlamaError;

/// llama.cpp's `llama_ftype` of a level; none for the source.
fn ftype(level: Quantization) -> Option<llama_cpp_sys_2::llama_ftype> {
    use llama_cpp_sys_2 as sys;
    Some(match level {
        Quantization::Source => return None,
        Quantization::F16 => sys::LLAMA_FTYPE_MOSTLY_F16,
        Quantization::Q8_0 => sys::LLAMA_FTYPE_MOSTLY_Q8_0,
        Quantization::Q6K => sys::LLAMA_FTYPE_MOSTLY_Q6_K,
        Quantization::Q5KM => sys::LLAMA_FTYPE_MOSTLY_Q5_K_M,
        Quantization::Q5_1 => sys::LLAMA_FTYPE_MOSTLY_Q5_1,
        Quantization::Q5_0 => sys::LLAMA_FTYPE_MOSTLY_Q5_0,
        Quantization::Q4KM => sys::LLAMA_FTYPE_MOSTLY_Q4_K_M,
        Quantization::Q4_1 => sys::LLAMA_FTYPE_MOSTLY_Q4_1,
        Quantization::Q4_0 => sys::LLAMA_FTYPE_MOSTLY_Q4_0,
        Quantization::Q3KM => sys::LLAMA_FTYPE_MOSTLY_Q3_K_M,
        Quantization::Q2K => sys::LLAMA_FTYPE_MOSTLY_Q2_K,
    })
}

/// Makes `out` from `source` in `level`'s type with `threads` threads. A source that is
/// quantised already is requantised (its tensors dequantised, then quantised again: the
/// errors stack); tensors whose rows the type's blocks do not fit get another type, as
/// llama.cpp decides. Writes beside `out` and renames, so that an interrupted run leaves
/// no partial file where a finished one is expected.
pub fn quantize(
    source: &Path,
    out: &Path,
    level: Quantization,
    threads: usize,
) -> Result<(), LlamaError> {
    let failed = |message: String| LlamaError::Quantize {
        path: source.display().to_string(),
        level: level.name(),
        message,
    };
    let ftype = ftype(level).ok_or_else(|| failed("the source is not made".into()))?;
    crate::setup::backend().map_err(failed)?;
    let partial = out.with_extension("gguf.partial");
    let c_path = |p: &Path| {
        CString::new(p.to_string_lossy().as_bytes())
            .map_err(|_| failed(format!("{} holds a NUL byte", p.display())))
    };
    let (c_source, c_partial) = (c_path(source)?, c_path(&partial)?);
    // SAFETY: the default parameters are plain data; the paths are NUL-terminated and
    // outlive the call, which reads them and the parameters only.
    let code = unsafe {
        let mut params = llama_cpp_sys_2::llama_model_quantize_default_params();
        params.nthread = i32::try_from(threads.max(1)).unwrap_or(1);
        params.ftype = ftype;
        params.allow_requantize = true;
        llama_cpp_sys_2::llama_model_quantize(c_source.as_ptr(), c_partial.as_ptr(), &params)
    };
    if code != 0 {
        let _ = std::fs::remove_file(&partial);
        return Err(failed(format!("llama_model_quantize returned {code}")));
    }
    std::fs::rename(&partial, out)
        .map_err(|e| failed(format!("cannot move it to {}: {e}", out.display())))
}
