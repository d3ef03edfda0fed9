//! The workspace's Rust sources read as the architecture tests need them: each file's code
//! with comments and literals blanked, the span of each function, and which files of its
//! crate each file imports. A reading of text, not a compiler's: enough to hold the limits
//! `ARCHITECTURE.md` states, and checked against known shapes below.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One source file of a crate.
pub struct SourceFile {
    /// Relative to the workspace root.
    pub path: PathBuf,
    /// Its module path from the crate root (`[]` for `lib.rs`/`main.rs`, `[run]` for
    /// `run/mod.rs`, `[run, group]` for `run/group.rs`).
    pub module: Vec<String>,
    /// The text with comments, strings and character literals blanked (newlines kept).
    pub code: String,
}

/// A function: where it starts, and its length from the `fn` line to its closing brace.
pub struct Function {
    pub path: PathBuf,
    pub line: usize,
    pub name: String,
    pub lines: usize,
}

/// The files of each crate target's `src` folder (libraries and binaries: tests, benches
/// and fixtures are not the code the limits are about), by source root.
pub fn crates(root: &Path, src_roots: &BTreeSet<PathBuf>) -> BTreeMap<PathBuf, Vec<SourceFile>> {
    src_roots
        .iter()
        .map(|src| {
            let mut files = Vec::new();
            walk(src, &mut |path| {
                let text = std::fs::read_to_string(path).expect("a readable source file");
                files.push(SourceFile {
                    path: path.strip_prefix(root).unwrap_or(path).to_path_buf(),
                    module: module_of(src, path),
                    code: blank(&text),
                });
            });
            files.sort_by(|a, b| a.path.cmp(&b.path));
            (src.clone(), files)
        })
        .collect()
}

fn walk(dir: &Path, each: &mut dyn FnMut(&Path)) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("a readable folder")
        .map(|e| e.expect("a folder entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            walk(&path, each);
        } else if path.extension().is_some_and(|e| e == "rs") {
            each(&path);
        }
    }
}

