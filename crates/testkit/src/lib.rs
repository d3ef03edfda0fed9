//! What the integration tests of the CLI and of the app share, a dev-dependency only:
//! - [`LlamaServer`]: llama.cpp's own `llama-server` serving a GGUF file as `smollm2` on
//!   127.0.0.1 (continuous batching over `--parallel` slots, usage in streams), behind a
//!   [`Relay`] that counts the chat completions it carries. `cargo xtask test` builds it and
//!   names it in `JUDGELAB_LLAMA_CPP_SERVER`.
//! - [`LlamaCppPython`]: llama-cpp-python's server, which streams no usage (the judge then
//!   counts a prompt with one unstreamed probe). `cargo xtask test` installs it and names
//!   its Python in `JUDGELAB_LLAMA_SERVER_PYTHON`.
//! - [`Refuser`]: answers every request with one error status.
//!
//! Each server is started by the test and stopped when dropped.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

mod relay;
mod server;

pub use relay::{Faults, Relay};
pub use server::{LlamaServer, Slots};

/// A running `llama-cpp-python` server, stopped when dropped.
pub struct LlamaCppPython {
    child: Child,
    /// Up to `/v1`, as an experiment's `base_url`.
    pub base_url: String,
    log: PathBuf,
}

impl LlamaCppPython {
    /// Serves `model` on a free port, logging into `dir`; waits until it listens.
    pub fn start(dir: &Path, model: &Path) -> LlamaCppPython {
        LlamaCppPython::start_on(dir, model, free_port())
    }

    /// Serves `model` on `port`, logging into `dir`; waits until it listens.
    pub fn start_on(dir: &Path, model: &Path, port: u16) -> LlamaCppPython {
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
        let server = LlamaCppPython {
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

impl Drop for LlamaCppPython {
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

/// An HTTP server on 127.0.0.1 that answers every request with one error status (e.g.
/// `"401 Unauthorized"`) and counts the chat completions it refused. It serves until the
/// test ends.
pub struct Refuser {
    completions: Arc<AtomicUsize>,
    /// Up to `/v1`, as an experiment's `base_url`.
    pub base_url: String,
}

impl Refuser {
    /// Listens on `port` (0: any free one, then read `base_url`).
    pub fn bind(port: u16, status: &'static str) -> Refuser {
        let listener = TcpListener::bind(("127.0.0.1", port))
            .unwrap_or_else(|e| panic!("cannot listen on port {port}: {e}"));
        let port = listener.local_addr().expect("an address").port();
        let completions = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&completions);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let mut reader = BufReader::new(&stream);
                let mut request_line = String::new();
                if reader.read_line(&mut request_line).is_err() {
                    continue;
                }
                if request_line.contains("/chat/completions") {
                    counted.fetch_add(1, Ordering::SeqCst);
                }
                // The headers, then an answer that refuses whatever was asked.
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                    line.clear();
                }
                let body =
                    format!("{{\"error\": {{\"message\": \"refused by the test ({status})\"}}}}");
                let _ = (&stream).write_all(
                    format!(
                        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    )
                    .as_bytes(),
                );
            }
        });
        Refuser {
            completions,
            base_url: format!("http://127.0.0.1:{port}/v1"),
        }
    }

    /// Chat completion requests refused so far.
    pub fn completions(&self) -> usize {
        self.completions.load(Ordering::SeqCst)
    }
}
