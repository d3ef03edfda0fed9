//! What the local judge computes on: the CPU kernels this build of llama.cpp has, whether
//! this CPU can run them, and the devices (CPU, GPUs) llama.cpp sees.
//!
//! ggml's CPU kernels are compiled for the instruction sets that `.cargo/config.toml`
//! names (`GGML_AVX2 = "ON"`, …; x86-64-v3 on x86-64), while the Rust code stays at the
//! x86-64 baseline. So the binary starts on any x86-64 CPU, and [`check`] runs before
//! anything of llama.cpp does: on a CPU without those instructions a local model is
//! refused with an error naming what is missing, where calling into ggml would die of an
//! illegal instruction. The check reads the CPU with Rust's `is_x86_feature_detected!`
//! only, never with ggml's own code, which is itself compiled for the newer instructions.

/// One instruction set ggml's CPU kernels may be compiled for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Feature {
    /// As llama.cpp's system info names it (`AVX2`).
    pub name: &'static str,
    /// Whether this build's kernels use it.
    pub built: bool,
    /// Whether this CPU has it.
    pub present: bool,
}

/// A CPU that lacks instructions this build's kernels use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "this CPU lacks {missing}, which the local judge of this build needs: its llama.cpp \
     CPU kernels are built for {kernels}{cpus}; remote judges still work, and a build made \
     with `{off}` set runs local models here",
    missing = .missing.join(", "),
    off = .missing.iter().map(|name| format!("{}=OFF", variable(name))).collect::<Vec<_>>().join(" "),
    cpus = if .kernels == V3 { " (Intel Core from Haswell, 2013, and AMD from Excavator, 2015, on; not the Atom-based Pentium Silver and Celeron N chips before 2023)" } else { "" }
)]
pub struct UnsupportedCpu {
    pub missing: Vec<&'static str>,
    pub kernels: String,
}

/// The build variable of an instruction set (`AVX2` → `GGML_AVX2`).
fn variable(name: &str) -> String {
    format!("GGML_{}", name.replace('.', ""))
}

/// The x86-64-v3 level, as [`kernels`] names it.
const V3: &str = "x86-64-v3 (AVX2, FMA, F16C, BMI2)";

/// The instruction sets of ggml's x86 kernels, in llama.cpp's order: whether this build
/// has each (from the `GGML_*` variables the build saw) and whether this CPU does.
#[cfg(target_arch = "x86_64")]
pub fn features() -> Vec<Feature> {
    // A variable set to ON (CMake also accepts 1, TRUE, YES) builds that kernel.
    const fn on(value: Option<&str>) -> bool {
        match value {
            Some(v) => matches!(
                v.as_bytes(),
                b"ON" | b"on" | b"On" | b"1" | b"TRUE" | b"true" | b"YES" | b"yes"
            ),
            None => false,
        }
    }
    let forced = forced_features();
    let present = |name: &str, detected: bool| match &forced {
        Some(list) => list.iter().any(|f| f.eq_ignore_ascii_case(name)),
        None => detected,
    };
    // `option_env!` and `is_x86_feature_detected!` take literals, hence a macro.
    macro_rules! feature {
        ($name:literal, $variable:literal, $detect:tt) => {
            Feature {
                name: $name,
                built: on(option_env!($variable)),
                present: present($name, std::arch::is_x86_feature_detected!($detect)),
            }
        };
    }
    vec![
        feature!("SSE4.2", "GGML_SSE42", "sse4.2"),
        feature!("AVX", "GGML_AVX", "avx"),
        feature!("AVX2", "GGML_AVX2", "avx2"),
        feature!("F16C", "GGML_F16C", "f16c"),
        feature!("FMA", "GGML_FMA", "fma"),
        feature!("BMI2", "GGML_BMI2", "bmi2"),
        feature!("AVX512", "GGML_AVX512", "avx512f"),
    ]
}

/// On other architectures the kernels follow the target (for example Armv8 NEON on
/// aarch64), which the binary needs anyway: there is nothing to check.
#[cfg(not(target_arch = "x86_64"))]
pub fn features() -> Vec<Feature> {
    Vec::new()
}

/// `JUDGELAB_CPU_FEATURES`, a comma-separated list, makes the check believe this CPU has
/// only those instruction sets: how the tests see the refusal an older CPU gets.
fn forced_features() -> Option<Vec<String>> {
    let list = std::env::var("JUDGELAB_CPU_FEATURES").ok()?;
    Some(
        list.split(',')
            .map(|f| f.trim().to_string())
            .filter(|f| !f.is_empty())
            .collect(),
    )
}

/// The kernels this build has, as a person reads them: `x86-64-v3 (AVX2, FMA, F16C, BMI2)`
/// when it has exactly that level's instruction sets, else the list itself.
pub fn kernels() -> String {
    let features = features();
    if features.is_empty() {
        return std::env::consts::ARCH.to_string();
    }
    let built: Vec<&str> = features
        .iter()
        .filter(|f| f.built)
        .map(|f| f.name)
        .collect();
    let v3 = ["SSE4.2", "AVX", "AVX2", "F16C", "FMA", "BMI2"];
    if built.is_empty() {
        "x86-64 (SSE2)".to_string()
    } else if v3.iter().all(|f| built.contains(f)) {
        let extra: Vec<&str> = built.iter().copied().filter(|f| !v3.contains(f)).collect();
        if extra.is_empty() {
            V3.to_string()
        } else {
            format!("{V3} + {}", extra.join(", "))
        }
    } else {
        format!("x86-64 + {}", built.join(", "))
    }
}

