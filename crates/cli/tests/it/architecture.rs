//! The crate rules of `ARCHITECTURE.md`, read from `cargo metadata`: which crate of ours may
//! depend on which, and what `report` must never compile.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use serde_json::Value;

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

#[test]
fn the_report_compiles_no_llama_cpp_http_client_or_database() {
    let m = metadata();
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
    let report = name_of
        .iter()
        .find(|(_, n)| **n == "judgelab-report")
        .map(|(id, _)| *id)
        .unwrap();
    // Everything the report's library builds: its normal dependencies, transitively.
    let mut seen = BTreeSet::new();
    let mut todo = vec![report];
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
    let built: BTreeSet<&str> = seen.iter().map(|id| name_of[id]).collect();
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
