//! What the integration tests of the CLI and of the app share: a real OpenAI-compatible
//! server on 127.0.0.1 (llama-cpp-python serving a GGUF file as `smollm2`), started by the
//! test and stopped when dropped. `cargo xtask test` installs llama-cpp-python[server] and
//! names its Python in `JUDGELAB_LLAMA_SERVER_PYTHON`. A dev-dependency only.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// A running `llama-cpp-python` server, stopped when dropped.
pub struct LlamaServer {
    child: Child,
    /// Up to `/v1`, as an experiment's `base_url`.
    pub base_url: String,
    log: PathBuf,
}

impl LlamaServer {
    /// Serves `model` on a free port, logging into `dir`; waits until it listens.
    pub fn start(dir: &Path, model: &Path) -> LlamaServer {
        LlamaServer::start_on(dir, model, free_port())
    }

    /// Serves `model` on `port`, logging into `dir`; waits until it listens.
    pub fn start_on(dir: &Path, model: &Path, port: u16) -> LlamaServer {
        let python = std::env::var_os("JUDGELAB_LLAMA_SERVER_PYTHON").expect(
            "JUDGELAB_LLAMA_SERVER_PYTHON is not set: run the tests with `cargo xtask test`, which installs llama-cpp-python[server]",
        );
        let log = dir.join("server.log");
        let child = Command::new(python)
            .args(["-m", "llama_cpp.server", "--model"])
            .arg(model)
            .args(["--model_alias", "smollm2", "--host", "127.0.0.1"])
            .args(["--n_ctx", "2048", "--port", &port.to_string()])
            .stdout(std::fs::File::create(&log).expect("server log"))
            .stderr(std::fs::File::create(dir.join("server.err")).expect("server log"))
            .spawn()
            .expect("the server starts");
        let server = LlamaServer {
            child,
            base_url: format!("http://127.0.0.1:{port}/v1"),
            log,
        };
        let start = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                start.elapsed() < Duration::from_secs(120),
                "the server did not start: {}",
                dir.join("server.err").display()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        server
    }

    /// Chat completion requests the server has answered so far.
    pub fn posts(&self) -> usize {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .matches("POST /v1/chat/completions")
            .count()
    }
}

impl Drop for LlamaServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A port nothing listens on yet.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}
