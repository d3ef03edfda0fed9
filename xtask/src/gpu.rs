//! `cargo xtask gpu cuda`: the local judge for NVIDIA GPUs, built on any Linux machine,
//! with or without a GPU; `cargo xtask gpu check` packs that build for the device check.
//!
//! The CUDA toolkit comes from NVIDIA's PyPI wheels (compiler, runtime, cuBLAS, headers),
//! unpacked once into `<user cache>/judgelab/cuda-13.0` and laid out as CMake's
//! `FindCUDAToolkit` expects (`bin/nvcc`, `include`, `lib64`). `judgelab` is then built
//! with `--features cuda` for a stated set of GPU architectures, in a target directory of
//! its own for each set (llama.cpp's CMake build does not notice a changed set), and
//! gathered with the llama.cpp libraries it loads into `judgelab-cuda/` beside it: the
//! binary finds them next to itself, and the CUDA runtime and cuBLAS in the toolkit here
//! or on the machine's library path elsewhere.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{bail, Context, Result};

use crate::{cache_dir, cargo, run, shown};

/// The CUDA line: the H200 this project can borrow has a CUDA 13 driver, and a driver
/// runs programs built for its own line or older.
pub const CUDA_VERSION: &str = "13.0";
/// NVIDIA's wheels of the toolkit's parts, pinned: nvcc needs `crt` (its host headers)
/// and `nvvm` (`cicc`, libdevice); ggml needs the runtime, cuBLAS and CCCL's headers.
const CUDA_WHEELS: &[&str] = &[
    "nvidia-cuda-nvcc==13.0.88",
    "nvidia-cuda-crt==13.0.88",
    "nvidia-nvvm==13.0.88",
    "nvidia-cuda-runtime==13.0.96",
    "nvidia-cuda-cccl==13.0.85",
    "nvidia-cublas==13.0.2.14",
];
/// Where the wheels keep the toolkit (`nvidia/cu13/bin/nvcc`, …).
const WHEEL_ROOT: &str = "nvidia/cu13/";
/// The shared libraries linked by name at build time, which the wheels carry only under
/// their versioned names.
const UNVERSIONED: &[&str] = &["libcudart.so", "libcublas.so", "libcublasLt.so"];
/// Ampere (A100, RTX 30xx, and by binary compatibility A10, L4, RTX 40xx: sm_86/89) as
/// machine code, Hopper (H100, H200) as machine code and as PTX, which newer GPUs
/// compile when they load it. CMake's `CMAKE_CUDA_ARCHITECTURES` syntax.
pub const DEFAULT_ARCHS: &str = "80-real;90";

