//! The file formats a dataset is read from — JSONL, a JSON array, CSV (or TSV) and
//! Parquet, each optionally gzipped — as a stream of records (a row as a JSON object, at its line or row
//! number), read from bytes in memory or a file on disk without holding the file.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use serde_json::{Map, Value};

use super::{non_utf8, DatasetError, LineError, FIELDS, JSON_FIELDS};

/// Where a dataset's bytes are: in memory, or in a file read as a stream.
#[derive(Debug, Clone, Copy)]
pub enum Source<'a> {
    Bytes(&'a [u8]),
    File(&'a Path),
}

/// One row: its line (or row number from 1) and its fields, or why it is not a row.
pub(super) type Record = (usize, Result<Map<String, Value>, LineError>);

/// Takes each record; returns whether it wants more.
pub(super) type Sink<'s, 'f> = &'s mut (dyn FnMut(Record) -> bool + 'f);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Format {
    Jsonl,
    Json,
    /// Comma-separated, or tab-separated (`.tsv`).
    Csv(u8),
    Parquet,
}

/// The format `path` names, and whether it is gzipped.
pub(super) fn format(path: &str) -> Result<(Format, bool), String> {
    let lower = path.to_ascii_lowercase();
    let (inner, gz) = match lower.strip_suffix(".gz") {
        Some(inner) => (inner, true),
        None => (lower.as_str(), false),
    };
    let format = if inner.ends_with(".jsonl") || inner.ends_with(".ndjson") {
        Format::Jsonl
    } else if inner.ends_with(".csv") {
        Format::Csv(b',')
    } else if inner.ends_with(".tsv") || inner.ends_with(".tab") {
        Format::Csv(b'\t')
    } else if inner.ends_with(".json") {
        Format::Json
    } else if inner.ends_with(".parquet") {
        Format::Parquet
    } else {
        return Err(
            "unknown format: expected .jsonl, .json (an array of objects), .csv, .tsv or .parquet, each optionally .gz".into(),
        );
    };
    Ok((format, gz))
}

impl Source<'_> {
    /// Its content, decompressed where `gz`.
    fn open(&self, gz: bool) -> Result<Box<dyn BufRead + '_>, String> {
        let raw: Box<dyn Read + '_> = match self {
            Source::Bytes(b) => Box::new(*b),
            Source::File(p) => {
                Box::new(std::fs::File::open(p).map_err(|e| format!("cannot read it: {e}"))?)
            }
        };
        Ok(match gz {
            true => Box::new(BufReader::new(flate2::read::MultiGzDecoder::new(
                BufReader::new(raw),
            ))),
            false => Box::new(BufReader::with_capacity(1 << 16, raw)),
        })
    }

    /// Whether its (decompressed) content holds `needle` anywhere: a scan, nothing kept.
    pub(super) fn contains(&self, gz: bool, needle: &[u8]) -> Result<bool, String> {
        let mut reader = self.open(gz)?;
        let mut tail: Vec<u8> = Vec::new();
        loop {
            let chunk = reader.fill_buf().map_err(gzip_problem(gz))?;
            if chunk.is_empty() {
                return Ok(false);
            }
            tail.extend_from_slice(chunk);
            let n = chunk.len();
            reader.consume(n);
            if tail.windows(needle.len()).any(|w| w == needle) {
                return Ok(true);
            }
            let keep = tail.len().min(needle.len() - 1);
            tail.drain(..tail.len() - keep);
        }
    }
}

fn gzip_problem(gz: bool) -> impl Fn(std::io::Error) -> String {
    move |e| match gz {
        true => format!("not a readable gzip file: {e}"),
        false => format!("cannot read it: {e}"),
    }
}

/// Every record of `source` (a `format` file, gzipped or not) to `sink`, in order, until it
/// wants no more; `mapped`: a CSV may have any header, its cells all text.
pub(super) fn records(
    path: &str,
    source: Source<'_>,
    (format, gz): (Format, bool),
    mapped: bool,
    sink: Sink<'_, '_>,
) -> Result<(), DatasetError> {
    let file_error = |problem: String| DatasetError::File {
        path: path.to_string(),
        problem,
    };
    match format {
        Format::Parquet => {
            return parquet_records(source, gz, sink).map_err(file_error);
        }
        Format::Jsonl => jsonl_records(source.open(gz).map_err(file_error)?, gz, sink),
        Format::Json => json_records(source.open(gz).map_err(file_error)?, sink),
        Format::Csv(delimiter) => {
            let reader = source.open(gz).map_err(file_error)?;
            csv_records(path, reader, delimiter, mapped, sink)
        }
    }
    .map_err(|e| match e {
        Stop::Io(problem) => file_error(problem),
        Stop::Error(e) => e,
    })
}

