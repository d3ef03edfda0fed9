//! Files as researchers have them, read through mappings into the items a canonical file
//! gives: an MT-Bench-style Parquet file (written once by `tools/make_import_fixtures.py`
//! with pyarrow; read here in Rust), the same rows as a JSON array and gzipped.

use std::path::PathBuf;

use judgelab_core::dataset::mapping::Mapping;
use judgelab_core::dataset::{parse, ImportOptions};
use judgelab_core::Dataset;

fn data(file: &str) -> (String, Vec<u8>) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/it/data")
        .join(file);
    (path.display().to_string(), std::fs::read(&path).unwrap())
}

const FIELDS: &str = "question=conversation_a[0].content,answer_a=conversation_a[-1].content,answer_b=conversation_b[-1].content,human_label=winner";
const LABELS: &str = "model_a=A,model_b=B,tie=tie,\"tie (bothbad)\"=tie";

fn mapped(fields: &str, labels: &str) -> ImportOptions {
    ImportOptions {
        name: Some("mt".into()),
        mapping: Some(Mapping::parse(fields, Some(labels)).unwrap()),
        ..ImportOptions::default()
    }
}

fn canonical() -> Dataset {
    let (path, bytes) = data("mt_bench_style.canonical.jsonl");
    parse(&path, &bytes, &ImportOptions::default()).unwrap()
}

#[test]
fn a_parquet_file_maps_to_the_canonical_items() {
    let (path, bytes) = data("mt_bench_style.parquet");
    let d = parse(&path, &bytes, &mapped(FIELDS, LABELS)).unwrap();
    assert_eq!(d.items, canonical().items);
    assert_eq!(d.label_counts(), canonical().label_counts());
}

#[test]
fn a_json_array_and_a_gzipped_file_read_as_their_content() {
    let (_, bytes) = data("mt_bench_style.canonical.jsonl");
    let rows: Vec<serde_json::Value> = String::from_utf8(bytes.clone())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let array = serde_json::to_vec(&rows).unwrap();
    let d = parse("rows.json", &array, &ImportOptions::default()).unwrap();
    assert_eq!(d.items, canonical().items);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, &bytes).unwrap();
    let zipped = gz.finish().unwrap();
    let d = parse("rows.jsonl.gz", &zipped, &ImportOptions::default()).unwrap();
    assert_eq!(d.items, canonical().items);
    let err = parse("rows.jsonl.gz", &bytes, &ImportOptions::default()).unwrap_err();
    assert!(
        err.to_string().contains("not a readable gzip file"),
        "{err}"
    );
    let err = parse("rows.parquet", &bytes, &ImportOptions::default()).unwrap_err();
    assert!(
        err.to_string().contains("not a readable Parquet file"),
        "{err}"
    );
}

#[test]
fn a_bad_path_or_an_unmapped_label_is_refused_at_its_row() {
    let (path, bytes) = data("mt_bench_style.parquet");
    let far = FIELDS.replace("conversation_a[-1]", "conversation_a[5]");
    let err = parse(&path, &bytes, &mapped(&far, LABELS))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("mt_bench_style.parquet:1: answer_a (mapped from conversation_a[5].content): no element [5] in conversation_a (a list)"),
        "{err}"
    );
    let err = parse(
        &path,
        &bytes,
        &mapped(FIELDS, "model_a=A,model_b=B,tie=tie"),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("mt_bench_style.parquet:4: human_label (mapped from winner): value \"tie (bothbad)\" is not in the label mapping"),
        "{err}"
    );
}

/// HelpSteer2-style attribute columns through a reusable mapping file: helpfulness the
/// label, the other four attributes criteria, all on 0-4.
#[test]
fn a_csv_of_attribute_columns_maps_through_a_mapping_file() {
    let (_, map) = data("helpsteer_style.map.toml");
    let mapping = Mapping::from_toml(std::str::from_utf8(&map).unwrap()).unwrap();
    let scale = Some((0, 4));
    let (path, bytes) = data("helpsteer_style.csv");
    let options = ImportOptions {
        scale,
        mapping: Some(mapping),
        ..ImportOptions::default()
    };
    let d = parse(&path, &bytes, &options).unwrap();
    let (path, bytes) = data("helpsteer_style.canonical.jsonl");
    let canonical = ImportOptions {
        scale,
        ..ImportOptions::default()
    };
    let c = parse(&path, &bytes, &canonical).unwrap();
    assert_eq!(d.items, c.items);
    assert_eq!(d.criteria, c.criteria);
    assert_eq!(d.criteria.len(), 4);
    // Its rows are named by their lines (CRLF, as Python's csv writes): 2, 3, 4.
    let ids: Vec<&str> = d.items.iter().map(|i| i.id.as_str()).collect();
    assert_eq!(ids, ["2", "3", "4"]);
    // What a mapping file may hold, checked.
    let err = Mapping::from_toml("[fields]\nquestion = 3.5\nanswr = \"a\"").unwrap_err();
    assert!(
        err.contains("\"answr\" is not a field Judgelab reads"),
        "{err}"
    );
    let err = Mapping::from_toml("[field]\nquestion = \"q\"").unwrap_err();
    assert!(err.contains("unknown field `field`"), "{err}");
}
