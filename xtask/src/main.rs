//! Project tasks, run as `cargo xtask <task>`: `demo`, `app`, `test`, `bench`, `fetch-model`,
//! `deps`, and what ships: `bundle` (the Debian package, `bundle.rs`) and `gpu cuda` (the
//! CUDA build, `gpu.rs`; its device check, `gpu_check.rs`). The test servers are built by
//! `servers.rs`.
//!
//! Every task installs what it needs first and skips what is already there, so that a
//! fresh machine and a warm one run the same commands.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};
use sha2::{Digest, Sha256};

mod bundle;
mod gpu;
mod gpu_check;
mod servers;

/// Debian packages the build and the tests need: llama.cpp's toolchain (`make` because
/// CMake's default generator is Makefiles; apt does not bring it with cmake when
/// recommendations are off), Tauri's WebKitGTK stack, and what the app's end-to-end test
/// drives it with (Xvfb, WebKitWebDriver), and `qemu-x86_64`, whose emulated older CPU
/// shows the tests how a machine without AVX2 is refused.
const DEBIAN_PACKAGES: &[&str] = &[
    "cmake",
    "make",
    "clang",
    "libclang-dev",
    "pkg-config",
    "g++",
    "libwebkit2gtk-4.1-dev",
    "libsoup-3.0-dev",
    "librsvg2-dev",
    "libayatana-appindicator3-dev",
    "libssl-dev",
    "xvfb",
    "xauth",
    "webkit2gtk-driver",
    "qemu-user",
];
/// The WebDriver intermediary for Tauri apps, installed into the user cache by `test`.
const TAURI_DRIVER_VERSION: &str = "2.1.0";

const USAGE: &str = "usage: cargo xtask <task>

tasks:
  demo          install what is missing, fetch the default model, build, and run a small
                sweep of the default judge on LLMBar Natural; prints the trials table
  app           install what is missing, build the UI and the desktop app, and open it
  test          install what the tests need, fetch the default model, run every test
  bench         judge one temperature × top_p sweep naively and with the planner, and
                compare both with the floors of this build and of the hardware (llama.cpp
                built for this machine, once, into the user cache); `judgelab bench`,
                pass --items N, --json; `bench peer` times the zero-shot grid against a
                one-call-per-cell tool on llama-cpp-python's OpenAI-compatible server
                and the hardware's floor; `bench latency` runs the demo with its calls
                timed alone and compares each trial's latency at concurrency 1 with a
                plain llama.cpp loop over the same prompts; `bench saturation` judges a
                sweep at concurrency 4 against llama-server with four slots and ramps
                its first trial through 1, 2, 4, 8 requests in flight, in one process;
                `bench results` times how fast a stored run of 4 trials opens in the
                app, and its peak memory (release build; --items N per trial, 25,000
                unless told, --json; the last line is the JSON summary); `bench race` races simulated 48-configuration grids of
                scripted judges against the full grid over 1,000 seeds (pass --seeds N,
                --correlation R, --json; the last line is the JSON summary); `bench grid`
                runs a 12-point temperature × top_p grid and a 1-point grid without
                `exact` on the same 24 items, judged and timed, and prints their wall
                times' ratio (at most 1.5); `bench import` imports a generated 200,000-item
                JSONL file and prints its peak memory against the file's size (under 2×)
                and its time (pass --items N, --baseline BIN to time another judgelab
                binary on the same file)
  fetch-model   put SmolLM2-135M-Instruct (Q4_1 GGUF) in the user cache directory
  deps          install missing system packages (Debian/Ubuntu)
  bundle        build the app and the CLI in release and package them as a Debian package
                with Tauri's bundler (tauri-cli, installed into the user cache once);
                prints the .deb's path
  gpu cuda      install the CUDA toolkit from NVIDIA's PyPI wheels (once) and build
                judgelab with --features cuda for the GPU architectures --arch LIST
                (default \"80-real;90\"); --test runs the CLI's exact-sweep test with it;
                `gpu check` packs that build for the device check (tools/gpu-check.sh)";

fn main() -> Result<()> {
    let task = std::env::args().nth(1).unwrap_or_default();
    let root = project_root();
    std::env::set_current_dir(&root)?;
    match task.as_str() {
        "demo" => demo(&root),
        "app" => app(&root),
        "bench" => match std::env::args().nth(2).as_deref() {
            Some("results") => bench_results(&root),
            Some("peer") => bench_peer(&root),
            Some("latency") => bench_latency(&root),
            Some("saturation") => bench_saturation(),
            Some("race") => bench_race(),
            Some("grid") => bench_grid(&root),
            Some("import") => bench_import(&root),
            _ => bench(&root),
        },
        "test" => test(),
        "__peak" => peak(),
        "fetch-model" => fetch_model().map(|path| println!("default model: {}", path.display())),
        "deps" => deps(),
        "bundle" => bundle::bundle(&root),
        "gpu" => {
            let args: Vec<String> = std::env::args().skip(2).collect();
            match args.first().map(String::as_str) {
                Some("check") => gpu_check::main(&args[1..]),
                _ => gpu::main(&args),
            }
        }
        "" | "help" | "--help" | "-h" => {
            println!("{USAGE}");
            Ok(())
        }
        other => bail!("unknown task {other:?}\n\n{USAGE}"),
    }
}

/// The workspace root. `cargo run` sets `CARGO_MANIFEST_DIR` for the running binary, and
/// that is preferred to the path compiled in: two clones sharing one target directory (as
/// CI's cache does) can run a binary built in the other clone.
fn project_root() -> PathBuf {
    let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from);
    manifest_dir
        .parent()
        .expect("xtask lives in the workspace")
        .to_path_buf()
}

