//! A TCP relay between a test and an HTTP server on 127.0.0.1: it reads each request,
//! counts the chat completions, forwards the request with `Connection: close` and copies
//! the answer back as it comes (a stream stays a stream). It is where a test stands to see
//! what the judge really sent.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Relays `base_url` to a server's port, counting what passes. It relays until the test
/// ends; a request that finds the server gone is dropped without an answer, as a dead
/// server's would be.
pub struct Relay {
    completions: Arc<AtomicUsize>,
    /// Up to `/v1`, as an experiment's `base_url`.
    pub base_url: String,
    pub port: u16,
}

impl Relay {
    /// Listens on `port` (0: any free one) and relays to `upstream` on 127.0.0.1.
    pub fn bind(port: u16, upstream: u16) -> Relay {
        let listener = TcpListener::bind(("127.0.0.1", port))
            .unwrap_or_else(|e| panic!("cannot listen on port {port}: {e}"));
        let port = listener.local_addr().expect("an address").port();
        let completions = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&completions);
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let counted = Arc::clone(&counted);
                std::thread::spawn(move || relay(client, upstream, &counted));
            }
        });
        Relay {
            completions,
            base_url: format!("http://127.0.0.1:{port}/v1"),
            port,
        }
    }

    /// Chat completion requests relayed so far (whether or not the server answered).
    pub fn completions(&self) -> usize {
        self.completions.load(Ordering::SeqCst)
    }
}

/// One request and its answer; then both connections close.
fn relay(mut client: TcpStream, upstream: u16, counted: &AtomicUsize) {
    let Some(request) = read_request(&mut client) else {
        return;
    };
    if request
        .head
        .lines()
        .next()
        .is_some_and(|l| l.contains("/chat/completions"))
    {
        counted.fetch_add(1, Ordering::SeqCst);
    }
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
    loop {
        match server.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if client.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
        }
    }
    let _ = client.shutdown(Shutdown::Both);
}

struct Request {
    /// The request line and headers, without the blank line that ends them.
    head: String,
    body: Vec<u8>,
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
