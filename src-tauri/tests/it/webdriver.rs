//! A small W3C WebDriver client over blocking HTTP, with the environment it needs: an X
//! display (Xvfb when none is set) and `tauri-driver` in front of `WebKitWebDriver`.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// A process killed when dropped.
pub struct Guard(pub Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A process started in a process group of its own, and the whole group killed when
/// dropped: `tauri-driver` starts `WebKitWebDriver`, which would otherwise outlive it and
/// keep the test's stderr open.
pub struct GroupGuard(Child);

impl GroupGuard {
    pub fn spawn(cmd: &mut Command) -> std::io::Result<GroupGuard> {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0).spawn().map(GroupGuard)
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        // The shell's own `kill` takes a negative pid for a group (no procps needed).
        let _ = Command::new("sh")
            .args(["-c", &format!("kill -KILL -{}", self.0.id())])
            .status();
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// The X display to use: `$DISPLAY`, or a new Xvfb at 1280×800.
pub fn display() -> (String, Option<Guard>) {
    if let Ok(d) = std::env::var("DISPLAY") {
        if !d.is_empty() {
            return (d, None);
        }
    }
    for n in 90..140 {
        if Path::new(&format!("/tmp/.X11-unix/X{n}")).exists()
            || Path::new(&format!("/tmp/.X{n}-lock")).exists()
        {
            continue;
        }
        let child = Command::new("Xvfb")
            .args([
                &format!(":{n}"),
                "-screen",
                "0",
                "1280x800x24",
                "-nolisten",
                "tcp",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("Xvfb (apt-get install xvfb, or run `cargo xtask test`)");
        let guard = Guard(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if Path::new(&format!("/tmp/.X11-unix/X{n}")).exists() {
                return (format!(":{n}"), Some(guard));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("Xvfb :{n} did not start");
    }
    panic!("no free X display number in :90..:140");
}

/// `tauri-driver`: `$JUDGELAB_TAURI_DRIVER`, else where `cargo xtask test` installs it.
pub fn tauri_driver() -> PathBuf {
    if let Some(p) = std::env::var_os("JUDGELAB_TAURI_DRIVER") {
        return PathBuf::from(p);
    }
    let installed = dirs_cache().join("judgelab/tools/bin/tauri-driver");
    assert!(
        installed.is_file(),
        "tauri-driver is not installed at {}: run `cargo xtask test`, which installs it (and WebKitWebDriver, Xvfb)",
        installed.display()
    );
    installed
}

fn dirs_cache() -> PathBuf {
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .expect("HOME is set")
}

/// A WebDriver session on the app.
pub struct Session {
    base: String,
    http: reqwest::blocking::Client,
    _driver: GroupGuard,
}

impl Session {
    /// Starts `tauri-driver` and the app at `app`, with `env` set for the app.
    pub fn start(app: &Path, display: &str, env: &[(&str, &Path)]) -> Session {
        let (port, native_port) = (free_port(), free_port());
        let mut cmd = Command::new(tauri_driver());
        cmd.args([
            "--port",
            &port.to_string(),
            "--native-port",
            &native_port.to_string(),
        ])
        .env("DISPLAY", display)
        // WebKit's sandbox needs user namespaces that containers often lack.
        .env("WEBKIT_DISABLE_SANDBOX_THIS_IS_DANGEROUS", "1")
        .env("WEBKIT_DISABLE_COMPOSITING_MODE", "1")
        .env("LIBGL_ALWAYS_SOFTWARE", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let driver = GroupGuard::spawn(&mut cmd).expect("tauri-driver starts");
        let http = reqwest::blocking::Client::builder()
            .timeout(Duration::from_secs(120))
            .build()
            .expect("http client");
        let base = format!("http://127.0.0.1:{port}");
        let deadline = Instant::now() + Duration::from_secs(30);
        while http.get(format!("{base}/status")).send().is_err() {
            assert!(Instant::now() < deadline, "tauri-driver did not answer");
            std::thread::sleep(Duration::from_millis(100));
        }
        let caps = json!({"capabilities": {"alwaysMatch": {
            "tauri:options": {"application": app}
        }}});
        let mut session = Session {
            base,
            http,
            _driver: driver,
        };
        let created = session.call("POST", "/session", Some(caps));
        let id = created["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {created}"))
            .to_string();
        session.base = format!("{}/session/{id}", session.base);
        session
    }

    fn call(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let url = format!("{}{path}", self.base);
        let request = match method {
            "GET" => self.http.get(&url),
            "DELETE" => self.http.delete(&url),
            _ => self.http.post(&url).json(&body.unwrap_or(json!({}))),
        };
        let response = request
            .send()
            .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
        let value: Value = response.json().expect("WebDriver answers JSON");
        if let Some(error) = value["value"]["error"].as_str() {
            panic!(
                "{method} {path}: {error}: {}",
                value["value"]["message"].as_str().unwrap_or("")
            );
        }
        value["value"].clone()
    }

    fn try_find(&self, css: &str) -> Option<String> {
        let url = format!("{}/elements", self.base);
        let value: Value = self
            .http
            .post(&url)
            .json(&json!({"using": "css selector", "value": css}))
            .send()
            .ok()?
            .json()
            .ok()?;
        let first = value["value"].as_array()?.first()?.clone();
        first
            .as_object()?
            .values()
            .next()?
            .as_str()
            .map(str::to_string)
    }

    /// Waits up to `secs` for an element matching `css`.
    pub fn wait(&self, css: &str, secs: u64) -> Element<'_> {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            if let Some(id) = self.try_find(css) {
                return Element { session: self, id };
            }
            assert!(
                Instant::now() < deadline,
                "no element {css:?} after {secs} s; page text: {}",
                self.text_of_body()
            );
            std::thread::sleep(Duration::from_millis(150));
        }
    }

    pub fn find(&self, css: &str) -> Element<'_> {
        self.wait(css, 15)
    }

    pub fn count(&self, css: &str) -> usize {
        self.script(
            "return document.querySelectorAll(arguments[0]).length",
            json!([css]),
        )
        .as_u64()
        .unwrap_or(0) as usize
    }

    /// Waits up to `secs` for the JavaScript predicate (a function body) to return true.
    pub fn wait_until(&self, what: &str, body: &str, args: Value, secs: u64) {
        let deadline = Instant::now() + Duration::from_secs(secs);
        while self.script(body, args.clone()) != json!(true) {
            assert!(
                Instant::now() < deadline,
                "{what}: not after {secs} s; page text: {}",
                self.text_of_body()
            );
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    pub fn script(&self, body: &str, args: Value) -> Value {
        self.call(
            "POST",
            "/execute/sync",
            Some(json!({"script": body, "args": args})),
        )
    }

    pub fn text_of_body(&self) -> String {
        let text = self.script(
            "return document.body ? document.body.innerText : ''",
            json!([]),
        );
        let text = text.as_str().unwrap_or("").replace('\n', " | ");
        text.chars().take(1500).collect()
    }

    /// Saves a PNG of the window.
    pub fn screenshot(&self, path: &Path) {
        use base64_decode as b64;
        // WebKitWebDriver's screenshot waits for the next frame, and an idle page under Xvfb
        // may never draw one: nudge the page for a moment so that a frame comes.
        self.script(
            "let n = 0; const id = setInterval(() => {
                document.body.style.opacity = n % 2 ? '' : '0.999';
                if (++n > 20) { clearInterval(id); document.body.style.opacity = ''; }
             }, 100); return true;",
            json!([]),
        );
        let data = self.call("GET", "/screenshot", None);
        let bytes = b64(data.as_str().expect("base64 screenshot"));
        std::fs::write(path, bytes).expect("write screenshot");
    }

    /// Presses and releases `key` on the keyboard, as a person does: the page gets the
    /// key events wherever its focus is.
    pub fn press(&self, key: &str) {
        self.call(
            "POST",
            "/actions",
            Some(json!({"actions": [{
                "type": "key",
                "id": "keyboard",
                "actions": [{"type": "keyDown", "value": key}, {"type": "keyUp", "value": key}],
            }]})),
        );
        self.call("DELETE", "/actions", None);
    }

    /// Closes the window, as its close button does.
    pub fn close_window(&self) {
        let _ = self.http.delete(format!("{}/window", self.base)).send();
    }

    pub fn quit(self) {
        let _ = self.http.delete(&self.base).send();
    }
}

pub struct Element<'s> {
    session: &'s Session,
    id: String,
}

impl Element<'_> {
    pub fn click(&self) -> &Self {
        self.session
            .call("POST", &format!("/element/{}/click", self.id), None);
        self
    }

    /// Replaces the value of an input by typing `text`.
    /// Clears the field and types `text` (nothing for an empty one: WebKitWebDriver
    /// refuses to type no text, and its clear alone fires no input event).
    pub fn fill(&self, text: &str) -> &Self {
        self.session
            .call("POST", &format!("/element/{}/clear", self.id), None);
        if !text.is_empty() {
            self.session.call(
                "POST",
                &format!("/element/{}/value", self.id),
                Some(json!({"text": text})),
            );
        }
        self
    }

    pub fn text(&self) -> String {
        self.session
            .call("GET", &format!("/element/{}/text", self.id), None)
            .as_str()
            .unwrap_or("")
            .to_string()
    }

    pub fn attr(&self, name: &str) -> Option<String> {
        self.session
            .call(
                "GET",
                &format!("/element/{}/attribute/{name}", self.id),
                None,
            )
            .as_str()
            .map(str::to_string)
    }
}

/// Standard base64 (WebDriver screenshots), without a dependency for one call.
fn base64_decode(text: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let mut buf = 0u32;
    let mut bits = 0;
    for c in text.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => continue,
        };
        buf = (buf << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((buf >> bits) as u8);
        }
    }
    out
}