fn cargo() -> Command {
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
}

fn run(cmd: &mut Command) -> Result<()> {
    eprintln!("$ {}", shown(cmd));
    let status = cmd
        .status()
        .with_context(|| format!("while starting {}", shown(cmd)))?;
    if !status.success() {
        bail!("{} failed with {status}", shown(cmd));
    }
    Ok(())
}

/// Builds CMake target `target` of the build folder `build` on every core.
fn cmake_build(build: &Path, target: &str) -> Result<()> {
    let jobs = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .to_string();
    run(Command::new("cmake").arg("--build").arg(build).args([
        "--target",
        target,
        "--parallel",
        &jobs,
    ]))
}

fn shown(cmd: &Command) -> String {
    std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|s| s.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

fn demo(root: &Path) -> Result<()> {
    deps()?;
    let model = fetch_model()?;
    eprintln!("default model: {}", model.display());
    let db = dirs::data_dir()
        .unwrap_or_else(std::env::temp_dir)
        .join("judgelab")
        .join("demo.sqlite");
    let judgelab = |args: &[&str]| -> Result<()> {
        let mut cmd = cargo();
        cmd.args(["run", "--quiet", "--package", "judgelab-cli", "--", "--db"])
            .arg(&db)
            .args(args);
        run(&mut cmd)
    };
    let experiment = root.join("examples").join("demo.toml");
    let experiment = experiment
        .to_str()
        .context("the project path is not UTF-8")?;
    judgelab(&["import", "datasets/llmbar_natural.jsonl"])?;
    // `run` ends with the trials table and the database's path; a second demo resumes the
    // finished experiment, judges nothing and prints the same table. The demo database is
    // scratch: an experiment left by an older Judgelab whose identity differs is replaced.
    judgelab(&["run", experiment, "--replace"])?;
    let report = root.join("target").join("demo-report");
    let report = report.to_str().context("the project path is not UTF-8")?;
    judgelab(&["report", "llmbar-demo", "--out", report])?;
    eprintln!("open {report}/report.html to see which configuration to pick and why");
    Ok(())
}

/// Builds the UI and opens the desktop app on the user's database.
fn app(root: &Path) -> Result<()> {
    deps()?;
    let model = fetch_model()?;
    eprintln!("default model: {}", model.display());
    ui(root, false)?;
    run(cargo().args(["run", "--package", "judgelab-app"]))
}

/// `judgelab bench`: the sweep benchmark, in the profile the tests use (llama.cpp is built
/// with opt-level 3 there), with the hardware's floor; arguments after `bench` go to it.
fn bench(root: &Path) -> Result<()> {
    deps()?;
    fetch_model()?;
    let floor = floor_tool(root)?;
    let args: Vec<String> = std::env::args().skip(2).collect();
    run(cargo()
        .args(["run", "--quiet", "--package", "judgelab-cli", "--", "bench"])
        .arg("--floor-tool")
        .arg(floor)
        .args(args))
}

/// `judgelab bench --latency examples/demo.toml` on a scratch database: the demo's local
/// trials' latency at concurrency 1 against a plain llama.cpp loop over the same prompts.
fn bench_latency(root: &Path) -> Result<()> {
    deps()?;
    fetch_model()?;
    let db = std::env::temp_dir().join(format!(
        "judgelab-bench-latency-{}.sqlite",
        std::process::id()
    ));
    let result = run(cargo()
        .args(["run", "--quiet", "--package", "judgelab-cli", "--", "--db"])
        .arg(&db)
        .args(["bench", "--latency"])
        .arg(root.join("examples").join("demo.toml"))
        .args(std::env::args().skip(3)));
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
    }
    result
}