/// Whether this CPU runs this build's kernels; call it before anything of llama.cpp.
pub fn check() -> Result<(), UnsupportedCpu> {
    let missing: Vec<&'static str> = features()
        .iter()
        .filter(|f| f.built && !f.present)
        .map(|f| f.name)
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(UnsupportedCpu {
            missing,
            kernels: kernels(),
        })
    }
}

/// What the local judge computes on: this build's CPU kernels, whether this CPU runs them,
/// and the devices llama.cpp sees.
#[derive(Debug, Clone, PartialEq)]
pub struct Compute {
    /// The CPU kernels of this build, as [`kernels`] names them.
    pub cpu_kernels: String,
    /// Why this CPU cannot run them, when it cannot (then no device is listed).
    pub unsupported: Option<UnsupportedCpu>,
    /// llama.cpp's devices: the CPU first, then any GPU of a `cuda` or `metal` build.
    pub devices: Vec<Device>,
    /// The GPU backend this build has (`CUDA`, `Metal`), found or not.
    pub gpu_build: Option<&'static str>,
}

/// The GPU backend of this build.
pub const GPU_BACKEND: Option<&str> = if cfg!(feature = "cuda") {
    Some("CUDA")
} else if cfg!(feature = "metal") {
    Some("Metal")
} else {
    None
};

/// A device llama.cpp can compute on.
#[derive(Debug, Clone, PartialEq)]
pub struct Device {
    /// llama.cpp's backend (`CPU`, `CUDA`, `Metal`).
    pub backend: String,
    /// Its description (the CPU's or the GPU's model name).
    pub description: String,
    pub memory_total: u64,
    pub gpu: bool,
}

/// Reads what the local judge computes on. It calls into llama.cpp only when [`check`]
/// passes.
pub fn compute() -> Compute {
    let unsupported = check().err();
    let devices = if unsupported.is_some() {
        Vec::new()
    } else {
        llama_cpp_2::list_llama_ggml_backend_devices()
            .into_iter()
            .map(|d| Device {
                gpu: matches!(
                    d.device_type,
                    llama_cpp_2::LlamaBackendDeviceType::Gpu
                        | llama_cpp_2::LlamaBackendDeviceType::IntegratedGpu
                ),
                backend: d.backend,
                description: d.description,
                memory_total: d.memory_total as u64,
            })
            .collect()
    };
    Compute {
        cpu_kernels: kernels(),
        unsupported,
        devices,
        gpu_build: GPU_BACKEND,
    }
}

impl Compute {
    /// One line for a person: `CPU kernels x86-64-v3 (AVX2, FMA, F16C, BMI2) on AMD EPYC`,
    /// with the GPUs of a GPU build (or that it found none: a CUDA build on a machine
    /// without an NVIDIA GPU or its driver judges on the CPU), or why this CPU cannot run
    /// the local judge.
    pub fn summary(&self) -> String {
        if let Some(problem) = &self.unsupported {
            return format!("local judge unavailable: {problem}");
        }
        let cpu = self
            .devices
            .iter()
            .find(|d| d.backend == "CPU")
            .map_or(String::new(), |d| format!(" on {}", d.description.trim()));
        let mut line = format!("CPU kernels {}{cpu}", self.cpu_kernels);
        let gpus: Vec<String> = self
            .devices
            .iter()
            .filter(|d| d.gpu)
            .map(|d| {
                format!(
                    "{} {} ({:.0} GiB)",
                    d.backend,
                    d.description.trim(),
                    d.memory_total as f64 / f64::from(1u32 << 30)
                )
            })
            .collect();
        if !gpus.is_empty() {
            line += &format!("; GPU {}", gpus.join(", "));
        } else if let Some(backend) = self.gpu_build {
            line += &format!(
                "; this {backend} build found no {backend} device (no GPU, or no driver): \
                 local models run on the CPU"
            );
        }
        line
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;

    #[test]
    fn this_build_has_the_x86_64_v3_kernels() {
        // `.cargo/config.toml` asks for them; a build that lost them is 3× slower.
        let built: Vec<&str> = features()
            .iter()
            .filter(|f| f.built)
            .map(|f| f.name)
            .collect();
        assert_eq!(built, ["SSE4.2", "AVX", "AVX2", "F16C", "FMA", "BMI2"]);
        assert_eq!(kernels(), V3);
    }

    #[test]
    fn a_gpu_build_without_its_device_says_it_runs_on_the_cpu() {
        let cpu = Device {
            backend: "CPU".into(),
            description: "AMD EPYC".into(),
            memory_total: 0,
            gpu: false,
        };
        let mut compute = Compute {
            cpu_kernels: V3.into(),
            unsupported: None,
            devices: vec![cpu],
            gpu_build: Some("CUDA"),
        };
        assert_eq!(
            compute.summary(),
            "CPU kernels x86-64-v3 (AVX2, FMA, F16C, BMI2) on AMD EPYC; this CUDA build found \
             no CUDA device (no GPU, or no driver): local models run on the CPU"
        );
        compute.devices.push(Device {
            backend: "CUDA".into(),
            description: "NVIDIA H200".into(),
            memory_total: 150 << 30,
            gpu: true,
        });
        assert!(compute
            .summary()
            .ends_with("; GPU CUDA NVIDIA H200 (150 GiB)"));
        compute.gpu_build = None;
        compute.devices.truncate(1);
        assert!(compute.summary().ends_with("on AMD EPYC"));
    }
}
