//! A snapshot of the Results screen's view (`view::results`), as the app hands it to the UI,
//! of a real stored run (4 trials of 40 items, judged through the engine by a scripted
//! judge): a change to what the screen is given shows in a diff (`cargo insta review`, or
//! `INSTA_UPDATE=always` and read the diff). The Pareto charts' SVGs are left out.

#[path = "../../benches/scripted/mod.rs"]
mod scripted;

use judgelab_core::metrics::{BootstrapSpec, Quality};
use judgelab_store::Store;
use serde_json::Value;

/// `v` with every SVG string as `<svg …/>`, and every fraction to six places (what a
/// screen shows is three).
fn shown(v: &mut Value) {
    match v {
        Value::String(s) if s.starts_with("<svg") => *s = "<svg …/>".into(),
        Value::Number(n) if n.is_f64() => {
            let x = n.as_f64().unwrap_or_default();
            *v = serde_json::json!((x * 1e6).round() / 1e6);
        }
        Value::Array(items) => items.iter_mut().for_each(shown),
        Value::Object(fields) => fields.values_mut().for_each(shown),
        _ => {}
    }
}

#[test]
fn the_results_view_of_a_stored_run() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("judgelab.sqlite");
    scripted::store(&db, 40, dir.path()).unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let opened = rt.block_on(async {
        let store = Store::open(&db).await.unwrap();
        let opened = judgelab_engine::open(&store, scripted::NAME).await.unwrap();
        store.close().await;
        opened
    });
    for resamples in [0, 200] {
        let spec = BootstrapSpec {
            resamples,
            ..BootstrapSpec::default()
        };
        let summary = opened.summarize(&spec, &Default::default(), None).unwrap();
        let results = judgelab_app::view::results(&summary, Quality::Kappa).unwrap();
        let mut v = serde_json::to_value(&results).unwrap();
        shown(&mut v);
        let name = format!("results_view_{resamples}_resamples");
        insta::assert_snapshot!(name, serde_json::to_string_pretty(&v).unwrap());
    }
}