/// `bench grid`: what a sampling grid costs out of the box. A 12-point temperature × top_p
/// grid and a 1-point grid, both 2-shot with one-token verdicts on the same 24 LLMBar
/// items and neither writing `exact`, each run by `judgelab run` on a fresh database,
/// judged and timed (20 calls timed alone by default), one after the other in this
/// process; prints each wall time and their ratio, which should be at most 1.5.
fn bench_grid(root: &Path) -> Result<()> {
    deps()?;
    fetch_model()?;
    run(cargo().args(["build", "--quiet", "--package", "judgelab-cli"]))?;
    let target = target_dir(root);
    let judgelab = target.join("debug").join("judgelab");
    let dir = std::env::temp_dir().join(format!("judgelab-bench-grid-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let dataset = root.join("datasets").join("llmbar_natural.jsonl");
    let file = |name: &str, temperature: &str, top_p: &str| -> Result<PathBuf> {
        let path = dir.join(format!("{name}.toml"));
        std::fs::write(
            &path,
            format!(
                "name = \"{name}\"\ndataset = \"{}\"\n[judge]\nbackend = \"llama\"\nmodel = \"default\"\ntemplate = \"pairwise\"\n[sweep]\ntemperature = {temperature}\ntop_p = {top_p}\nmax_tokens = [1]\nfew_shot = [2]\nseed = 42\n[limits]\nitems = 24\n",
                dataset.display()
            ),
        )?;
        Ok(path)
    };
    let one = file("one-point", "[0.7]", "[0.9]")?;
    let grid = file("grid", "[0.0, 0.3, 0.7, 1.0]", "[0.8, 0.9, 1.0]")?;
    let time = |path: &Path| -> Result<f64> {
        let db = dir.join(format!(
            "{}.sqlite",
            path.file_stem().unwrap_or_default().to_string_lossy()
        ));
        let start = std::time::Instant::now();
        let mut cmd = Command::new(&judgelab);
        cmd.arg("--db").arg(&db).arg("run").arg(path);
        run(&mut cmd)?;
        Ok(start.elapsed().as_secs_f64())
    };
    let result = (|| -> Result<()> {
        let one_s = time(&one)?;
        let grid_s = time(&grid)?;
        let ratio = grid_s / one_s;
        println!(
            "1-point grid: {one_s:.1} s; 12-point temperature × top_p grid: {grid_s:.1} s (24 items, 2-shot, one-token verdicts, judged and timed)"
        );
        println!("ratio {ratio:.2} (at most 1.5)");
        println!("{{\"one_point_s\": {one_s:.3}, \"grid_s\": {grid_s:.3}, \"ratio\": {ratio:.4}}}");
        Ok(())
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// `bench import`: a generated pairwise JSONL file of 200,000 items (about 1 KB each, as
/// chat answers are) imported by the CLI, its peak resident memory (the child's maximum
/// RSS, from `wait4`) against the file's size, and its time; `--baseline BIN` imports the
/// same file with another `judgelab` binary in the same run, for a ratio.
fn bench_import(root: &Path) -> Result<()> {
    let arg = |name: &str| {
        let args: Vec<String> = std::env::args().collect();
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1).cloned())
    };
    let n: usize = arg("--items").map_or(Ok(200_000), |v| v.parse())?;
    run(cargo().args(["build", "--quiet", "--package", "judgelab-cli"]))?;
    let target = target_dir(root);
    let judgelab = target.join("debug").join("judgelab");
    let dir = std::env::temp_dir().join(format!("judgelab-bench-import-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let result = (|| -> Result<()> {
        let file = dir.join("items.jsonl");
        write_bench_items(&file, n)?;
        let size = std::fs::metadata(&file)?.len() as f64;
        let mut runs = vec![("this build", judgelab.clone())];
        if let Some(base) = arg("--baseline") {
            runs.push(("baseline", PathBuf::from(base)));
        }
        let mut times = Vec::new();
        for (i, (label, bin)) in runs.iter().enumerate() {
            let db = dir.join(format!("bench-{i}.sqlite"));
            let mut cmd = Command::new(bin);
            cmd.arg("--db").arg(&db).arg("import").arg(&file);
            let (seconds, peak) = measured(&cmd)?;
            let ratio = peak as f64 / size;
            println!(
                "{label}: {n} items, {:.0} MB file: {seconds:.2} s, peak RSS {:.0} MB ({ratio:.2}× the file)",
                size / 1e6,
                peak as f64 / 1e6
            );
            println!(
                "{{\"run\": \"{label}\", \"items\": {n}, \"file_bytes\": {size}, \"seconds\": {seconds:.3}, \"peak_rss_bytes\": {peak}, \"rss_over_file\": {ratio:.4}}}"
            );
            times.push((seconds, ratio));
        }
        if let [(new, ratio), rest @ ..] = times.as_slice() {
            if let Some((base, _)) = rest.first() {
                println!("time against the baseline: {:.2}×", new / base);
            }
            if *ratio >= 2.0 {
                bail!("peak memory is {ratio:.2}× the file: at most 2× is the bound");
            }
        }
        Ok(())
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// `n` pairwise items of about a kilobyte, deterministic, with labels and some metadata.
fn write_bench_items(path: &Path, n: usize) -> Result<()> {
    use std::io::Write;
    let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
    let words = [
        "the",
        "answer",
        "is",
        "because",
        "first",
        "consider",
        "which",
        "model",
        "returns",
        "a",
        "value",
        "when",
        "input",
        "every",
        "step",
        "follows",
        "from",
        "previous",
        "so",
        "we",
        "check",
        "result",
        "against",
        "question",
        "carefully",
    ];
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut text = |len: usize| {
        let mut s = String::with_capacity(len + 16);
        while s.len() < len {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            s.push_str(words[(state >> 33) as usize % words.len()]);
            s.push(' ');
        }
        s.trim_end().to_string()
    };
    for i in 0..n {
        let label = ["A", "B", "tie"][i % 3];
        let row = serde_json::json!({
            "id": format!("item-{i}"),
            "task": "pairwise",
            "question": text(150 + i % 100),
            "answer_a": text(350 + i % 200),
            "answer_b": text(350 + (i * 7) % 200),
            "human_label": label,
            "meta": {"source": "bench", "turn": i % 2 + 1},
        });
        writeln!(out, "{row}")?;
    }
    out.flush()?;
    Ok(())
}

/// Runs `cmd` to its end: its wall time in seconds and its peak resident memory in bytes.
/// It runs under a process of this task's own (`__peak`) whose only child it is, so that
/// the largest child's peak that process reads is the command's.
fn measured(cmd: &Command) -> Result<(f64, u64)> {
    eprintln!("$ {}", shown(cmd));
    let start = std::time::Instant::now();
    let out = Command::new(std::env::current_exe()?)
        .arg("__peak")
        .arg(cmd.get_program())
        .args(cmd.get_args())
        .stderr(std::process::Stdio::inherit())
        .output()
        .with_context(|| format!("while starting {}", shown(cmd)))?;
    let seconds = start.elapsed().as_secs_f64();
    if !out.status.success() {
        bail!("{} failed with {}", shown(cmd), out.status);
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let peak = text
        .lines()
        .last()
        .and_then(|l| l.strip_prefix("peak_rss_bytes "))
        .and_then(|v| v.trim().parse().ok())
        .with_context(|| format!("no peak memory reported: {text}"))?;
    Ok((seconds, peak))
}

/// `__peak PROGRAM ARGS…`: runs it (its output to standard error) and prints its peak
/// resident memory, the largest (and only) child's, as `peak_rss_bytes N`.
fn peak() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(2).collect();
    let (program, rest) = args.split_first().context("__peak needs a program")?;
    let status = Command::new(program)
        .args(rest)
        .stdout(std::process::Stdio::null())
        .status()?;
    if !status.success() {
        bail!("{program} failed with {status}");
    }
    let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN)?;
    // Kilobytes on Linux.
    println!("peak_rss_bytes {}", usage.max_rss() as u64 * 1024);
    Ok(())
}

/// `judgelab bench --peer`: starts llama-cpp-python's OpenAI-compatible server of the
/// default model on 127.0.0.1 with as many threads as Judgelab uses, then times the
/// zero-shot grid both ways and against the hardware's floor; arguments after `peer` go to
/// `judgelab bench`.
fn bench_peer(root: &Path) -> Result<()> {
    deps()?;
    let model = fetch_model()?;
    let floor = floor_tool(root)?;
    let python = servers::python_server()?;
    run(cargo().args(["build", "--quiet", "--package", "judgelab-cli"]))?;
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .to_string();
    let port = free_port()?;
    let mut server = Command::new(&python);
    server
        .args(["-m", "llama_cpp.server", "--model"])
        .arg(&model)
        .args([
            "--model_alias",
            "smollm2",
            "--host",
            "127.0.0.1",
            "--n_ctx",
            "2048",
        ])
        .args(["--n_threads", &threads, "--n_threads_batch", &threads])
        .args(["--port", &port.to_string()]);
    with_server("llama-cpp-python's server", server, port, || {
        run(judgelab_bench("--peer", Some(port))
            .arg("--floor-tool")
            .arg(&floor))
    })
}

/// `judgelab bench FLAG [http://127.0.0.1:PORT/v1] …`, the arguments after the bench task's
/// name passed on.
fn judgelab_bench(flag: &str, port: Option<u16>) -> Command {
    let mut command = cargo();
    command
        .args([
            "run",
            "--quiet",
            "--package",
            "judgelab-cli",
            "--",
            "bench",
            flag,
        ])
        .args(port.map(|port| format!("http://127.0.0.1:{port}/v1")))
        .args(std::env::args().skip(3));
    command
}

/// `judgelab bench --saturation`: starts llama.cpp's `llama-server` of the default model
/// with four slots (the one the tests use, built once into the user cache), then judges a
/// sweep at `concurrency = 4` and ramps its first trial through 1, 2, 4, 8 requests in
/// flight in one process; arguments after `saturation` go to `judgelab bench`.
fn bench_saturation() -> Result<()> {
    deps()?;
    let model = fetch_model()?;
    let bin = servers::llama_server()?;
    run(cargo().args(["build", "--quiet", "--package", "judgelab-cli"]))?;
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .to_string();
    let port = free_port()?;
    let mut server = Command::new(&bin);
    server
        .arg("--model")
        .arg(&model)
        .args(["--alias", "smollm2", "--host", "127.0.0.1"])
        .args(["--port", &port.to_string()])
        .args([
            "--parallel",
            "4",
            "--ctx-size",
            "8192",
            "--threads",
            &threads,
        ]);
    with_server("llama-server (4 slots)", server, port, || {
        run(&mut judgelab_bench("--saturation", Some(port)))
    })
}

fn free_port() -> Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .context("no free port on 127.0.0.1")?
        .port())
}

/// Starts `server` (logging into a temporary file), waits until it listens on `port`,
/// runs `task`, and stops the server whatever `task` returned.
fn with_server(
    what: &str,
    mut server: Command,
    port: u16,
    task: impl FnOnce() -> Result<()>,
) -> Result<()> {
    let log_path = std::env::temp_dir().join(format!("judgelab-bench-server-{port}.log"));
    let log = std::fs::File::create(&log_path)
        .with_context(|| format!("while creating {}", log_path.display()))?;
    eprintln!(
        "starting {what} on 127.0.0.1:{port} (log in {})",
        log_path.display()
    );
    let mut server = server
        .stdout(log.try_clone()?)
        .stderr(log)
        .spawn()
        .with_context(|| format!("while starting {what}"))?;
    let result = (|| {
        let start = std::time::Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Some(status) = server.try_wait()? {
                bail!("{what} exited ({status}); see {}", log_path.display());
            }
            if start.elapsed() > std::time::Duration::from_secs(120) {
                bail!(
                    "{what} did not listen within 2 minutes; see {}",
                    log_path.display()
                );
            }
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
        task()
    })();
    let _ = server.kill();
    let _ = server.wait();
    result
}

/// `judgelab-floor` (`crates/llama/floor`): llama.cpp from the source llama-cpp-sys-2
/// vendors, built with CMake for this machine's own instruction set (`GGML_NATIVE`), into
/// `<user cache>/judgelab/tools/floor-<llama-cpp-sys-2 version>-<this CPU>`, once: about
/// four minutes on two cores. A machine with another CPU gets a build of its own.
fn floor_tool(root: &Path) -> Result<PathBuf> {
    let metadata = cargo()
        .args(["metadata", "--format-version", "1", "--locked"])
        .stderr(Stdio::inherit())
        .output()
        .context("while running cargo metadata")?;
    if !metadata.status.success() {
        bail!("cargo metadata failed with {}", metadata.status);
    }
    let metadata: serde_json::Value =
        serde_json::from_slice(&metadata.stdout).context("cargo metadata's JSON")?;
    let sys = metadata["packages"]
        .as_array()
        .and_then(|packages| packages.iter().find(|p| p["name"] == "llama-cpp-sys-2"))
        .context("llama-cpp-sys-2 is not a dependency")?;
    let version = sys["version"].as_str().unwrap_or("unknown");
    let llama_src = Path::new(sys["manifest_path"].as_str().context("no manifest path")?)
        .parent()
        .context("the manifest has no folder")?
        .join("llama.cpp");
    let source = root.join("crates").join("llama").join("floor");
    // The CPU's model and instruction sets: a native build runs only where it was built.
    let mut key = Sha256::new();
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    for prefix in ["model name", "flags", "Features", "CPU part"] {
        if let Some(line) = cpuinfo.lines().find(|l| l.starts_with(prefix)) {
            key.update(line.as_bytes());
        }
    }
    let key = hex::encode(key.finalize());
    let build = tools_dir()?.join(format!("floor-{version}-{}", &key[..12]));
    let bin = build.join("judgelab-floor");
    if !build.join("CMakeCache.txt").is_file() {
        eprintln!(
            "building llama.cpp {version} for this machine's CPU, for the hardware's floor (once, a few minutes)"
        );
        run(Command::new("cmake")
            .arg("-S")
            .arg(&source)
            .arg("-B")
            .arg(&build)
            .arg(format!("-DLLAMA_SRC={}", llama_src.display()))
            .args(["-DCMAKE_BUILD_TYPE=Release", "-Wno-dev"]))?;
    }
    // Incremental: only a changed floor.cpp is compiled again.
    cmake_build(&build, "judgelab-floor")?;
    if !bin.is_file() {
        bail!("the floor tool's build made no {}", bin.display());
    }
    Ok(bin)
}

/// `judgelab bench --race`: the race against the full grid in simulation (no model, no
/// server); arguments after `race` go to `judgelab bench`.
fn bench_race() -> Result<()> {
    deps()?;
    run(&mut judgelab_bench("--race", None))
}

/// The app's results benchmark, in the release profile the app ships in (the first run
/// builds it: about a quarter of an hour on two cores).
fn bench_results(root: &Path) -> Result<()> {
    deps()?;
    fetch_model()?;
    ui(root, false)?;
    let mut cmd = cargo();
    cmd.args([
        "bench",
        "--package",
        "judgelab-app",
        "--bench",
        "results",
        "--",
    ]);
    cmd.args(std::env::args().skip(3));
    run(&mut cmd)
}

/// Installs the UI's npm packages (when `package-lock.json` changed since the last install)
/// and builds `ui/dist`, which the app embeds; with `check`, type-checks the UI and runs its
/// unit tests first.
fn ui(root: &Path, check: bool) -> Result<()> {
    let dir = root.join("ui");
    let npm = || {
        let mut cmd = Command::new("npm");
        cmd.current_dir(&dir);
        cmd
    };
    if npm().arg("--version").output().is_err() {
        bail!(
            "npm is missing: install Node.js 20 or newer (on Debian: apt-get install nodejs npm)"
        );
    }
    let lock = std::fs::read(dir.join("package-lock.json")).context("ui/package-lock.json")?;
    let stamp = dir.join("node_modules").join(".judgelab-lock-sha256");
    let want = hex::encode(Sha256::digest(&lock));
    if std::fs::read_to_string(&stamp).ok().as_deref() != Some(want.as_str()) {
        run(npm().args(["ci", "--no-audit", "--no-fund"]))?;
        std::fs::write(&stamp, &want).context("while stamping ui/node_modules")?;
    }
    if check {
        run(npm().args(["run", "check"])).context("the UI does not type-check")?;
        run(npm().args(["test"])).context("the UI's unit tests failed")?;
    }
    run(npm().args(["run", "build"]))
}

/// `tauri-driver`, installed with cargo into `<user cache>/judgelab/tools` unless there.
fn tauri_driver() -> Result<PathBuf> {
    cargo_tool("tauri-driver", TAURI_DRIVER_VERSION, "tauri-driver")
}

/// The program `bin` of `krate` at `version`, installed with cargo into
/// `<user cache>/judgelab/tools` unless there (cargo records what it installed: not every
/// tool has a `--version`).
fn cargo_tool(krate: &str, version: &str, bin: &str) -> Result<PathBuf> {
    let root = tools_dir()?;
    let path = root.join("bin").join(bin);
    let installed = std::fs::read_to_string(root.join(".crates.toml")).unwrap_or_default();
    if installed.contains(&format!("{krate} {version} ")) && path.is_file() {
        return Ok(path);
    }
    eprintln!(
        "installing {krate} {version} into {} (once)",
        root.display()
    );
    run(cargo()
        .args([
            "install",
            "--locked",
            "--quiet",
            "--version",
            version,
            "--root",
        ])
        .arg(&root)
        .arg(krate)
        // Its own target directory: installing must not evict the workspace's build.
        .env("CARGO_TARGET_DIR", root.join("target")))?;
    Ok(path)
}

/// The workspace's target directory.
fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from)
}

fn test() -> Result<()> {
    deps()?;
    let root = project_root();
    ui(&root, true)?;
    let driver = tauri_driver()?;
    eprintln!("tauri-driver: {}", driver.display());
    let llama_cpp_server = servers::llama_server()?;
    eprintln!("llama.cpp's llama-server: {}", llama_cpp_server.display());
    let server = servers::python_server()?;
    eprintln!("llama-cpp-python's server: {}", server.display());
    let has_rustfmt = cargo()
        .args(["fmt", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if has_rustfmt {
        run(cargo().args(["fmt", "--all", "--", "--check"]))
            .context("formatting differs: run `cargo fmt --all`")?;
    } else {
        eprintln!(
            "rustfmt is not installed (`rustup component add rustfmt`): skipping the format check"
        );
    }
    // Without incremental compilation (unless CARGO_INCREMENTAL says otherwise): a clean
    // clone's crates are new to the target directory and build afresh, where its records
    // are only cost (the core crate builds in 31 s, 51 with them). A change in a checkout
    // then rebuilds its crates whole, seconds more than a `cargo test` of them.
    if std::env::var_os("CARGO_INCREMENTAL").is_none() {
        std::env::set_var("CARGO_INCREMENTAL", "0");
    }
    // Every test binary is built first, and the default model is fetched by the CLI built
    // with them: nothing is built twice.
    run(cargo().args(["test", "--workspace", "--no-run"]))?;
    let model = fetch_model_with(&target_dir(&root).join("debug").join("judgelab"))?;
    eprintln!("default model: {}", model.display());
    cargo_test(&server, &llama_cpp_server, &driver)
}

/// Runs every test, passing cargo's output through, and closes with one line that sums the
/// results of all test binaries (cargo's own last line is only the last binary's).
fn cargo_test(server_python: &Path, llama_cpp_server: &Path, tauri_driver: &Path) -> Result<()> {
    let mut cmd = cargo();
    cmd.args(["test", "--workspace", "--no-fail-fast"])
        .env("JUDGELAB_LLAMA_SERVER_PYTHON", server_python)
        .env("JUDGELAB_LLAMA_CPP_SERVER", llama_cpp_server)
        .env("JUDGELAB_TAURI_DRIVER", tauri_driver)
        .stdout(Stdio::piped());
    eprintln!("$ {}", shown(&cmd));
    let mut child = cmd.spawn().context("while starting cargo test")?;
    let stdout = child.stdout.take().expect("piped stdout");
    let (mut passed, mut failed, mut ignored) = (0u64, 0u64, 0u64);
    for line in BufReader::new(stdout).lines() {
        let line = line.context("while reading cargo test's output")?;
        println!("{line}");
        if let Some(counts) = line.strip_prefix("test result: ") {
            for part in counts.split(['.', ';']) {
                let mut words = part.split_whitespace();
                if let (Some(n), Some(what)) = (words.next(), words.next()) {
                    let n: u64 = n.parse().unwrap_or(0);
                    match what {
                        "passed" => passed += n,
                        "failed" => failed += n,
                        "ignored" => ignored += n,
                        _ => {}
                    }
                }
            }
        }
    }
    let status = child.wait().context("while waiting for cargo test")?;
    println!("{passed} passed, {failed} failed, {ignored} skipped");
    if !status.success() {
        bail!("cargo test failed with {status}");
    }
    if passed == 0 {
        bail!("cargo test ran no test");
    }
    Ok(())
}

/// Installs missing Debian packages; elsewhere checks for the tools and says what is missing.
fn deps() -> Result<()> {
    let debian = std::fs::read_to_string("/etc/os-release")
        .map(|s| {
            s.lines().any(|l| {
                (l.starts_with("ID=") || l.starts_with("ID_LIKE="))
                    && (l.contains("debian") || l.contains("ubuntu"))
            })
        })
        .unwrap_or(false);
    if !debian {
        let missing: Vec<&str> = ["cmake", "clang", "python3"]
            .into_iter()
            .filter(|tool| Command::new(tool).arg("--version").output().is_err())
            .collect();
        if !missing.is_empty() {
            bail!(
                "please install {} (needed to build llama.cpp and fetch the model)",
                missing.join(", ")
            );
        }
        return Ok(());
    }
    // pip fetches the default model; a Python from elsewhere (pyenv, conda) may bring its own.
    let has_pip = Command::new("python3")
        .args(["-m", "pip", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    // The remote-judge tests run an OpenAI-compatible server from a virtualenv, which needs
    // ensurepip (Debian ships it in python3-venv).
    let has_venv = Command::new("python3")
        .args(["-c", "import ensurepip, venv"])
        .output()
        .is_ok_and(|o| o.status.success());
    let wanted = DEBIAN_PACKAGES
        .iter()
        .copied()
        .chain((!has_pip).then_some("python3-pip"))
        .chain((!has_venv).then_some("python3-venv"));
    let missing: Vec<&str> = wanted
        .filter(|pkg| {
            !Command::new("dpkg-query")
                .args(["-W", "-f=${Status}", pkg])
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).contains("install ok installed"))
                .unwrap_or(false)
        })
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    eprintln!("installing Debian packages: {}", missing.join(" "));
    let root = Command::new("id")
        .arg("-u")
        .output()
        .map(|o| o.stdout == b"0\n")
        .unwrap_or(false);
    let apt = |args: &[&str]| -> Command {
        let mut cmd = if root {
            Command::new("apt-get")
        } else {
            // -n: fail at once rather than wait for a password nobody will type.
            let mut c = Command::new("sudo");
            c.args(["-n", "apt-get"]);
            c
        };
        cmd.args(args).env("DEBIAN_FRONTEND", "noninteractive");
        cmd
    };
    run(&mut apt(&["update", "-qq"]))?;
    let mut install = apt(&["install", "-y", "-qq", "--no-install-recommends"]);
    install.args(&missing);
    run(&mut install)
}

/// `<user cache>/judgelab/tools`, where the tools the tasks build or install go.
fn tools_dir() -> Result<PathBuf> {
    Ok(cache_dir()?.join("tools"))
}

/// `<user cache>/judgelab`.
fn cache_dir() -> Result<PathBuf> {
    Ok(dirs::cache_dir()
        .context("no user cache directory (set XDG_CACHE_HOME or HOME)")?
        .join("judgelab"))
}

fn sha256_file(path: &Path) -> Result<String> {
    let mut file =
        std::fs::File::open(path).with_context(|| format!("while opening {}", path.display()))?;
    let mut hasher = Sha256::new();
    std::io::copy(&mut file, &mut hasher)
        .with_context(|| format!("while reading {}", path.display()))?;
    Ok(hex::encode(hasher.finalize()))
}

/// The default model, fetched as the product fetches it: the CLI in the profile the tests
/// and the demo use is built, and `judgelab fetch-model` puts the model in the model cache
/// unless a verified copy is there. Its path.
fn fetch_model() -> Result<PathBuf> {
    run(cargo().args(["build", "--quiet", "--package", "judgelab-cli"]))?;
    fetch_model_with(&target_dir(&project_root()).join("debug").join("judgelab"))
}

/// The default model, fetched by the `judgelab` binary `judgelab` (`engine::default_model`
/// is the one piece of code that fetches it). Its path.
fn fetch_model_with(judgelab: &Path) -> Result<PathBuf> {
    let mut cmd = Command::new(judgelab);
    cmd.arg("fetch-model").stderr(Stdio::inherit());
    let out = cmd
        .output()
        .with_context(|| format!("while running {}", shown(&cmd)))?;
    if !out.status.success() {
        bail!("{} failed with {}", shown(&cmd), out.status);
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let path = stdout
        .lines()
        .find_map(|l| l.strip_prefix("default model: "))
        .with_context(|| format!("{} printed no path: {stdout:?}", shown(&cmd)))?;
    Ok(PathBuf::from(path.trim()))
}