enum Stop {
    Io(String),
    Error(DatasetError),
}

fn jsonl_records(
    mut reader: Box<dyn BufRead + '_>,
    gz: bool,
    sink: Sink<'_, '_>,
) -> Result<(), Stop> {
    let mut raw = Vec::new();
    for line in 1.. {
        raw.clear();
        let n = reader
            .read_until(b'\n', &mut raw)
            .map_err(|e| Stop::Io(gzip_problem(gz)(e)))?;
        if n == 0 {
            return Ok(());
        }
        let text = match std::str::from_utf8(&raw) {
            Ok(t) => t.trim_end_matches('\n').trim_end_matches('\r'),
            Err(e) => {
                if !sink((line, Err(non_utf8(line, e)))) {
                    return Ok(());
                }
                continue;
            }
        };
        if text.trim().is_empty() {
            continue;
        }
        let record = match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(obj)) => Ok(obj),
            Ok(_) => Err(LineError {
                line,
                field: "line".into(),
                problem: "expected a JSON object".into(),
            }),
            Err(e) => Err(LineError {
                line,
                field: "line".into(),
                problem: format!("invalid JSON: {e}"),
            }),
        };
        if !sink((line, record)) {
            return Ok(());
        }
    }
    Ok(())
}

/// A row as a record at its number (from 1): a row that is not an object is an error there.
fn row_record(line: usize, row: Value) -> Record {
    match row {
        Value::Object(obj) => (line, Ok(obj)),
        _ => (
            line,
            Err(LineError {
                line,
                field: "row".into(),
                problem: "expected an object".into(),
            }),
        ),
    }
}

/// A JSON array's rows, each handed on as it is read (the array is never held whole).
fn json_records(reader: Box<dyn BufRead + '_>, sink: Sink<'_, '_>) -> Result<(), Stop> {
    use serde::de::{Deserializer, SeqAccess, Visitor};
    struct Rows<'s, 'f>(Sink<'s, 'f>);
    impl<'de> Visitor<'de> for Rows<'_, '_> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a JSON array of objects (one object per line is .jsonl)")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
            let mut line = 0;
            while let Some(row) = seq.next_element::<Value>()? {
                line += 1;
                if !(self.0)(row_record(line, row)) {
                    // The rest is not read: nothing more is wanted of it.
                    while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                    return Ok(());
                }
            }
            Ok(())
        }
    }
    let mut de = serde_json::Deserializer::from_reader(reader);
    de.deserialize_seq(Rows(sink))
        .and_then(|()| de.end())
        .map_err(|e| match e.classify() {
            serde_json::error::Category::Io => Stop::Io(format!("cannot read it: {e}")),
            serde_json::error::Category::Data => Stop::Io(e.to_string()),
            _ => Stop::Io(format!("invalid JSON: {e}")),
        })
}

/// Every row of a Parquet file as a JSON object (the record API, no Arrow), read row group
/// by row group from the file; a gzipped one is unpacked in memory first (Parquet is read
/// by seeking).
fn parquet_records(source: Source<'_>, gz: bool, sink: Sink<'_, '_>) -> Result<(), String> {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let not_parquet =
        |e: parquet::errors::ParquetError| format!("not a readable Parquet file: {e}");
    let reader: Box<dyn FileReader> = match (source, gz) {
        (Source::File(p), false) => {
            let file = std::fs::File::open(p).map_err(|e| format!("cannot read it: {e}"))?;
            Box::new(guarded(|| SerializedFileReader::new(file))?.map_err(not_parquet)?)
        }
        (source, gz) => {
            let mut bytes = Vec::new();
            source
                .open(gz)?
                .read_to_end(&mut bytes)
                .map_err(gzip_problem(gz))?;
            let bytes = bytes::Bytes::from(bytes);
            Box::new(guarded(|| SerializedFileReader::new(bytes))?.map_err(not_parquet)?)
        }
    };
    let mut rows = guarded(|| reader.get_row_iter(None))?
        .map_err(|e| format!("cannot read the Parquet rows: {e}"))?;
    for i in 1.. {
        let Some(row) = guarded(|| rows.next())? else {
            break;
        };
        let row = row.map_err(|e| format!("row {i}: cannot read it: {e}"))?;
        let value = guarded(|| row.to_json_value())?;
        if !sink(row_record(i, value)) {
            break;
        }
    }
    Ok(())
}

/// `f`, a step of the Parquet reader: the `parquet` crate asserts some of what a corrupt
/// file breaks (e.g. `bit_util.rs`: `size <= src.len()`), which is then an error here, not
/// a panic of the import.
fn guarded<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|_| {
        "not a readable Parquet file: its data is corrupt (the reader failed on it)".to_string()
    })
}

