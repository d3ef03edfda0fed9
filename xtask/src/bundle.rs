//! `cargo xtask bundle`: the app and the CLI as one Debian package, made by Tauri's bundler.
//!
//! The app is built and packed by `cargo tauri build --bundles deb` (tauri-cli, installed
//! into the user cache once); the CLI, built in the same release profile first, goes into
//! the package as `/usr/bin/judgelab` through a configuration merged on the command line
//! (`bundle.linux.deb.files`), for its path is the target directory's. Everything else
//! the package says (dependencies, desktop entry, icon, the sample datasets) is in
//! `src-tauri/tauri.conf.json`. Formats whose tools the bundler downloads while it runs
//! (AppImage's linuxdeploy, NSIS, WiX) are not made here.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

use crate::{cargo, cargo_tool, run, target_dir};

/// tauri-cli of the same minor line as the `tauri` crate the app links.
const TAURI_CLI_VERSION: &str = "2.12.4";

pub fn bundle(root: &Path) -> Result<()> {
    if !cfg!(target_os = "linux") {
        bail!(
            "`cargo xtask bundle` makes the Debian package; on macOS and Windows run `cargo tauri build` in src-tauri (README, \"Installing\")"
        );
    }
    crate::deps()?;
    let tauri = tauri_cli()?;
    crate::ui(root, false)?;
    run(cargo().args([
        "build",
        "--release",
        "--locked",
        "--package",
        "judgelab-cli",
    ]))?;
    let release = target_dir(root).join("release");
    let cli = release.join("judgelab");
    let overlay = serde_json::json!({
        "bundle": { "linux": { "deb": { "files": { "/usr/bin/judgelab": cli } } } }
    });
    let overlay_file = release.join("judgelab-bundle.json");
    std::fs::write(&overlay_file, serde_json::to_vec_pretty(&overlay)?)?;
    let _ = std::fs::remove_dir_all(release.join("bundle").join("deb"));
    run(Command::new(&tauri)
        .args(["build", "--bundles", "deb", "--ci", "--config"])
        .arg(&overlay_file)
        .current_dir(root.join("src-tauri")))?;
    let deb = deb_in(&release.join("bundle").join("deb"))?;
    let size = std::fs::metadata(&deb)?.len();
    run(Command::new("dpkg-deb").arg("--info").arg(&deb))?;
    println!(
        "{} ({:.0} MB)\ninstall it with: sudo apt-get install {}",
        deb.display(),
        size as f64 / 1e6,
        deb.display()
    );
    Ok(())
}

/// The one `.deb` the bundler left.
fn deb_in(dir: &Path) -> Result<PathBuf> {
    let debs: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("the bundler made no {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "deb"))
        .collect();
    match &debs[..] {
        [deb] => Ok(deb.clone()),
        _ => bail!(
            "expected one .deb in {}, found {}",
            dir.display(),
            debs.len()
        ),
    }
}

/// `cargo-tauri` (about ten minutes to install on two cores, once).
fn tauri_cli() -> Result<PathBuf> {
    cargo_tool("tauri-cli", TAURI_CLI_VERSION, "cargo-tauri")
}