pub const USAGE: &str = "usage: cargo xtask gpu cuda [--arch LIST] [--test]
       cargo xtask gpu check [--arch LIST]

  cuda   install the CUDA toolkit from NVIDIA's PyPI wheels into the user cache (once),
         build judgelab with --features cuda for the GPU architectures LIST (CMake's
         syntax, default \"80-real;90\"), and gather it with its llama.cpp libraries in
         <user cache>/judgelab/target-cuda-<LIST>/judgelab-cuda; --test also runs the
         CLI's exact-sweep test with that build
  check  build as `cuda` does, then pack the stripped build and tools/gpu-check.sh into
         .gpu-check/ for one call of the device tool (see README, \"CUDA\")";

/// `cargo xtask gpu cuda …` (`gpu check` is [`crate::gpu_check::main`]).
pub fn main(args: &[String]) -> Result<()> {
    let (what, rest) = args
        .split_first()
        .map_or(("", &[][..]), |(w, r)| (w.as_str(), r));
    if what != "cuda" {
        bail!("{USAGE}");
    }
    let options = Options::parse(rest)?;
    let build = cuda(&options.archs)?;
    if options.test {
        build.test()?;
    }
    Ok(())
}

/// The options of `gpu cuda` and `gpu check`.
pub struct Options {
    /// The GPU architectures, in CMake's syntax.
    pub archs: String,
    /// Run the CLI's exact-sweep test with the build.
    pub test: bool,
}

impl Options {
    pub fn parse(args: &[String]) -> Result<Options> {
        let mut options = Options {
            archs: DEFAULT_ARCHS.to_string(),
            test: false,
        };
        let mut rest = args.iter();
        while let Some(arg) = rest.next() {
            match arg.as_str() {
                "--arch" => options.archs = rest.next().context("--arch needs a list")?.clone(),
                "--test" => options.test = true,
                other => bail!("unknown argument {other:?}\n\n{USAGE}"),
            }
        }
        Ok(options)
    }
}

/// A CUDA build: its target directory, the environment it was built in, and the folder
/// with the binary and its libraries.
pub struct CudaBuild {
    pub target: PathBuf,
    pub dist: PathBuf,
    pub toolkit: PathBuf,
    pub archs: String,
    /// llama-cpp-sys-2's llama.cpp sources (headers for the floor tool).
    pub llama_src: PathBuf,
}

/// The CUDA build for `archs`: the toolkit installed, judgelab built and gathered.
pub fn cuda(archs: &str) -> Result<CudaBuild> {
    if !cfg!(target_os = "linux") {
        bail!("`gpu cuda` builds on Linux; on Windows, install the CUDA toolkit and run `cargo build -p judgelab-cli --features cuda`");
    }
    crate::deps()?;
    let toolkit = toolkit()?;
    build(&toolkit, archs)
}

/// The toolkit in the user cache, installed from PyPI unless the same wheels are there.
pub fn toolkit() -> Result<PathBuf> {
    let dir = cache_dir()?.join(format!("cuda-{CUDA_VERSION}"));
    let stamp = dir.join(".judgelab-wheels");
    let nvcc = dir.join("bin").join("nvcc");
    let nvcc_runs = || {
        Command::new(&nvcc)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if std::fs::read_to_string(&stamp).ok().as_deref() == Some(&CUDA_WHEELS.join("\n"))
        && nvcc_runs()
    {
        return Ok(dir);
    }
    let partial = dir.with_file_name(format!("cuda-{CUDA_VERSION}.partial"));
    let _ = std::fs::remove_dir_all(&partial);
    let download = partial.join("wheels");
    std::fs::create_dir_all(&download)
        .with_context(|| format!("while creating {}", download.display()))?;
    eprintln!(
        "installing the CUDA {CUDA_VERSION} toolkit from NVIDIA's PyPI wheels into {} (once: about 525 MB to download, 840 MB unpacked)",
        dir.display()
    );
    run(Command::new("python3")
        .args(["-m", "pip", "download", "--no-deps", "--no-input"])
        .args(["--only-binary=:all:", "--disable-pip-version-check"])
        .args(["--timeout", "60", "--retries", "2", "-d"])
        .arg(&download)
        .args(CUDA_WHEELS))
    .context("cannot download the CUDA toolkit's wheels: pip needs to reach PyPI")?;
    let wheels: Vec<PathBuf> = std::fs::read_dir(&download)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "whl"))
        .collect();
    if wheels.len() != CUDA_WHEELS.len() {
        bail!(
            "pip downloaded {} wheels into {}, expected {}",
            wheels.len(),
            download.display(),
            CUDA_WHEELS.len()
        );
    }
    unpack(&wheels, &partial)?;
    std::fs::remove_dir_all(&download)?;
    layout(&partial)?;
    std::fs::write(partial.join(".judgelab-wheels"), CUDA_WHEELS.join("\n"))?;
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::rename(&partial, &dir)
        .with_context(|| format!("while moving the toolkit to {}", dir.display()))?;
    if !nvcc_runs() {
        bail!("{} was installed but does not run", nvcc.display());
    }
    Ok(dir)
}

/// Unpacks the toolkit's part of each wheel (`nvidia/cu13/…`) into `dir`, keeping the
/// files' modes (nvcc, ptxas, cicc are programs).
pub fn unpack(wheels: &[PathBuf], dir: &Path) -> Result<()> {
    let script = "import os, shutil, sys, zipfile
root, dst = sys.argv[1], sys.argv[2]
for wheel in sys.argv[3:]:
    with zipfile.ZipFile(wheel) as z:
        for info in z.infolist():
            name = info.filename
            if info.is_dir() or not name.startswith(root) or name.startswith(root + '.metadata/'):
                continue
            path = os.path.join(dst, name[len(root):])
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with z.open(info) as src, open(path, 'wb') as out:
                shutil.copyfileobj(src, out, 1 << 20)
            mode = (info.external_attr >> 16) & 0o777
            if mode:
                os.chmod(path, mode)";
    eprintln!("unpacking {} wheels into {}", wheels.len(), dir.display());
    let status = Command::new("python3")
        .args(["-c", script, WHEEL_ROOT])
        .arg(dir)
        .args(wheels)
        .status()
        .context("while starting python3 to unpack the CUDA wheels")?;
    if !status.success() {
        bail!(
            "unpacking the CUDA wheels into {} failed with {status}",
            dir.display()
        );
    }
    Ok(())
}

/// Lays an unpacked toolkit out as a CUDA installation: `lib64` beside `lib`, and the
/// unversioned names of the libraries linked by name (`libcublas.so` → `libcublas.so.13`).
pub fn layout(dir: &Path) -> Result<()> {
    for needed in ["bin/nvcc", "nvvm/bin/cicc", "include/cuda_runtime.h", "lib"] {
        if !dir.join(needed).exists() {
            bail!("the CUDA wheels left no {needed} in {}", dir.display());
        }
    }
    let lib = dir.join("lib");
    let lib64 = dir.join("lib64");
    if !lib64.exists() {
        std::os::unix::fs::symlink("lib", &lib64)?;
    }
    for name in UNVERSIONED {
        let versioned = std::fs::read_dir(&lib)?
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|f| f.strip_prefix(name).is_some_and(|v| v.starts_with('.')))
            .min_by_key(|f| f.len())
            .with_context(|| format!("the CUDA wheels have no {name}.*"))?;
        let link = lib.join(name);
        if link.symlink_metadata().is_err() {
            std::os::unix::fs::symlink(&versioned, &link)?;
        }
    }
    Ok(())
}

