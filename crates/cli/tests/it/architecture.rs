//! The rules of `ARCHITECTURE.md` that code can check: which crate of ours may depend on
//! which and what `core` and `report` must never compile (read from `cargo metadata`), no
//! circle of files importing each other, how long a function may grow, that every file
//! opens with what it is for, and that no unit test sits where none is built (read from
//! the sources).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::source;

/// The workspace's metadata with its resolved dependency graph for this machine's platform
/// (offline: the lock file and the registry cache the build used).
fn metadata() -> Value {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let rustc = Command::new("rustc")
        .arg("-vV")
        .output()
        .expect("rustc runs");
    let host = String::from_utf8_lossy(&rustc.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_string))
        .expect("rustc -vV names the host");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(&root)
        .args(["metadata", "--format-version", "1", "--offline", "--locked"])
        .args(["--filter-platform", &host])
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("cargo metadata prints JSON")
}

#[test]
fn crates_depend_only_as_the_architecture_says() {
    let m = metadata();
    let ours: BTreeSet<String> = m["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_string())
        .filter(|n| n.starts_with("judgelab-"))
        .collect();
    // Each crate of ours and the crates of ours it may use (normal dependencies).
    let allowed: BTreeMap<&str, &[&str]> = BTreeMap::from([
        ("judgelab-core", &[][..]),
        ("judgelab-llama", &["judgelab-core"][..]),
        ("judgelab-openai", &["judgelab-core"][..]),
        ("judgelab-store", &["judgelab-core"][..]),
        (
            "judgelab-engine",
            &[
                "judgelab-core",
                "judgelab-llama",
                "judgelab-openai",
                "judgelab-store",
            ][..],
        ),
        ("judgelab-report", &["judgelab-core"][..]),
        (
            "judgelab-cli",
            &[
                "judgelab-core",
                "judgelab-store",
                "judgelab-engine",
                "judgelab-report",
            ][..],
        ),
        (
            "judgelab-app",
            &[
                "judgelab-core",
                "judgelab-store",
                "judgelab-engine",
                "judgelab-report",
            ][..],
        ),
        ("judgelab-testkit", &[][..]),
    ]);
    for p in m["packages"].as_array().unwrap() {
        let name = p["name"].as_str().unwrap();
        if !ours.contains(name) {
            continue;
        }
        let may = allowed
            .get(name)
            .unwrap_or_else(|| panic!("{name} is not in ARCHITECTURE.md's crate rules"));
        for d in p["dependencies"].as_array().unwrap() {
            let dep = d["name"].as_str().unwrap();
            let normal = d["kind"].is_null();
            if !ours.contains(dep) {
                continue;
            }
            if dep == "judgelab-testkit" {
                assert!(!normal, "{name} depends on testkit outside its tests");
            } else if normal {
                assert!(may.contains(&dep), "{name} must not depend on {dep}");
            }
        }
    }
}

/// The packages `package`'s library builds: its normal dependencies, transitively, by name.
fn builds(m: &Value, package: &str) -> BTreeSet<String> {
    let nodes: BTreeMap<&str, &Value> = m["resolve"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["id"].as_str().unwrap(), n))
        .collect();
    let name_of: BTreeMap<&str, &str> = m["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["id"].as_str().unwrap(), p["name"].as_str().unwrap()))
        .collect();
    let root = name_of
        .iter()
        .find(|(_, n)| **n == package)
        .map(|(id, _)| *id)
        .unwrap();
    let mut seen = BTreeSet::new();
    let mut todo = vec![root];
    while let Some(id) = todo.pop() {
        if !seen.insert(id) {
            continue;
        }
        for d in nodes[id]["deps"].as_array().unwrap() {
            let normal = d["dep_kinds"]
                .as_array()
                .unwrap()
                .iter()
                .any(|k| k["kind"].is_null());
            if normal {
                todo.push(d["pkg"].as_str().unwrap());
            }
        }
    }
    seen.iter().map(|id| name_of[id].to_string()).collect()
}

#[test]
fn the_report_compiles_no_llama_cpp_http_client_or_database() {
    let built = builds(&metadata(), "judgelab-report");
    assert!(
        built.contains("judgelab-core") && built.contains("plotters"),
        "the walk reaches what the report does build: {built:?}"
    );
    for never in [
        "llama-cpp-sys-2",
        "reqwest",
        "sqlx",
        "judgelab-store",
        "judgelab-engine",
    ] {
        assert!(!built.contains(never), "judgelab-report builds {never}");
    }
}

#[test]
fn core_builds_no_runtime_database_http_client_or_ui() {
    let built = builds(&metadata(), "judgelab-core");
    assert!(
        built.contains("serde") && built.contains("minijinja"),
        "the walk reaches what core does build: {built:?}"
    );
    let never = [
        "tokio",
        "async-std",
        "futures",
        "sqlx",
        "rusqlite",
        "libsqlite3-sys",
        "reqwest",
        "hyper",
        "tauri",
        "plotters",
        "llama-cpp-sys-2",
    ];
    for name in &built {
        let ours = name.starts_with("judgelab-") && name != "judgelab-core";
        assert!(
            !ours && !never.contains(&name.as_str()),
            "judgelab-core builds {name}"
        );
    }
}

#[test]
fn every_source_file_says_what_it_is_for() {
    let root = workspace_root();
    let mut silent = Vec::new();
    for src in source_roots(&metadata()) {
        for file in source::crates(&root, &BTreeSet::from([src]))
            .into_values()
            .flatten()
        {
            let text = std::fs::read_to_string(root.join(&file.path)).unwrap();
            let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            if !first.starts_with("//!") {
                silent.push(file.path.display().to_string());
            }
        }
    }
    assert!(
        silent.is_empty(),
        "files that do not open with a `//!` line saying what they are for: {silent:?}"
    );
}

/// A library or binary built without a unit-test binary (`test = false`, so that the
/// workspace's tests do not build it twice) has no unit test that would then never run.
#[test]
fn targets_built_without_unit_tests_have_none() {
    let root = workspace_root();
    let m = metadata();
    let mut unseen = Vec::new();
    for package in m["packages"].as_array().unwrap() {
        if !package["source"].is_null() {
            continue;
        }
        let targets: Vec<&Value> = package["targets"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| is_code(t))
            .collect();
        for target in targets.iter().filter(|t| t["test"] == false) {
            let main = Path::new(target["src_path"].as_str().unwrap());
            let dir = main.parent().unwrap();
            // Its files: its folder's, unless another target shares the folder.
            let shared = targets.iter().any(|t| {
                t["src_path"] != target["src_path"]
                    && Path::new(t["src_path"].as_str().unwrap()).parent() == Some(dir)
            });
            let files = source::crates(&root, &BTreeSet::from([dir.to_path_buf()]));
            for file in files.into_values().flatten() {
                let mine = !shared || root.join(&file.path) == main;
                if mine && file.code.contains("#[cfg(test)]") {
                    unseen.push(file.path.display().to_string());
                }
            }
        }
    }
    assert!(
        unseen.is_empty(),
        "unit tests in targets built with `test = false` (they never run): {unseen:?}"
    );
}

/// A library or a binary (not a test, bench, example or build script).
fn is_code(target: &Value) -> bool {
    target["kind"]
        .as_array()
        .unwrap()
        .iter()
        .any(|k| k == "lib" || k == "bin")
}

/// The `src` folders of the workspace's libraries and binaries.
fn source_roots(m: &Value) -> BTreeSet<std::path::PathBuf> {
    m["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["source"].is_null())
        .flat_map(|p| p["targets"].as_array().unwrap())
        .filter(|t| is_code(t))
        .map(|t| {
            Path::new(t["src_path"].as_str().unwrap())
                .parent()
                .unwrap()
                .to_path_buf()
        })
        .collect()
}

fn workspace_root() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

#[test]
fn no_two_files_import_each_other() {
    let root = workspace_root();
    let crates = source::crates(&root, &source_roots(&metadata()));
    assert!(
        crates.len() >= 8,
        "every crate is read: {:?}",
        crates.keys()
    );
    let mut found = Vec::new();
    for files in crates.values() {
        let imports = source::imports(files);
        let graph = imports
            .iter()
            .map(|(file, edges)| (file.clone(), edges.keys().cloned().collect()))
            .collect();
        for circle in source::circles(&graph) {
            let mut ties = String::new();
            for from in &circle {
                for (to, names) in &imports[from] {
                    if circle.contains(to) {
                        let names: Vec<&str> = names.iter().map(String::as_str).collect();
                        ties += &format!(
                            "\n  {} -> {}: {}",
                            from.display(),
                            to.display(),
                            names.join(", ")
                        );
                    }
                }
            }
            found.push(ties);
        }
    }
    assert!(
        found.is_empty(),
        "files that import each other (what two files both need belongs in a third):{}",
        found.concat()
    );
}

/// A function longer than this does more than one thing, or more than one screen shows.
const MAX_LINES: usize = 120;
/// Functions over this length are the ones to split next; their number only goes down.
const LONG_LINES: usize = 80;
const MAX_LONG: usize = 30;

#[test]
fn functions_stay_short() {
    let root = workspace_root();
    let crates = source::crates(&root, &source_roots(&metadata()));
    let mut functions: Vec<source::Function> = crates
        .values()
        .flatten()
        .flat_map(source::functions)
        .collect();
    assert!(functions.len() > 1000, "every function is read");
    functions.sort_by_key(|f| std::cmp::Reverse(f.lines));
    let shown = |f: &source::Function| {
        format!(
            "\n  {}:{} {} ({} lines)",
            f.path.display(),
            f.line,
            f.name,
            f.lines
        )
    };
    let too_long: String = functions
        .iter()
        .filter(|f| f.lines > MAX_LINES)
        .map(shown)
        .collect();
    assert!(
        too_long.is_empty(),
        "functions over {MAX_LINES} lines:{too_long}"
    );
    let long: Vec<&source::Function> = functions.iter().filter(|f| f.lines > LONG_LINES).collect();
    assert!(
        long.len() <= MAX_LONG,
        "{} functions over {LONG_LINES} lines, at most {MAX_LONG}:{}",
        long.len(),
        long.iter().map(|f| shown(f)).collect::<String>()
    );
}
