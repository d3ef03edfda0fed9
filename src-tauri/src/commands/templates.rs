//! Templates: the built-ins, the user's (files under `templates/` beside the database, every
//! saved version also kept in the store by content hash), and a live preview on an item.

use std::path::PathBuf;
use std::sync::Arc;

use judgelab_core::Template;
use judgelab_engine::LocalModels;
use tauri::State;

use crate::dto::{ChatMessage, Preview, PreviewRequest, TemplateInfo};
use crate::error::{AppError, AppResult};
use crate::state::AppState;

fn info(t: &Template, builtin: bool, reference: String) -> TemplateInfo {
    TemplateInfo {
        name: t.name.clone(),
        source: t.source.clone(),
        version: t.hash[..12].to_string(),
        builtin,
        reference,
    }
}

#[tauri::command]
#[specta::specta]
pub async fn list_templates(state: State<'_, AppState>) -> AppResult<Vec<TemplateInfo>> {
    let mut out: Vec<TemplateInfo> = Template::builtin_names()
        .filter_map(Template::builtin)
        .map(|t| {
            let reference = t.name.clone();
            info(&t, true, reference)
        })
        .collect();
    let mut files: Vec<PathBuf> = std::fs::read_dir(state.templates_dir())
        .map(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "jinja"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    for path in files {
        let Ok(source) = std::fs::read_to_string(&path) else {
            continue;
        };
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        out.push(info(
            &Template::new(&name, &source),
            false,
            path.display().to_string(),
        ));
    }
    Ok(out)
}

#[tauri::command]
#[specta::specta]
pub async fn save_template(
    state: State<'_, AppState>,
    name: String,
    source: String,
) -> AppResult<TemplateInfo> {
    let name = name.trim();
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(AppError::invalid(format!(
            "template name {name:?}: use letters, digits, - and _"
        )));
    }
    if Template::builtin(name).is_some() {
        return Err(AppError::invalid(format!(
            "{name:?} is a built-in template: save the copy under another name"
        )));
    }
    let template = Template::new(name, &source);
    judgelab_engine::templates::check(&template).map_err(|e| AppError::invalid(e.to_string()))?;
    let dir = state.templates_dir();
    let path = dir.join(format!("{name}.jinja"));
    std::fs::create_dir_all(&dir)
        .and_then(|()| std::fs::write(&path, &source))
        .map_err(|e| AppError::internal(format!("cannot write {}: {e}", path.display())))?;
    state.store.save_template(&template).await?;
    Ok(info(&template, false, path.display().to_string()))
}

#[tauri::command]
#[specta::specta]
pub async fn preview_template(
    state: State<'_, AppState>,
    request: PreviewRequest,
) -> AppResult<Preview> {
    let dataset = super::datasets::loaded(&state, &request.dataset).await?;
    let preview = judgelab_engine::templates::preview(
        &dataset,
        &request.source,
        request.item_idx as usize,
        request.few_shot as usize,
    )?;
    let n_tokens = match request.model {
        Some(model) => {
            let (counter, messages) = (Arc::clone(&state.tokens), preview.messages.clone());
            Some(
                tauri::async_runtime::spawn_blocking(move || {
                    counter.count(&model, &messages, &LocalModels)
                })
                .await
                .map_err(|e| AppError::internal(e.to_string()))??,
            )
        }
        None => None,
    };
    Ok(Preview {
        messages: preview
            .messages
            .into_iter()
            .map(|m| ChatMessage {
                role: m.role,
                content: m.content,
            })
            .collect(),
        n_tokens,
        item_id: preview.item.id.clone(),
        label: preview.item.human_label.category(),
    })
}
