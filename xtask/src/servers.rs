//! The two OpenAI-compatible servers the remote-judge tests run against, from one build of
//! llama.cpp, installed once into the user cache:
//! - llama.cpp's own `llama-server` and the shared libraries it links, built with CMake into
//!   `<user cache>/judgelab/tools/llama-cpp-0.3.36/bin` ([`llama_server`]);
//! - llama-cpp-python's server in a virtualenv ([`python_server`]): its Python package,
//!   installed from the same sdist without building llama.cpp again, with those libraries
//!   copied into it (they are the ones its bindings were written for).
//!
//! The sources are the llama.cpp tree that PyPI's llama-cpp-python sdist vendors:
//! llama-cpp-sys-2's crate leaves out `tools/server`, and GitHub is not reachable from
//! every machine that runs the tests. 0.3.36's is ggml 0.25.3, the nearest to
//! llama-cpp-sys-2 0.1.160's ggml 0.26.0 that any registry carries.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

use crate::{cache_dir, cmake_build, run, sha256_file, tools_dir};

const SOURCE: &str = "llama-cpp-python==0.3.36";
const SOURCE_SHA256: &str = "832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e";
const SDIST: &str = "llama_cpp_python-0.3.36.tar.gz";
const SOURCE_DIR: &str = "llama_cpp_python-0.3.36/vendor/llama.cpp";
/// Under the tools folder: `bin/` (the server and its libraries) and the sdist.
const DIR: &str = "llama-cpp-0.3.36";
/// Under the user cache folder.
const VENV: &str = "llama-cpp-python-venv-0336";
/// What earlier versions of this task installed, removed when the above is installed.
const FORMER: &[&str] = &["tools/llama-server-ggml-0.25.3", "llama-server-venv-0316"];

/// How llama.cpp is built: with the CPU kernels the local judge has (x86-64-v3, not the
/// build machine's own: a native build of this llama.cpp, llama-cpp-python's default,
/// crashes in `llama_decode` on this project's CI CPU), as shared libraries that find each
/// other beside themselves (`$ORIGIN`), the server and nothing else (no tests, no
/// examples, no HTTPS).
const FLAGS: &[&str] = &[
    "-DCMAKE_BUILD_TYPE=Release",
    "-DBUILD_SHARED_LIBS=ON",
    "-DCMAKE_BUILD_WITH_INSTALL_RPATH=ON",
    "-DCMAKE_INSTALL_RPATH=$ORIGIN",
    "-DGGML_NATIVE=OFF",
    "-DGGML_SSE42=ON",
    "-DGGML_AVX=ON",
    "-DGGML_AVX2=ON",
    "-DGGML_BMI2=ON",
    "-DGGML_FMA=ON",
    "-DGGML_F16C=ON",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_TOOLS=ON",
    "-DLLAMA_BUILD_SERVER=ON",
    "-DLLAMA_OPENSSL=OFF",
    "-Wno-dev",
];
/// llama-cpp-python's own build, told to build no llama.cpp: its package alone.
const PYTHON_PACKAGE_ONLY: &str = "-DLLAMA_BUILD=OFF -DLLAVA_BUILD=OFF";

