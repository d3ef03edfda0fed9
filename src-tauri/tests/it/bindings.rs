//! The committed TypeScript bindings (`ui/src/lib/bindings.ts`) match the Rust commands.
//! So does the sweep's axis list the UI's unit tests read (`ui/src/lib/axes.json`).
//! `JUDGELAB_BLESS=1 cargo test -p judgelab-app --test it bindings` rewrites both.

use std::path::Path;

#[test]
fn bindings_are_up_to_date() {
    let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ui/src/lib/bindings.ts");
    let fresh = tempfile::tempdir().expect("temp dir");
    let generated = fresh.path().join("bindings.ts");
    judgelab_app::export_bindings(&generated).expect("bindings export");
    let generated = std::fs::read_to_string(&generated).expect("generated bindings");
    if std::env::var_os("JUDGELAB_BLESS").is_some() {
        std::fs::write(&committed, &generated).expect("write bindings");
        return;
    }
    let old = std::fs::read_to_string(&committed).unwrap_or_default();
    assert!(
        old == generated,
        "{} is stale: run `JUDGELAB_BLESS=1 cargo test -p judgelab-app --test it bindings` and commit it",
        committed.display()
    );
}

/// The sweep's axes as the UI's unit tests read them (`ui/src/lib/axes.json`), generated
/// from `core::sweep` like the bindings.
#[test]
fn axes_are_up_to_date() {
    let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ui/src/lib/axes.json");
    let generated =
        serde_json::to_string_pretty(&judgelab_app::sweep_axes()).expect("axes serialise") + "\n";
    if std::env::var_os("JUDGELAB_BLESS").is_some() {
        std::fs::write(&committed, &generated).expect("write axes");
        return;
    }
    let old = std::fs::read_to_string(&committed).unwrap_or_default();
    assert!(
        old == generated,
        "{} is stale: run `JUDGELAB_BLESS=1 cargo test -p judgelab-app --test it bindings` and commit it",
        committed.display()
    );
}
