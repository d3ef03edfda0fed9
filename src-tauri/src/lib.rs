//! The Judgelab desktop app: a thin Tauri 2 shell of typed commands over `engine`, `store` and
//! `report`. No domain logic lives here: every number the app shows is the one the CLI prints.
//!
//! Commands and their types are exported to TypeScript by tauri-specta
//! (`ui/src/lib/bindings.ts`, committed; the `bindings` test fails when it is stale). Run
//! progress streams to the UI over a typed [`tauri::ipc::Channel`].

mod commands;
pub mod dto;
mod error;
mod state;
pub mod view;

use std::path::PathBuf;
use std::time::Duration;

use tauri::Manager;
use tauri_specta::{collect_commands, Builder};

pub use error::{AppError, ErrorCode};
use state::AppState;

/// The commands the UI may call, and their TypeScript bindings.
pub fn specta_builder() -> Builder<tauri::Wry> {
    Builder::<tauri::Wry>::new()
        .commands(collect_commands![
            commands::app_info,
            commands::sweep_axes,
            commands::datasets::list_datasets,
            commands::import::import_dataset,
            commands::import::peek_dataset,
            commands::import::label_values,
            commands::import::preview_import,
            commands::datasets::dataset_detail,
            commands::datasets::dataset_items,
            commands::templates::list_templates,
            commands::templates::save_template,
            commands::templates::preview_template,
            commands::judges::list_judges,
            commands::judges::fetch_default_model,
            commands::judges::add_local_judge,
            commands::judges::add_remote_judge,
            commands::runs::plan_experiment,
            commands::runs::start_run,
            commands::runs::stop_run,
            commands::runs::list_experiments,
            commands::results::experiment_results,
            commands::panels::add_panel,
            commands::panels::remove_panel,
            commands::labels::label_queue,
            commands::labels::annotate_item,
            commands::labels::unannotate_item,
            commands::labels::export_labels,
            commands::labels::set_labels,
            commands::results::set_criterion,
            commands::results::trial_detail,
            commands::results::verdict_detail,
            commands::results::compare_trials,
            commands::load::start_load,
            commands::align::align_plan,
            commands::align::start_align,
            commands::estimate::start_estimate,
            commands::export::export_report,
            commands::export::export_judge,
            commands::export::export_chart,
        ])
        .dangerously_cast_bigints_to_number()
        .disable_serde_phases()
}

/// The sweep's axes as the UI receives them (`sweep_axes`); the bindings test also keeps
/// them as `ui/src/lib/axes.json` for the UI's unit tests.
pub fn sweep_axes() -> Vec<dto::AxisView> {
    commands::sweep_axes()
}

/// Writes the TypeScript bindings to `path`.
pub fn export_bindings(path: &std::path::Path) -> anyhow::Result<()> {
    specta_builder()
        .export(
            specta_typescript::Typescript::default()
                .header("// Generated from the Rust commands by `JUDGELAB_BLESS=1 cargo test -p judgelab-app --test it bindings`."),
            path,
        )
        .map_err(|e| anyhow::anyhow!("cannot export the TypeScript bindings: {e}"))
}

/// The database the app opens: `$JUDGELAB_DB`, else the CLI's default, so that the app and
/// `judgelab` share their experiments.
fn db_path() -> PathBuf {
    std::env::var_os("JUDGELAB_DB")
        .map(PathBuf::from)
        .unwrap_or_else(judgelab_engine::default_db_path)
}

pub fn run() {
    let builder = specta_builder();
    let result = tauri::Builder::default()
        .plugin(tauri_plugin_dialog::init())
        .invoke_handler(builder.invoke_handler())
        .setup(move |app| {
            builder.mount_events(app);
            let db = db_path();
            let store = tauri::async_runtime::block_on(judgelab_store::Store::open(&db))
                .map_err(|e| anyhow::anyhow!("cannot open the database {}: {e}", db.display()))?;
            let home = db
                .parent()
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from("."));
            app.manage(AppState {
                store,
                home,
                runs: Default::default(),
                opened: Default::default(),
                summary: Default::default(),
                datasets: Default::default(),
                labels: Default::default(),
                criteria: Default::default(),
                tokens: Default::default(),
            });
            Ok(())
        })
        .on_window_event(|window, event| {
            // Closing the window mid-run loses nothing: every verdict is already stored, and
            // the call in flight gets a few seconds to be recorded too.
            if let tauri::WindowEvent::CloseRequested { .. } = event {
                if let Some(state) = window.try_state::<AppState>() {
                    state.stop_all(Duration::from_secs(10));
                }
            }
        })
        .run(tauri::generate_context!());
    if let Err(e) = result {
        eprintln!("error: the app failed: {e}");
        std::process::exit(1);
    }
}
