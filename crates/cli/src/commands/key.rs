//! `judgelab key`: an API key stored in or deleted from the OS keychain, for
//! `api_key_keyring = "NAME"`. Keychain calls block (and may talk D-Bus), so they run off
//! the async threads.

use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Subcommand;
use judgelab_engine::EngineError;

#[derive(Subcommand)]
pub enum KeyAction {
    /// Read a key from standard input (e.g. `printenv OPENAI_API_KEY | judgelab key set openai`)
    /// and store it as NAME
    Set { name: String },
    /// Delete the key stored as NAME
    Delete { name: String },
}

pub async fn command(action: KeyAction) -> Result<ExitCode> {
    match action {
        KeyAction::Set { name } => set(name).await?,
        KeyAction::Delete { name } => {
            let shown = name.clone();
            let deleted = tokio::task::spawn_blocking(move || judgelab_engine::keys::delete(&name))
                .await
                .context("while deleting the key")??;
            if deleted {
                eprintln!("deleted key {shown:?} from the OS keychain");
            } else {
                eprintln!("no key named {shown:?} in the OS keychain: nothing to delete");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Reads the key from standard input and stores it as `name`.
async fn set(name: String) -> Result<()> {
    if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        eprintln!("paste the key and press Enter (or pipe it in; it is not stored anywhere else)");
    }
    let mut line = String::new();
    std::io::stdin()
        .read_line(&mut line)
        .context("while reading the key from standard input")?;
    let secret = line.trim().to_string();
    if secret.is_empty() {
        anyhow::bail!(EngineError::Invalid {
            path: "standard input".into(),
            message: "no key was given".into(),
        });
    }
    let shown = name.clone();
    tokio::task::spawn_blocking(move || judgelab_engine::keys::store(&name, &secret))
        .await
        .context("while storing the key")??;
    eprintln!("stored key {shown:?} in the OS keychain; use api_key_keyring = {shown:?}");
    Ok(())
}
