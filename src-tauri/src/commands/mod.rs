//! The commands, by screen. Each is a few lines over `engine`, `store` or `report`.

pub mod align;
pub mod datasets;
pub mod estimate;
pub mod export;
pub mod import;
pub mod judges;
pub mod labels;
pub mod load;
pub mod panels;
pub mod results;
pub mod runs;
pub mod templates;

use tauri::{Manager, State};

use judgelab_core::sweep::{Applies, Axis, Kind, Section};

use crate::dto::{AppInfo, AxisView, ComputeInfo};
use crate::state::AppState;

#[tauri::command]
#[specta::specta]
pub fn app_info(app: tauri::AppHandle, state: State<'_, AppState>) -> AppInfo {
    let model = judgelab_engine::default_model_path();
    let bundled = bundled_datasets_dir(&app)
        .and_then(|dir| std::fs::read_dir(dir).ok())
        .map(|entries| {
            let mut files: Vec<String> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
                .map(|p| p.display().to_string())
                .collect();
            files.sort();
            files
        })
        .unwrap_or_default();
    AppInfo {
        version: env!("CARGO_PKG_VERSION").to_string(),
        db_path: state.store.path().display().to_string(),
        default_model: model.is_file().then(|| model.display().to_string()),
        bundled_datasets: bundled,
        compute: compute_info(),
    }
}

fn compute_info() -> ComputeInfo {
    let compute = judgelab_engine::local_compute();
    ComputeInfo {
        summary: compute.summary(),
        cpu_kernels: compute.cpu_kernels.clone(),
        unsupported: compute.unsupported.as_ref().map(ToString::to_string),
        gpus: compute
            .devices
            .iter()
            .filter(|d| d.gpu)
            .map(|d| format!("{} {}", d.backend, d.description.trim()))
            .collect(),
    }
}

/// The sample datasets: the repository's `datasets/` folder where the app runs from a
/// checkout, else the copy an installed package holds among its resources
/// (`bundle.resources` in `tauri.conf.json`).
fn bundled_datasets_dir(app: &tauri::AppHandle) -> Option<std::path::PathBuf> {
    let checkout = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../datasets");
    if checkout.is_dir() {
        return Some(checkout);
    }
    let installed = app.path().resource_dir().ok()?.join("datasets");
    installed.is_dir().then_some(installed)
}

/// The sweep's axes, in the order trials expand, as the builder shows them.
#[tauri::command]
#[specta::specta]
pub fn sweep_axes() -> Vec<AxisView> {
    Axis::ALL
        .into_iter()
        .map(|axis| {
            let info = axis.info();
            let (kind, min, max, above_min) = match info.kind {
                Kind::Real {
                    min,
                    max,
                    above_min,
                } => ("real", Some(min), Some(max), above_min),
                Kind::Count { min, max } => {
                    ("count", Some(f64::from(min)), Some(f64::from(max)), false)
                }
                Kind::Choice => ("choice", None, None, false),
                Kind::Name => ("name", None, None, false),
            };
            AxisView {
                key: info.key.to_string(),
                section: match info.section {
                    Section::Judge => "judge",
                    Section::Sweep => "sweep",
                }
                .to_string(),
                title: info.title.to_string(),
                help: info.help.to_string(),
                default: info.default.to_string(),
                kind: kind.to_string(),
                min,
                max,
                above_min,
                choices: info.choices.iter().map(|c| c.to_string()).collect(),
                always_shown: info.always_shown,
                applies: match info.applies {
                    Applies::All => "all",
                    Applies::Pairwise => "pairwise",
                    Applies::Local => "local",
                    Applies::Remote => "remote",
                    Applies::Rubric => "rubric",
                }
                .to_string(),
            }
        })
        .collect()
}