/// llama.cpp's `llama-server` (continuous batching, `--parallel` slots, prompt caching,
/// usage in streams), built once: about five minutes on two cores. The source and the
/// build folder are removed after; the server, its libraries and the sdist stay.
pub fn llama_server() -> Result<PathBuf> {
    let dir = tools_dir()?.join(DIR);
    let bin = dir.join("bin").join("llama-server");
    let runs = |bin: &Path| {
        Command::new(bin)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if runs(&bin) {
        return Ok(bin);
    }
    build(&dir)?;
    if !runs(&bin) {
        bail!("{} was built but does not run", bin.display());
    }
    for former in FORMER {
        let _ = std::fs::remove_dir_all(cache_dir()?.join(former));
    }
    Ok(bin)
}

/// llama-cpp-python's server in a virtualenv of the user cache, installed once (seconds,
/// beside [`llama_server`]'s build). Returns the virtualenv's Python.
pub fn python_server() -> Result<PathBuf> {
    let venv = cache_dir()?.join(VENV);
    let python = venv.join("bin").join("python");
    let works = |python: &Path| {
        Command::new(python)
            .args(["-c", "import llama_cpp.server"])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if works(&python) {
        return Ok(python);
    }
    let server = llama_server()?;
    let libs = server.parent().context("llama-server has no folder")?;
    if !python.is_file() {
        run(Command::new("python3").args(["-m", "venv"]).arg(&venv)).context(
            "while creating the test server's virtualenv (on Debian: apt-get install python3-venv)",
        )?;
    }
    eprintln!("installing {SOURCE}[server] on the llama.cpp libraries built for llama-server");
    let sdist = tools_dir()?.join(DIR).join(SDIST);
    run(Command::new(&python)
        .args(["-m", "pip", "install", "--quiet"])
        .arg(format!("{}[server]", sdist.display()))
        .env("CMAKE_ARGS", PYTHON_PACKAGE_ONLY))?;
    // The package's loader looks for the libraries in its own `lib` folder; importing the
    // package would load them, so Python is asked only where the package is.
    let output = Command::new(&python)
        .args([
            "-c",
            "import importlib.util; print(importlib.util.find_spec('llama_cpp').submodule_search_locations[0])",
        ])
        .output()
        .context("while asking the virtualenv where llama_cpp is")?;
    let package = PathBuf::from(String::from_utf8_lossy(&output.stdout).trim());
    copy_libraries(libs, &package.join("lib"))?;
    if !works(&python) {
        bail!(
            "{SOURCE}[server] installed into {} but cannot be imported",
            venv.display()
        );
    }
    Ok(python)
}

/// Downloads the sdist (checked against its sha256) into `dir`, builds `llama-server` from
/// the llama.cpp it vendors, and puts the server and its libraries into `dir/bin`.
fn build(dir: &Path) -> Result<()> {
    let work = dir.join("build");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).with_context(|| format!("while creating {}", work.display()))?;
    let sdist = dir.join(SDIST);
    if !sdist.is_file() || sha256_file(&sdist)? != SOURCE_SHA256 {
        // The sdist, whose metadata pip prepares with wheels of its build tools (with
        // `--no-binary :all:` it built those from source too: a minute more).
        run(Command::new("python3")
            .args(["-m", "pip", "download", "--quiet", "--no-deps"])
            .args(["--no-binary", "llama-cpp-python", "--dest"])
            .arg(dir)
            .arg(SOURCE))
        .context("while downloading llama.cpp's sources from PyPI")?;
        let sha = sha256_file(&sdist).context("pip downloaded no sdist")?;
        if sha != SOURCE_SHA256 {
            bail!(
                "{} has sha256 {sha}, expected {SOURCE_SHA256}",
                sdist.display()
            );
        }
    }
    eprintln!(
        "building llama.cpp's llama-server from {SOURCE}'s sources (once, about five minutes)"
    );
    run(Command::new("tar")
        .arg("-xzf")
        .arg(&sdist)
        .arg("-C")
        .arg(&work)
        .arg(SOURCE_DIR))?;
    let cmake = work.join("cmake");
    run(Command::new("cmake")
        .arg("-S")
        .arg(work.join(SOURCE_DIR))
        .arg("-B")
        .arg(&cmake)
        .args(FLAGS))?;
    cmake_build(&cmake, "llama-server")?;
    let bin = dir.join("bin");
    let _ = std::fs::remove_dir_all(&bin);
    std::fs::create_dir_all(&bin)?;
    copy_libraries(&cmake.join("bin"), &bin)?;
    std::fs::copy(
        cmake.join("bin").join("llama-server"),
        bin.join("llama-server"),
    )
    .context("the build made no llama-server")?;
    std::fs::remove_dir_all(&work).with_context(|| format!("while removing {}", work.display()))
}

/// Copies the shared libraries in `from` (`lib*.so*`) into `to`, their version links as
/// links.
fn copy_libraries(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to).with_context(|| format!("while creating {}", to.display()))?;
    for entry in
        std::fs::read_dir(from).with_context(|| format!("while reading {}", from.display()))?
    {
        let path = entry?.path();
        let name = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        if !(name.starts_with("lib") && name.contains(".so")) {
            continue;
        }
        let target = to.join(&name);
        let _ = std::fs::remove_file(&target);
        if path.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&path)?, &target)?;
        } else {
            std::fs::copy(&path, &target)
                .with_context(|| format!("while copying {} to {}", path.display(), to.display()))?;
        }
    }
    Ok(())
}
