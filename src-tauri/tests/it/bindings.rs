//! The committed TypeScript bindings (`ui/src/lib/bindings.ts`) match the Rust commands.
//! So does the sweep's axis list the UI's unit tests read (`ui/src/lib/axes.json`).
//! `JUDGELAB_BLESS=1 cargo test -p judgelab-app --test it bindings` rewrites both.

use std::path::Path;

/// Checks that the committed `ui/src/lib/{file}` is `generated` (or writes it, blessing).
fn check(file: &str, generated: &str) {
    let committed = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../ui/src/lib")
        .join(file);
    if std::env::var_os("JUDGELAB_BLESS").is_some() {
        std::fs::write(&committed, generated).expect("write the generated file");
        return;
    }
    let old = std::fs::read_to_string(&committed).unwrap_or_default();
    assert!(
        old == generated,
        "{} is stale: run `JUDGELAB_BLESS=1 cargo test -p judgelab-app --test it bindings` and commit it",
        committed.display()
    );
}

#[test]
fn bindings_are_up_to_date() {
    let fresh = tempfile::tempdir().expect("temp dir");
    let generated = fresh.path().join("bindings.ts");
    judgelab_app::export_bindings(&generated).expect("bindings export");
    check(
        "bindings.ts",
        &std::fs::read_to_string(&generated).expect("generated bindings"),
    );
}

/// The sweep's axes as the UI's unit tests read them, generated from `core::sweep` like
/// the bindings.
#[test]
fn axes_are_up_to_date() {
    let axes = serde_json::to_string_pretty(&judgelab_app::sweep_axes()).expect("axes serialise");
    check("axes.json", &(axes + "\n"));
}
