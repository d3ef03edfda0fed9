//! Embeds the schema's migrations, `migrations/<version>_<description>.sql`, as a list the
//! store runs (`src/migrations.rs`), and rebuilds the store when one changes. This is what
//! `sqlx::migrate!` would do, without sqlx's macros and the second SQLite they compile.

use std::fmt::Write;
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=migrations");
    let dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("migrations");
    let mut found: Vec<(i64, String, PathBuf)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "sql"))
        .map(|path| {
            let stem = path.file_stem().unwrap().to_str().unwrap();
            // sqlx's reversible migrations (`.up.sql`, `.down.sql`) are not embedded here.
            assert!(
                !stem.contains('.'),
                "{}: only simple migrations, <version>_<description>.sql",
                path.display()
            );
            let (version, description) = stem
                .split_once('_')
                .unwrap_or_else(|| panic!("{}: not <version>_<description>.sql", path.display()));
            let version = version
                .parse()
                .unwrap_or_else(|_| panic!("{}: the version is not a number", path.display()));
            (version, description.replace('_', " "), path)
        })
        .collect();
    found.sort();
    let mut list = String::from("&[\n");
    for (version, description, path) in &found {
        writeln!(
            list,
            "    ({version}, {description:?}, include_str!({path:?})),"
        )
        .unwrap();
    }
    list.push(']');
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("migrations.rs");
    std::fs::write(out, list).unwrap();
}