fn module_of(src: &Path, path: &Path) -> Vec<String> {
    let relative = path
        .strip_prefix(src)
        .expect("a file under its source root");
    let mut module: Vec<String> = relative
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let last = module.last().map(String::as_str);
    if last == Some("mod") || (module.len() == 1 && matches!(last, Some("lib" | "main"))) {
        module.pop();
    }
    module
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// `text` with comments (nested block comments too), string literals (raw ones too) and
/// character literals replaced by spaces, newlines kept, so that a brace or a path in a
/// comment or a string is not read as code.
pub fn blank(text: &str) -> String {
    let s = text.as_bytes();
    let mut out = s.to_vec();
    let blank_out = |out: &mut Vec<u8>, from: usize, to: usize| {
        for b in &mut out[from..to] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
    };
    let mut i = 0;
    while i < s.len() {
        let rest = &s[i..];
        let after_ident = i > 0 && is_ident(s[i - 1]);
        let end = if rest.starts_with(b"//") {
            i + rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len())
        } else if rest.starts_with(b"/*") {
            let (mut depth, mut j) = (0, i);
            while j < s.len() {
                if s[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if s[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            j
        } else if let Some(open) = raw_string_open(rest).filter(|_| !after_ident) {
            let hashes = open - rest.iter().position(|&b| b == b'r').unwrap() - 2;
            let mut close = vec![b'"'];
            close.extend(std::iter::repeat_n(b'#', hashes));
            let body = &s[i + open..];
            i + open
                + body
                    .windows(close.len())
                    .position(|w| w == close.as_slice())
                    .map_or(body.len(), |p| p + close.len())
        } else if rest[0] == b'"' {
            let mut j = i + 1;
            while j < s.len() && s[j] != b'"' {
                j += if s[j] == b'\\' { 2 } else { 1 };
            }
            (j + 1).min(s.len())
        } else if rest[0] == b'\'' {
            char_literal(rest).map_or(i + 1, |n| i + n)
        } else {
            i += 1;
            continue;
        };
        if rest[0] != b'\'' || end > i + 1 {
            blank_out(&mut out, i, end);
        }
        i = end.max(i + 1);
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The length of `r"`, `r#"`, `br##"` … at the start of `s`, if a raw string opens there.
fn raw_string_open(s: &[u8]) -> Option<usize> {
    let start = usize::from(s.first() == Some(&b'b'));
    if s.get(start) != Some(&b'r') {
        return None;
    }
    let hashes = s[start + 1..].iter().take_while(|&&b| b == b'#').count();
    (s.get(start + 1 + hashes) == Some(&b'"')).then_some(start + hashes + 2)
}

/// The length of a character literal at the start of `s` (`'a'`, `'\n'`, `'\u{1F600}'`,
/// `'é'`); none for a lifetime.
fn char_literal(s: &[u8]) -> Option<usize> {
    let body = &s[1..];
    let n = if body.first() == Some(&b'\\') {
        // `\n`, `\'`, `\u{1F600}`: the closing quote after the escaped character.
        body.iter().skip(2).position(|&b| b == b'\'')? + 2
    } else {
        // One character, however many bytes it takes.
        match *body.first()? {
            0x00..=0x7f => 1,
            0xc0..=0xdf => 2,
            0xe0..=0xef => 3,
            _ => 4,
        }
    };
    (body.get(n) == Some(&b'\'') && n <= 12).then_some(n + 2)
}

/// The index of the brace closing the one opened at `open`.
fn closing(code: &[u8], open: usize) -> usize {
    let mut depth = 0usize;
    for (j, &b) in code.iter().enumerate().skip(open) {
        match b {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return j;
                }
            }
            _ => {}
        }
    }
    code.len().saturating_sub(1)
}

fn line_of(code: &[u8], at: usize) -> usize {
    code[..at].iter().filter(|&&b| b == b'\n').count() + 1
}

/// Each word `word` in `code` that stands alone (not part of a longer identifier).
fn words<'a>(code: &'a str, word: &'a str) -> impl Iterator<Item = usize> + 'a {
    let bytes = code.as_bytes();
    code.match_indices(word).map(|(i, _)| i).filter(move |&i| {
        (i == 0 || !is_ident(bytes[i - 1]))
            && bytes.get(i + word.len()).is_none_or(|&b| !is_ident(b))
    })
}

/// Every function with a body in `file`, with its length in lines.
pub fn functions(file: &SourceFile) -> Vec<Function> {
    let code = file.code.as_bytes();
    let mut found = Vec::new();
    for at in words(&file.code, "fn") {
        let name: String = file.code[at + 2..]
            .trim_start()
            .chars()
            .take_while(|&c| c.is_alphanumeric() || c == '_')
            .collect();
        if name.is_empty() {
            continue; // a function pointer type: `fn(u8) -> u8`
        }
        // The body's opening brace: the first `{` outside the parameter list and generics'
        // brackets; a `;` first means a declaration without a body.
        let mut depth = 0i32;
        let mut open = None;
        for (j, &b) in code.iter().enumerate().skip(at) {
            match b {
                b'(' | b'[' => depth += 1,
                b')' | b']' => depth -= 1,
                b';' if depth == 0 => break,
                b'{' if depth == 0 => {
                    open = Some(j);
                    break;
                }
                _ => {}
            }
        }
        let Some(open) = open else { continue };
        let first = line_of(code, at);
        found.push(Function {
            path: file.path.clone(),
            line: first,
            name,
            lines: line_of(code, closing(code, open)) - first + 1,
        });
    }
    found
}

/// `code` with each `#[cfg(test)]` module written inline blanked: its `super` is the file
/// itself, and test code is not what the file imports.
fn without_test_modules(code: &str) -> String {
    let mut out = code.as_bytes().to_vec();
    for at in code.match_indices("#[cfg(test)]").map(|(i, _)| i) {
        let after = &code[at + "#[cfg(test)]".len()..];
        let Some(stop) = after.find(['{', ';']) else {
            continue;
        };
        if after.as_bytes()[stop] != b'{' || !words(&after[..stop], "mod").any(|_| true) {
            continue;
        }
        let open = at + "#[cfg(test)]".len() + stop;
        let close = closing(code.as_bytes(), open);
        for b in &mut out[at..=close] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The paths a `use` tree names (`a::{b, c::{self, D}}` → `a::b`, `a::c`, `a::c::D`).
fn use_paths(tree: &str, prefix: &[String], out: &mut Vec<Vec<String>>) {
    let tree = tree.trim();
    let segments = |text: &str| -> Vec<String> {
        text.split("::")
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect()
    };
    let Some(open) = tree.find('{') else {
        let name = tree.split(" as ").next().unwrap_or(tree);
        let mut path = prefix.to_vec();
        path.extend(
            segments(name)
                .into_iter()
                .filter(|s| s != "self" || prefix.is_empty()),
        );
        out.push(path);
        return;
    };
    let mut head = prefix.to_vec();
    head.extend(segments(&tree[..open]));
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let (mut depth, mut start) = (0, 0);
    for (j, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                use_paths(&inner[start..j], &head, out);
                start = j + 1;
            }
            _ => {}
        }
    }
    if !inner[start..].trim().is_empty() {
        use_paths(&inner[start..], &head, out);
    }
}

/// The paths `code` names that may lead into its crate: `use` trees, and `crate::…`,
/// `super::…` and `self::…` written in the code.
fn named_paths(code: &str) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    for at in words(code, "use") {
        let rest = &code[at + 3..];
        if !rest.starts_with(char::is_whitespace) {
            continue;
        }
        if let Some(end) = rest.find(';') {
            use_paths(&rest[..end], &[], &mut paths);
        }
    }
    let bytes = code.as_bytes();
    for root in ["crate", "super", "self"] {
        for at in words(code, root) {
            let mut end = at + root.len();
            while code[end..].starts_with("::") {
                let ident = bytes[end + 2..]
                    .iter()
                    .take_while(|&&b| is_ident(b))
                    .count();
                if ident == 0 {
                    break;
                }
                end += 2 + ident;
            }
            if end > at + root.len() {
                paths.push(code[at..end].split("::").map(str::to_string).collect());
            }
        }
    }
    paths
}

/// Which files of the crate each file imports, with the names that tie them. A module
/// using its own submodules is how Rust composes a module, not an import between equals:
/// those edges are left out (a submodule using its parent is kept).
pub fn imports(files: &[SourceFile]) -> BTreeMap<PathBuf, BTreeMap<PathBuf, BTreeSet<String>>> {
    let by_module: BTreeMap<&[String], &SourceFile> =
        files.iter().map(|f| (f.module.as_slice(), f)).collect();
    let mut graph = BTreeMap::new();
    for file in files {
        let mut edges: BTreeMap<PathBuf, BTreeSet<String>> = BTreeMap::new();
        for path in named_paths(&without_test_modules(&file.code)) {
            let (base, rest): (Vec<String>, &[String]) = match path[0].as_str() {
                "crate" => (vec![], &path[1..]),
                "self" => (file.module.clone(), &path[1..]),
                "super" => {
                    let ups = path.iter().take_while(|s| *s == "super").count();
                    let keep = file.module.len().saturating_sub(ups);
                    (file.module[..keep].to_vec(), &path[ups..])
                }
                _ => (file.module.clone(), &path[..]),
            };
            let full: Vec<String> = base.iter().chain(rest).cloned().collect();
            let relative = !matches!(path[0].as_str(), "crate" | "self" | "super");
            if relative && !by_module.contains_key(&full[..=file.module.len()]) {
                continue; // another crate, or a name in scope
            }
            let Some(target) = (0..=full.len())
                .rev()
                .find_map(|n| by_module.get(&full[..n]))
            else {
                continue;
            };
            if target.module.starts_with(&file.module) {
                continue; // itself, or one of its own submodules
            }
            edges
                .entry(target.path.clone())
                .or_default()
                .insert(full[target.module.len()..].join("::"));
        }
        graph.insert(file.path.clone(), edges);
    }
    graph
}

/// The circles of `graph`: each set of two or more files that reach each other (Tarjan's
/// strongly connected components).
pub fn circles<V: Ord + Clone>(graph: &BTreeMap<V, BTreeSet<V>>) -> Vec<Vec<V>> {
    struct Walk<'g, V> {
        graph: &'g BTreeMap<V, BTreeSet<V>>,
        index: BTreeMap<V, usize>,
        low: BTreeMap<V, usize>,
        stack: Vec<V>,
        on_stack: BTreeSet<V>,
        found: Vec<Vec<V>>,
    }
    impl<V: Ord + Clone> Walk<'_, V> {
        fn visit(&mut self, v: &V) {
            let n = self.index.len();
            self.index.insert(v.clone(), n);
            self.low.insert(v.clone(), n);
            self.stack.push(v.clone());
            self.on_stack.insert(v.clone());
            for w in self.graph.get(v).into_iter().flatten() {
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w]);
                    self.low.insert(v.clone(), low);
                } else if self.on_stack.contains(w) {
                    let low = self.low[v].min(self.index[w]);
                    self.low.insert(v.clone(), low);
                }
            }
            if self.low[v] == self.index[v] {
                let mut component = Vec::new();
                loop {
                    let w = self.stack.pop().expect("v is on the stack");
                    self.on_stack.remove(&w);
                    let done = &w == v;
                    component.push(w);
                    if done {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.found.push(component);
                }
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !walk.index.contains_key(v) {
            walk.visit(v);
        }
    }
    walk.found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, module: &[&str], text: &str) -> SourceFile {
        SourceFile {
            path: PathBuf::from(path),
            module: module.iter().map(|s| s.to_string()).collect(),
            code: blank(text),
        }
    }

    #[test]
    fn comments_strings_and_chars_are_blanked_lifetimes_kept() {
        let text = "fn f<'a>(x: &'a str) { let c = '{'; let q = '\\''; let s = \"}\"; /* { /* } */ */ let r = r#\"}\"#; } // }";
        let code = blank(text);
        assert_eq!(code.matches('{').count(), 1, "{code}");
        assert_eq!(code.matches('}').count(), 1, "{code}");
        assert!(code.contains("&'a str"), "{code}");
    }

    #[test]
    fn a_function_spans_its_fn_line_to_its_closing_brace() {
        let f = file(
            "a.rs",
            &["a"],
            "trait T { fn declared(&self); }\nfn f(\n    x: [u8; 2],\n) -> u8 {\n    if x[0] > 0 { 1 } else { 2 }\n}\n",
        );
        let found = functions(&f);
        assert_eq!(found.len(), 1);
        assert_eq!(
            (found[0].name.as_str(), found[0].line, found[0].lines),
            ("f", 2, 5)
        );
    }

    #[test]
    fn imports_follow_crate_super_and_use_trees_but_not_a_module_into_its_own() {
        let files = [
            file(
                "lib.rs",
                &[],
                "mod a; mod b; pub use a::Thing; pub struct Error;",
            ),
            file(
                "a.rs",
                &["a"],
                "use crate::{b::{self, Other}, Error};\npub struct Thing;",
            ),
            file(
                "b.rs",
                &["b"],
                "fn f() { super::a::Thing; }\n#[cfg(test)]\nmod tests { use super::f; }",
            ),
            file("c/mod.rs", &["c"], "mod d; use d::Inner;"),
            file(
                "c/d.rs",
                &["c", "d"],
                "pub struct Inner; use super::super::Error;",
            ),
        ];
        let graph = imports(&files);
        let names = |from: &str, to: &str| -> Vec<String> {
            graph[Path::new(from)]
                .get(Path::new(to))
                .map_or_else(Vec::new, |n| n.iter().cloned().collect())
        };
        assert!(
            graph[Path::new("lib.rs")].is_empty(),
            "a module uses its own freely"
        );
        assert_eq!(names("a.rs", "b.rs"), ["", "Other"]);
        assert_eq!(names("a.rs", "lib.rs"), ["Error"]);
        assert_eq!(names("b.rs", "a.rs"), ["Thing"]);
        assert!(graph[Path::new("c/mod.rs")].is_empty());
        assert_eq!(names("c/d.rs", "lib.rs"), ["Error"]);
        let graph: BTreeMap<PathBuf, BTreeSet<PathBuf>> = graph
            .into_iter()
            .map(|(k, v)| (k, v.into_keys().collect()))
            .collect();
        assert_eq!(
            circles(&graph),
            [vec![PathBuf::from("a.rs"), PathBuf::from("b.rs")]]
        );
    }
}