/// A CSV (or, by `delimiter`, TSV) file's rows by its header; `mapped`: any header, every cell text (a mapping names
/// the columns it reads).
fn csv_records(
    path: &str,
    reader: Box<dyn BufRead + '_>,
    delimiter: u8,
    mapped: bool,
    sink: Sink<'_, '_>,
) -> Result<(), Stop> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .delimiter(delimiter)
        .from_reader(Tracked {
            inner: reader,
            offset: 0,
            breaks: Breaks::default(),
        });
    let lines_error = |errors| {
        Stop::Error(DatasetError::Lines {
            path: path.to_string(),
            errors,
            n_more: 0,
        })
    };
    let headers = reader
        .byte_headers()
        .map_err(|e| Stop::Io(format!("cannot read the CSV header: {e}")))?
        .clone();
    let mut columns = Vec::new();
    for (i, h) in headers.iter().enumerate() {
        let name = std::str::from_utf8(h).map_err(|e| lines_error(vec![non_utf8(1, e)]))?;
        let name = name.trim().trim_start_matches('\u{feff}').to_string();
        if !mapped && !FIELDS.contains(&name.as_str()) {
            return Err(lines_error(vec![LineError {
                line: 1,
                field: name.clone(),
                problem: format!(
                    "unknown column (column {}); expected some of {}",
                    i + 1,
                    FIELDS.join(", ")
                ),
            }]));
        }
        columns.push(name);
    }
    let mut record = csv::ByteRecord::new();
    loop {
        let line;
        let row = match reader.read_byte_record(&mut record) {
            Ok(false) => return Ok(()),
            Ok(true) => {
                let offset = record.position().map_or(0, |p| p.byte());
                line = reader.get_mut().breaks.line_at(offset);
                cells(&columns, &record, line, mapped)
            }
            Err(e) => {
                if let csv::ErrorKind::Io(_) = e.kind() {
                    return Err(Stop::Io(format!("cannot read it: {e}")));
                }
                let offset = e.position().map_or(0, |p| p.byte());
                line = reader.get_mut().breaks.line_at(offset);
                Err(LineError {
                    line,
                    field: "line".into(),
                    problem: format!("invalid CSV: {e}"),
                })
            }
        };
        if !sink((line, row)) {
            return Ok(());
        }
    }
}

/// A CSV row's cells by column: text, or JSON where a canonical field holds JSON.
fn cells(
    columns: &[String],
    record: &csv::ByteRecord,
    line: usize,
    mapped: bool,
) -> Result<Map<String, Value>, LineError> {
    let mut obj = Map::new();
    let mut bad = None;
    for (name, cell) in columns.iter().zip(record.iter()) {
        match std::str::from_utf8(cell) {
            Ok("") => {}
            Ok(text) if !mapped && JSON_FIELDS.contains(&name.as_str()) => {
                match serde_json::from_str::<Value>(text) {
                    Ok(v) => {
                        obj.insert(name.clone(), v);
                    }
                    Err(e) => {
                        bad = Some(LineError {
                            line,
                            field: name.clone(),
                            problem: format!("invalid JSON: {e}"),
                        });
                    }
                }
            }
            Ok(text) => {
                obj.insert(name.clone(), Value::String(text.to_string()));
            }
            Err(e) => bad = Some(non_utf8(line, e)),
        }
    }
    bad.map_or(Ok(obj), Err)
}

/// The line breaks read but not yet passed, to number a CSV record's line from its byte
/// offset: after a CRLF the csv reader places the next record at the line feed, on the
/// line before it (and counts it so), so its line is counted here.
#[derive(Default)]
struct Breaks {
    /// Offsets of `\r` and `\n` bytes not yet passed, with whether each is a `\n`.
    pending: VecDeque<(u64, bool)>,
    /// Line feeds passed.
    passed: usize,
}

impl Breaks {
    /// The line of the first byte at or after `offset` that is not a line break.
    fn line_at(&mut self, offset: u64) -> usize {
        let mut at = offset;
        while let Some(&(o, lf)) = self.pending.front() {
            if o <= at {
                if o == at {
                    at += 1;
                }
                self.passed += lf as usize;
                self.pending.pop_front();
            } else {
                break;
            }
        }
        self.passed + 1
    }
}

/// A reader that notes where its line breaks are.
struct Tracked<R> {
    inner: R,
    offset: u64,
    breaks: Breaks,
}

impl<R: Read> Read for Tracked<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        for (i, &b) in buf[..n].iter().enumerate() {
            if b == b'\n' || b == b'\r' {
                self.breaks
                    .pending
                    .push_back((self.offset + i as u64, b == b'\n'));
            }
        }
        self.offset += n as u64;
        Ok(n)
    }
}