/// The folder name of an architecture list (`80-real;90` → `80-real_90`).
pub fn archs_slug(archs: &str) -> Result<String> {
    let ok = !archs.is_empty()
        && archs
            .split(';')
            .all(|a| !a.is_empty() && a.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'));
    if !ok {
        bail!("--arch {archs:?}: give CMake's list of GPU architectures, such as \"80-real;90\" or \"86\"");
    }
    Ok(archs.replace(';', "_"))
}

impl CudaBuild {
    /// The environment of a CUDA build: the toolkit, the architectures, and a run path
    /// that finds the llama.cpp libraries beside the binary and the toolkit's runtime and
    /// cuBLAS here (an `RPATH`, not a `RUNPATH`: it serves the libraries' own needs too,
    /// and `LD_LIBRARY_PATH` still finds a machine's own copies where this toolkit is not).
    fn command(&self, program: Command) -> Command {
        let mut cmd = program;
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut paths = vec![self.toolkit.join("bin")];
        paths.extend(std::env::split_paths(&path));
        cmd.env("PATH", std::env::join_paths(paths).expect("PATH entries"))
            .env("CUDA_PATH", &self.toolkit)
            .env("CUDAToolkit_ROOT", &self.toolkit)
            .env("CMAKE_CUDA_COMPILER", self.toolkit.join("bin").join("nvcc"))
            .env("CMAKE_CUDA_ARCHITECTURES", &self.archs)
            .env("CARGO_TARGET_DIR", &self.target)
            .env(
                "RUSTFLAGS",
                format!(
                    "-C link-arg=-Wl,--disable-new-dtags,-rpath,$ORIGIN:{}",
                    self.toolkit.join("lib").display()
                ),
            );
        cmd
    }

    /// The CLI's exact-sweep test, run with this build on this machine's CPU (or GPU).
    pub fn test(&self) -> Result<()> {
        crate::fetch_model_with(&self.dist.join("judgelab"))?;
        let mut cmd = cargo();
        cmd.args(["test", "-p", "judgelab-cli", "--features", "cuda"])
            .args(["--test", "it", "an_exact_grid_costs_the_calls_of_one_point"]);
        run(&mut self.command(cmd))
    }
}

fn build(toolkit: &Path, archs: &str) -> Result<CudaBuild> {
    let target = cache_dir()?.join(format!("target-cuda-{}", archs_slug(archs)?));
    let mut build = CudaBuild {
        target: target.clone(),
        dist: target.join("judgelab-cuda"),
        toolkit: toolkit.to_path_buf(),
        archs: archs.to_string(),
        llama_src: PathBuf::new(),
    };
    eprintln!(
        "building judgelab for CUDA {CUDA_VERSION}, GPU architectures {archs}, in {} (the first build compiles llama.cpp's CUDA kernels: 40 minutes to an hour on two cores)",
        target.display()
    );
    let mut cmd = cargo();
    cmd.args(["build", "-p", "judgelab-cli", "--features", "cuda"])
        .arg("--message-format=json-render-diagnostics")
        .stdout(Stdio::piped());
    let mut cmd = build.command(cmd);
    eprintln!("$ {}", shown(&cmd));
    let start = Instant::now();
    let mut child = cmd.spawn().context("while starting cargo build")?;
    let stdout = child.stdout.take().expect("piped stdout");
    let (mut out_dir, mut binary) = (None, None);
    for line in BufReader::new(stdout).lines() {
        let message: serde_json::Value = match serde_json::from_str(&line?) {
            Ok(m) => m,
            Err(_) => continue,
        };
        let package = message["package_id"].as_str().unwrap_or_default();
        match message["reason"].as_str() {
            Some("build-script-executed") if package.contains("llama-cpp-sys-2") => {
                out_dir = message["out_dir"].as_str().map(PathBuf::from);
            }
            Some("compiler-artifact") if message["target"]["name"] == "judgelab" => {
                binary = message["executable"].as_str().map(PathBuf::from);
            }
            _ => {}
        }
    }
    let status = child.wait()?;
    if !status.success() {
        bail!("the CUDA build failed with {status}");
    }
    let out_dir = out_dir.context("cargo reported no build of llama-cpp-sys-2")?;
    let binary = binary.context("cargo reported no judgelab binary")?;
    build.llama_src = llama_src(&out_dir)?;
    gather(&binary, &out_dir, &build.dist)?;
    let size = |p: &Path| std::fs::metadata(p).map_or(0, |m| m.len());
    // Each library once: its other names are links.
    let total: u64 = std::fs::read_dir(&build.dist)?
        .filter_map(|e| e.ok())
        .filter_map(|e| e.path().symlink_metadata().ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum();
    eprintln!(
        "built in {:.0} s: {} ({:.0} MB with its libraries; the binary {:.0} MB, the CUDA kernels {:.0} MB)",
        start.elapsed().as_secs_f64(),
        build.dist.display(),
        total as f64 / 1e6,
        size(&build.dist.join("judgelab")) as f64 / 1e6,
        size(&build.dist.join("libggml-cuda.so")) as f64 / 1e6,
    );
    let judgelab = build.dist.join("judgelab");
    run(Command::new(&judgelab).arg("info"))
        .with_context(|| format!("the CUDA build {} does not start", judgelab.display()))?;
    Ok(build)
}

/// The llama.cpp source tree llama-cpp-sys-2 built from (its `OUT_DIR` is
/// `…/build/llama-cpp-sys-2-HASH/out`; the sources are in the registry).
fn llama_src(out_dir: &Path) -> Result<PathBuf> {
    let cache = out_dir.join("build").join("CMakeCache.txt");
    let text = std::fs::read_to_string(&cache)
        .with_context(|| format!("while reading {}", cache.display()))?;
    text.lines()
        .find_map(|l| l.strip_prefix("CMAKE_HOME_DIRECTORY:INTERNAL="))
        .map(PathBuf::from)
        .context("llama.cpp's CMake cache names no source folder")
}

/// Copies the binary and the shared libraries of llama.cpp's build into `dist`, afresh
/// (a copy the crate hard-linked into the target directory may be stale), with the
/// debug information stripped.
fn gather(binary: &Path, out_dir: &Path, dist: &Path) -> Result<()> {
    let _ = std::fs::remove_dir_all(dist);
    std::fs::create_dir_all(dist)?;
    let mut libs = Vec::new();
    for lib_dir in ["lib", "lib64"] {
        let Ok(entries) = std::fs::read_dir(out_dir.join(lib_dir)) else {
            continue;
        };
        for entry in entries.filter_map(|e| e.ok()) {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.contains(".so") {
                libs.push(entry.path());
            }
        }
    }
    if !libs.iter().any(|l| l.ends_with("libggml-cuda.so")) {
        bail!(
            "llama.cpp's build in {} made no libggml-cuda.so",
            out_dir.display()
        );
    }
    for lib in &libs {
        let to = dist.join(lib.file_name().expect("a file"));
        let meta = lib.symlink_metadata()?;
        if meta.file_type().is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(lib)?, &to)?;
        } else {
            std::fs::copy(lib, &to)?;
        }
    }
    std::fs::copy(binary, dist.join("judgelab"))?;
    let mut strip = Command::new("strip");
    strip.arg("--strip-debug").arg(dist.join("judgelab"));
    for lib in &libs {
        let to = dist.join(lib.file_name().expect("a file"));
        if !to.symlink_metadata()?.file_type().is_symlink() {
            strip.arg(to);
        }
    }
    run(&mut strip)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A wheel as NVIDIA lays one out, with the given files.
    fn wheel(dir: &Path, name: &str, files: &[(&str, u32)]) -> PathBuf {
        let path = dir.join(name);
        let script = "import sys, zipfile
with zipfile.ZipFile(sys.argv[1], 'w') as z:
    for spec in sys.argv[2:]:
        name, mode = spec.split('=')
        info = zipfile.ZipInfo(name)
        info.external_attr = int(mode, 8) << 16
        z.writestr(info, b'x')";
        let status = Command::new("python3")
            .args(["-c", script])
            .arg(&path)
            .args(files.iter().map(|(f, m)| format!("{f}={m:o}")))
            .status()
            .expect("python3");
        assert!(status.success());
        path
    }

    #[test]
    fn wheels_unpack_into_the_layout_cmake_finds() {
        let tmp = std::env::temp_dir().join(format!("xtask-cuda-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&tmp).unwrap();
        let nvcc = wheel(
            &tmp,
            "nvcc.whl",
            &[
                ("nvidia/cu13/bin/nvcc", 0o755),
                ("nvidia/cu13/.metadata/sizes.txt", 0o644),
                ("nvidia_cuda_nvcc-13.0.88.dist-info/METADATA", 0o644),
            ],
        );
        let nvvm = wheel(&tmp, "nvvm.whl", &[("nvidia/cu13/nvvm/bin/cicc", 0o755)]);
        let runtime = wheel(
            &tmp,
            "runtime.whl",
            &[
                ("nvidia/cu13/include/cuda_runtime.h", 0o644),
                ("nvidia/cu13/lib/libcudart.so.13", 0o644),
            ],
        );
        let cublas = wheel(
            &tmp,
            "cublas.whl",
            &[
                ("nvidia/cu13/lib/libcublas.so.13", 0o644),
                ("nvidia/cu13/lib/libcublasLt.so.13", 0o644),
            ],
        );
        let dir = tmp.join("cuda");
        unpack(&[nvcc, nvvm, runtime.clone()], &dir).unwrap();
        // Without cuBLAS the layout is refused, naming what is missing.
        let err = layout(&dir).unwrap_err().to_string();
        assert!(err.contains("libcublas.so"), "{err}");
        unpack(&[cublas], &dir).unwrap();
        layout(&dir).unwrap();
        layout(&dir).unwrap(); // Idempotent.
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.join("bin/nvcc"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o755);
        assert!(!dir.join(".metadata").exists());
        assert!(dir.join("lib64/libcudart.so.13").is_file());
        assert_eq!(
            std::fs::read_link(dir.join("lib/libcublasLt.so")).unwrap(),
            Path::new("libcublasLt.so.13")
        );
        assert!(dir.join("lib64/libcublas.so").is_file());
        std::fs::remove_dir_all(&tmp).unwrap();
    }

    #[test]
    fn architecture_lists_name_their_target_directory() {
        assert_eq!(archs_slug(DEFAULT_ARCHS).unwrap(), "80-real_90");
        assert_eq!(archs_slug("86").unwrap(), "86");
        for bad in ["", "80;;90", "80 90", "../x"] {
            assert!(archs_slug(bad).is_err(), "{bad:?}");
        }
    }
}
