//! `judgelab list`: the datasets imported (their items, labels, criteria and mapping) and
//! the experiments stored.

use std::process::ExitCode;

use anyhow::Result;
use judgelab_core::dataset::mapping::Mapping;
use judgelab_store::Store;

pub async fn command(store: &Store) -> Result<ExitCode> {
    println!("datasets in {}:", store.path().display());
    for d in store.datasets().await? {
        let unlabelled = match d.n_unlabelled {
            0 => String::new(),
            n => format!(" (and {n} without a label)"),
        };
        println!(
            "  {:<24} {:>6} {:<8} items{unlabelled}  {}",
            d.name,
            d.n_items,
            d.task.name(),
            d.source
        );
        if !d.criteria.is_empty() {
            let criteria: Vec<String> = d.criteria.iter().map(|c| c.describe()).collect();
            println!("    labelled on criteria: {}", criteria.join(", "));
        }
        if let Some(Ok(m)) = d.mapping.as_deref().map(Mapping::from_toml) {
            println!("    read through the mapping {m}");
        }
    }
    println!("experiments:");
    for e in store.experiments().await? {
        let n = store.count_verdicts(e.id).await?;
        println!(
            "  {:<24} {:>6} verdicts  created {}",
            e.name, n, e.created_at
        );
    }
    Ok(ExitCode::SUCCESS)
}
