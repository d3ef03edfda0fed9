//! A TCP relay between a test and an HTTP server on 127.0.0.1: it reads each request,
//! counts the chat completions, forwards the request with `Connection: close` and copies
//! the answer back as it comes (a stream stays a stream). It is where a test stands to see
//! what the judge really sent, and to inject the anomalies that move a latency tail
//! ([`Faults`]) in front of a real server: a cold first request, requests held in a queue,
//! a TTFT spike, network jitter, slowed chunks, a stream stalled by a KV-cache eviction,
//! cut streams and 429 bursts.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// What the relay does to the chat completions it carries, by their order (0-based, after
/// `skip`). Each period `Some((4, …))` touches requests 3, 7, 11, …
#[derive(Debug, Clone, Copy, Default)]
pub struct Faults {
    /// Requests passed on untouched before the faults start (e.g. a run's, before a ramp).
    pub skip: usize,
    /// Holds the first request this long before forwarding it: a cold start.
    pub cold_first_ms: u64,
    /// Holds every n-th request this long before forwarding it: a request queued behind
    /// others (scheduler starvation).
    pub queue_hold: Option<(usize, u64)>,
    /// Holds the first bytes of every n-th answer this long: a TTFT spike (a blocked
    /// tokenizer thread).
    pub ttft_spike: Option<(usize, u64)>,
    /// Waits this long before passing on each piece of every answer: slow chunk delivery.
    pub chunk_delay_ms: u64,
    /// Holds the first bytes of every answer a seeded random time in [0, this): network
    /// jitter ([`Faults::jitter_of`] says how long for request n).
    pub jitter_ms: u64,
    /// Every n-th request, the server's KV cache is evicted: the request goes on with
    /// `cache_prompt: false` (the server really decodes its whole prompt again) and its
    /// stream stalls this long right after its first token, as a preempted sequence does.
    pub evict: Option<(usize, u64)>,
    /// Cuts every n-th answer right after its headers: an interrupted stream.
    pub cut_every: Option<usize>,
    /// Answers `count` requests from `first` on with 429 and `Retry-After: 0`: a burst.
    pub burst_429: Option<(usize, usize)>,
}

/// Relays `base_url` to a server's port, counting what passes. It relays until the test
/// ends; a request that finds the server gone is dropped without an answer, as a dead
/// server's would be.
pub struct Relay {
    completions: Arc<AtomicUsize>,
    touched: Arc<AtomicUsize>,
    /// Up to `/v1`, as an experiment's `base_url`.
    pub base_url: String,
    pub port: u16,
}

impl Relay {
    /// Listens on `port` (0: any free one) and relays to `upstream` on 127.0.0.1.
    pub fn bind(port: u16, upstream: u16) -> Relay {
        Relay::with_faults(port, upstream, Faults::default())
    }

    /// As [`Relay::bind`], injecting `faults`.
    pub fn with_faults(port: u16, upstream: u16, faults: Faults) -> Relay {
        let listener = TcpListener::bind(("127.0.0.1", port))
            .unwrap_or_else(|e| panic!("cannot listen on port {port}: {e}"));
        let port = listener.local_addr().expect("an address").port();
        let completions = Arc::new(AtomicUsize::new(0));
        let touched = Arc::new(AtomicUsize::new(0));
        let (counted, hit) = (Arc::clone(&completions), Arc::clone(&touched));
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let (counted, hit) = (Arc::clone(&counted), Arc::clone(&hit));
                std::thread::spawn(move || relay(client, upstream, &counted, &hit, faults));
            }
        });
        Relay {
            completions,
            touched,
            base_url: format!("http://127.0.0.1:{port}/v1"),
            port,
        }
    }

    /// Chat completion requests relayed so far (whether or not the server answered).
    pub fn completions(&self) -> usize {
        self.completions.load(Ordering::SeqCst)
    }

    /// Chat completion requests a fault touched so far.
    pub fn touched(&self) -> usize {
        self.touched.load(Ordering::SeqCst)
    }
}

impl Faults {
    /// The jitter held on request `n` (0-based, after `skip`), in ms.
    pub fn jitter_of(&self, n: usize) -> u64 {
        if self.jitter_ms == 0 {
            return 0;
        }
        // SplitMix64 of n: the same draws on every run.
        let mut z = (n as u64)
            .wrapping_add(1)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) % self.jitter_ms
    }
}

/// Whether request `n` falls on a period.
fn every(period: Option<(usize, u64)>, n: usize) -> Option<u64> {
    period.and_then(|(p, ms)| (p > 0 && (n + 1).is_multiple_of(p)).then_some(ms))
}

