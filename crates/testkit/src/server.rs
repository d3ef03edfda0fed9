//! llama.cpp's own `llama-server`, started by a test behind a counting [`Relay`].

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use crate::{free_port, Faults, Relay};

/// How the server is started: `parallel` slots share a `ctx_size`-token KV cache (each
/// slot's context is `ctx_size / parallel`).
#[derive(Debug, Clone, Copy)]
pub struct Slots {
    pub parallel: u32,
    pub ctx_size: u32,
    /// Threads the server computes with.
    pub threads: u32,
}

impl Default for Slots {
    /// Four slots of 2,048 tokens, with prompt caching (llama-server's default), on one
    /// thread: tests run two at a time, and a server computing on both cores beside
    /// another test's work spends much of its time waiting for its other thread.
    fn default() -> Slots {
        Slots {
            parallel: 4,
            ctx_size: 8192,
            threads: 1,
        }
    }
}

/// A running `llama-server` serving a model as `smollm2`, stopped when dropped.
pub struct LlamaServer {
    child: Child,
    relay: Relay,
    /// The relay's, up to `/v1`, as an experiment's `base_url`.
    pub base_url: String,
    /// The server's log.
    pub log: PathBuf,
}

impl LlamaServer {
    /// Serves `model` with four slots behind a relay on a free port.
    pub fn start(dir: &Path, model: &Path) -> LlamaServer {
        LlamaServer::start_on(dir, model, 0, Slots::default())
    }

    /// Serves `model` behind a relay on `port` (0: a free one), logging into `dir`; waits
    /// until the model is loaded.
    pub fn start_on(dir: &Path, model: &Path, port: u16, slots: Slots) -> LlamaServer {
        LlamaServer::with_faults(dir, model, port, slots, Faults::default())
    }

    /// As [`LlamaServer::start_on`], with a relay that injects `faults`.
    pub fn with_faults(
        dir: &Path,
        model: &Path,
        port: u16,
        slots: Slots,
        faults: Faults,
    ) -> LlamaServer {
        let bin = std::env::var_os("JUDGELAB_LLAMA_CPP_SERVER").expect(
            "JUDGELAB_LLAMA_CPP_SERVER is not set: run the tests with `cargo xtask test`, which builds llama.cpp's llama-server",
        );
        // A port found free can be taken by another test's server before this one binds it:
        // a server that exits while loading is started again on another port.
        for _attempt in 0..3 {
            let inner = free_port();
            let log = dir.join(format!("llama-server-{inner}.log"));
            let err = log.with_extension("err");
            let mut child = Command::new(&bin)
                .arg("--model")
                .arg(model)
                .args(["--alias", "smollm2", "--host", "127.0.0.1"])
                .args(["--port", &inner.to_string()])
                .args(["--parallel", &slots.parallel.to_string()])
                .args(["--ctx-size", &slots.ctx_size.to_string()])
                // The tests share two cores among several servers: a thread that waits for
                // work sleeps instead of spinning on a core another server needs.
                .args(["--threads", &slots.threads.to_string(), "--poll", "0"])
                .stdout(std::fs::File::create(&log).expect("server log"))
                .stderr(std::fs::File::create(&err).expect("server log"))
                .spawn()
                .expect("llama-server starts");
            let start = Instant::now();
            loop {
                if healthy(inner) {
                    let relay = Relay::with_faults(port, inner, faults);
                    return LlamaServer {
                        child,
                        base_url: relay.base_url.clone(),
                        relay,
                        log,
                    };
                }
                if child.try_wait().ok().flatten().is_some() {
                    eprintln!("llama-server exited while loading:\n{}", tail(&err));
                    break;
                }
                if start.elapsed() > Duration::from_secs(300) {
                    let _ = child.kill();
                    panic!("llama-server did not load in 300 s:\n{}", tail(&err));
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        panic!("llama-server exited while loading, three times: see the .err logs in {dir:?}")
    }

    /// Chat completion requests sent to the server so far.
    pub fn posts(&self) -> usize {
        self.relay.completions()
    }

    /// Chat completion requests the relay's faults touched so far.
    pub fn touched(&self) -> usize {
        self.relay.touched()
    }

    /// Stops the server at once, as a crash would; the relay stays and drops what comes.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for LlamaServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The last lines of a server's log, for a failure's message.
fn tail(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}

/// `GET /health` answers 200 once the model is loaded (503 while loading).
fn healthy(port: u16) -> bool {
    use std::io::{Read, Write};
    let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    if stream
        .write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .is_err()
    {
        return false;
    }
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer.starts_with("HTTP/1.1 200")
}
