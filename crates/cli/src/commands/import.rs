//! `judgelab import`: a dataset file into the database, all or nothing, in the canonical
//! schema or through a mapping; says what it holds.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use judgelab_core::dataset::mapping::{Mapping, Rescale};
use judgelab_core::dataset::ImportOptions;
use judgelab_engine::EngineError;
use judgelab_store::Store;

use crate::args::parse_scale;

/// `judgelab import`'s arguments.
#[derive(clap::Args)]
pub struct Args {
    file: PathBuf,
    /// Name of the dataset [default: the file name without extension]
    #[arg(long)]
    name: Option<String>,
    /// Rating scale of single-answer datasets, as MIN-MAX
    #[arg(long, value_name = "MIN-MAX", value_parser = parse_scale)]
    scale: Option<(i64, i64)>,
    /// Read a file of another shape: where each field is in a row, as
    /// `question=PATH,answer_a=PATH,…,human_label=PATH` (a PATH is a column, or keys and
    /// indices into nested JSON: `conversation_a[1].content`; `human_labels.NAME=PATH`
    /// a criterion)
    #[arg(long, value_name = "FIELD=PATH,...")]
    map: Option<String>,
    /// How the file's label values read, as `model_a=A,model_b=B,"tie (bothbad)"=tie`
    /// (needs --map); a value it does not name is an error at its row
    #[arg(long, value_name = "VALUE=LABEL,...", requires = "map")]
    label_map: Option<String>,
    /// Ratings moved linearly from the file's scale onto another, as
    /// FROM_MIN-FROM_MAX:TO_MIN-TO_MAX (`0-4:1-5`; needs --map), after --label-map
    #[arg(long, value_name = "A-B:C-D", requires = "map")]
    rescale: Option<String>,
    /// The same in a reusable file: `[fields]` (field = "path"), `[labels]`
    /// (value = "label") and `[rescale]` (from = [A, B], to = [C, D])
    #[arg(long, value_name = "FILE.toml", conflicts_with_all = ["map", "label_map", "rescale"])]
    map_file: Option<PathBuf>,
}

impl Args {
    /// The mapping the file is read through, if any: from the flags or from a mapping file.
    fn mapping(&self) -> Result<Option<Mapping>> {
        let invalid = |path: String| move |message| EngineError::Invalid { path, message };
        Ok(match (&self.map, &self.map_file) {
            (Some(fields), _) => Some(Mapping {
                rescale: self
                    .rescale
                    .as_deref()
                    .map(Rescale::parse)
                    .transpose()
                    .map_err(invalid("--rescale".into()))?,
                ..Mapping::parse(fields, self.label_map.as_deref())
                    .map_err(invalid("--map".into()))?
            }),
            (None, Some(file)) => {
                let text = std::fs::read_to_string(file)
                    .with_context(|| format!("while reading {}", file.display()))?;
                Some(Mapping::from_toml(&text).map_err(invalid(file.display().to_string()))?)
            }
            (None, None) => None,
        })
    }
}

pub async fn command(store: &Store, args: Args) -> Result<ExitCode> {
    let options = ImportOptions {
        mapping: args.mapping()?,
        name: args.name,
        scale: args.scale,
    };
    let file = &args.file;
    let imported = judgelab_engine::import_file(store, file, &options).await?;
    let d = &imported.dataset;
    if imported.already {
        println!(
            "{} is already imported as {:?} (same content): nothing to do",
            file.display(),
            d.name
        );
        return Ok(ExitCode::SUCCESS);
    }
    let counts: Vec<String> = store
        .label_counts(d)
        .await?
        .into_iter()
        .map(|(label, n)| format!("{label} {n}"))
        .collect();
    let unlabelled = match d.n_unlabelled {
        0 => String::new(),
        n => format!(", and {n} without a label (metrics leave them out)"),
    };
    let labels = if counts.is_empty() {
        String::new()
    } else {
        format!(" (labels: {})", counts.join(", "))
    };
    println!(
        "imported {:?}: {} {} items{labels}{unlabelled} into {}",
        d.name,
        d.n_items,
        d.task.name(),
        store.path().display()
    );
    if !d.criteria.is_empty() {
        let criteria: Vec<String> = d.criteria.iter().map(|c| c.describe()).collect();
        println!("labelled on criteria too: {}", criteria.join(", "));
    }
    Ok(ExitCode::SUCCESS)
}