/// One request and its answer; then both connections close.
fn relay(
    mut client: TcpStream,
    upstream: u16,
    counted: &AtomicUsize,
    touched: &AtomicUsize,
    f: Faults,
) {
    let Some(request) = read_request(&mut client) else {
        return;
    };
    let completion = request
        .head
        .lines()
        .next()
        .is_some_and(|l| l.contains("/chat/completions"));
    let n = if completion {
        counted.fetch_add(1, Ordering::SeqCst).checked_sub(f.skip)
    } else {
        None
    };
    let Some(n) = n else {
        return pass(client, upstream, request, Faults::default(), 0, None, false);
    };
    let sleep = |ms: u64| std::thread::sleep(Duration::from_millis(ms));
    let hold = if n == 0 { f.cold_first_ms } else { 0 } + every(f.queue_hold, n).unwrap_or(0);
    let spike = every(f.ttft_spike, n).unwrap_or(0) + f.jitter_of(n);
    let stall = every(f.evict, n);
    let cut = f
        .cut_every
        .is_some_and(|p| p > 0 && (n + 1).is_multiple_of(p));
    let burst = f
        .burst_429
        .is_some_and(|(first, count)| (first..first + count).contains(&n));
    if hold > 0
        || spike > 0
        || f.jitter_ms > 0
        || stall.is_some()
        || cut
        || burst
        || f.chunk_delay_ms > 0
    {
        touched.fetch_add(1, Ordering::SeqCst);
    }
    if burst {
        let body =
            r#"{"error":{"message":"rate limited by the test relay","type":"rate_limit_error"}}"#;
        let _ = client.write_all(
            format!(
                "HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\nRetry-After: 0\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            )
            .as_bytes(),
        );
        return;
    }
    sleep(hold);
    let request = match stall {
        Some(_) => request.without_prompt_cache(),
        None => request,
    };
    pass(client, upstream, request, f, spike, stall, cut);
}

/// Forwards `request` and copies the answer back: its first bytes `spike` ms late, each
/// piece `f.chunk_delay_ms` late, the rest `stall` ms late after its first token, or
/// (`cut`) its headers only.
fn pass(
    mut client: TcpStream,
    upstream: u16,
    request: Request,
    f: Faults,
    spike: u64,
    mut stall: Option<u64>,
    cut: bool,
) {
    let sleep = |ms: u64| std::thread::sleep(Duration::from_millis(ms));
    let Ok(mut server) = TcpStream::connect(("127.0.0.1", upstream)) else {
        return;
    };
    let head: String = request
        .head
        .split("\r\n")
        .filter(|l| !l.to_ascii_lowercase().starts_with("connection:") && !l.is_empty())
        .map(|l| format!("{l}\r\n"))
        .collect();
    let sent = server
        .write_all(format!("{head}Connection: close\r\n\r\n").as_bytes())
        .and_then(|()| server.write_all(&request.body));
    if sent.is_err() {
        return;
    }
    let mut buf = [0u8; 8192];
    let mut first = true;
    let mut answered = Vec::new();
    loop {
        match server.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if first {
                    sleep(spike);
                    first = false;
                }
                sleep(f.chunk_delay_ms);
                if cut {
                    // The headers only, then the connection closes mid-answer.
                    answered.extend_from_slice(&buf[..n]);
                    if let Some(end) = answered.windows(4).position(|w| w == b"\r\n\r\n") {
                        let _ = client.write_all(&answered[..end + 4]);
                        break;
                    }
                    continue;
                }
                let mut piece = &buf[..n];
                if let Some(ms) = stall {
                    // The first content event goes through; what follows waits.
                    answered.extend_from_slice(piece);
                    if let Some(end) = first_token_end(&answered) {
                        let split = n - (answered.len() - end);
                        if client.write_all(&piece[..split]).is_err() {
                            break;
                        }
                        sleep(ms);
                        stall = None;
                        piece = &piece[split..];
                    }
                }
                if client.write_all(piece).is_err() {
                    break;
                }
            }
        }
    }
    let _ = client.shutdown(Shutdown::Both);
}

/// Where the first SSE event with generated text ends in `answer` (after its blank line).
fn first_token_end(answer: &[u8]) -> Option<usize> {
    let find = |hay: &[u8], needle: &[u8]| hay.windows(needle.len()).position(|w| w == needle);
    let key = b"\"content\":\"";
    let mut from = 0;
    while let Some(at) = find(&answer[from..], key) {
        let start = from + at + key.len();
        if answer.get(start).is_some_and(|&b| b != b'"') {
            return find(&answer[start..], b"\n\n").map(|end| start + end + 2);
        }
        from = start;
    }
    None
}

struct Request {
    /// The request line and headers, without the blank line that ends them.
    head: String,
    body: Vec<u8>,
}

impl Request {
    /// The same request, asking the server not to reuse its cached prompt.
    fn without_prompt_cache(self) -> Request {
        let body = String::from_utf8_lossy(&self.body);
        let Some(rest) = body.trim_start().strip_prefix('{') else {
            return self;
        };
        let body = format!("{{\"cache_prompt\":false,{rest}").into_bytes();
        let head = self
            .head
            .split("\r\n")
            .map(|l| {
                if l.to_ascii_lowercase().starts_with("content-length:") {
                    format!("Content-Length: {}", body.len())
                } else {
                    l.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("\r\n");
        Request { head, body }
    }
}

fn read_request(stream: &mut TcpStream) -> Option<Request> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let (head_end, length) = loop {
        let n = stream.read(&mut chunk).ok().filter(|&n| n > 0)?;
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
            let length = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            break (end, length);
        }
    };
    while buf.len() < head_end + 4 + length {
        let n = stream.read(&mut chunk).ok().filter(|&n| n > 0)?;
        buf.extend_from_slice(&chunk[..n]);
    }
    Some(Request {
        head: String::from_utf8_lossy(&buf[..head_end]).into_owned(),
        body: buf[head_end + 4..head_end + 4 + length].to_vec(),
    })
}
