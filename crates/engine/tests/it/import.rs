//! Imports read the file as a stream and write it in batches: still all or nothing, and
//! what is kept is what parsing the whole file gives.

use judgelab_core::dataset::{parse, ImportOptions};
use judgelab_store::Store;

/// `n` pairwise items; every fifth has no label, every seventh a reference.
fn lines(n: usize) -> Vec<String> {
    (1..=n)
        .map(|i| {
            let label = match i % 5 {
                0 => "null".to_string(),
                k => format!("\"{}\"", ["A", "B", "tie", "A"][k - 1]),
            };
            let reference = match i % 7 {
                0 => format!(r#","reference":"r{i}""#),
                _ => String::new(),
            };
            format!(
                r#"{{"id":"i{i}","task":"pairwise","question":"q{i}","answer_a":"a","answer_b":"b","human_label":{label}{reference}}}"#
            )
        })
        .collect()
}

#[tokio::test]
async fn a_streamed_import_is_all_or_nothing_and_keeps_what_parsing_gives() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("judgelab.sqlite"))
        .await
        .unwrap();
    let path = dir.path().join("many.jsonl");
    // A bad row after several batches were written: nothing is kept.
    let mut rows = lines(700);
    rows[649] = rows[649].replace(r#""question":"q650","#, "");
    std::fs::write(&path, rows.join("\n")).unwrap();
    let options = ImportOptions::default();
    let err = judgelab_engine::import_file(&store, &path, &options)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("many.jsonl:650: question: is missing"),
        "{err}"
    );
    assert_eq!(store.datasets().await.unwrap(), vec![]);

    let bytes = lines(700).join("\n");
    std::fs::write(&path, &bytes).unwrap();
    let imported = judgelab_engine::import_file(&store, &path, &options)
        .await
        .unwrap();
    let info = imported.dataset;
    let parsed = parse("many.jsonl", bytes.as_bytes(), &options).unwrap();
    assert_eq!((info.n_items, info.n_unlabelled), (560, 140));
    assert_eq!(info.n_with_reference, 100);
    assert_eq!(info.content_hash, parsed.content_hash);
    assert_eq!(
        store.label_counts(&info).await.unwrap(),
        parsed.label_counts()
    );
    assert_eq!(store.datasets().await.unwrap(), vec![info.clone()]);
    let loaded = store.load_dataset(&info).await.unwrap();
    assert_eq!(loaded.items, parsed.items);
    assert_eq!(loaded.unlabelled, parsed.unlabelled);
    // The same file again is a no-op.
    let again = judgelab_engine::import_file(&store, &path, &options)
        .await
        .unwrap();
    assert!(again.already);
}
