//! Parquet files as rows of JSON (the record API, no Arrow): what a mapping or the
//! canonical schema then reads, row by row.

use serde_json::Value;

/// Every row of the Parquet file `bytes`, as a JSON object.
pub(super) fn parquet_rows(bytes: &[u8]) -> Result<Vec<Value>, String> {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let reader = SerializedFileReader::new(bytes::Bytes::copy_from_slice(bytes))
        .map_err(|e| format!("not a readable Parquet file: {e}"))?;
    let rows = reader
        .get_row_iter(None)
        .map_err(|e| format!("cannot read the Parquet rows: {e}"))?;
    rows.enumerate()
        .map(|(i, row)| {
            row.map(|r| r.to_json_value())
                .map_err(|e| format!("row {}: cannot read it: {e}", i + 1))
        })
        .collect()
}
