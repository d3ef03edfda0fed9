//! Templates: the built-ins, the user's (files under `templates/` beside the database, every
//! saved version also kept in the store by content hash), and a live preview on an item.

use std::path::PathBuf;
use std::sync::Arc;

use judgelab_core::template::RenderContext;
use judgelab_core::{Item, Judge, OutputKind, Task, Template};
use judgelab_llama::{LlamaJudge, LlamaOptions};
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

/// Checks a template against the task it is written for (the one it validates for).
fn validate(t: &Template) -> AppResult<()> {
    let pairwise = t.validate(Task::Pairwise, OutputKind::Label);
    let single = t.validate(
        Task::Single {
            scale_min: 1,
            scale_max: 5,
        },
        OutputKind::Digit,
    );
    match (pairwise, single) {
        (Ok(()), _) | (_, Ok(())) => Ok(()),
        (Err(e), Err(other)) => {
            // Report the error of the task the template seems to be written for.
            let e = if t.source.contains("answer_a") {
                e
            } else {
                other
            };
            Err(AppError::invalid(e.to_string()))
        }
    }
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
    validate(&template)?;
    let dir = state.templates_dir();
    let path = dir.join(format!("{name}.jinja"));
    std::fs::create_dir_all(&dir)
        .and_then(|()| std::fs::write(&path, &source))
        .map_err(|e| AppError::internal(format!("cannot write {}: {e}", path.display())))?;
    state.store.save_template(&template).await?;
    Ok(info(&template, false, path.display().to_string()))
}

/// A loaded model kept for counting tokens, by path.
static TOKENIZER: std::sync::Mutex<Option<(PathBuf, Arc<LlamaJudge>)>> =
    std::sync::Mutex::new(None);

fn count_tokens(model: &str, messages: &[judgelab_core::Message]) -> AppResult<u32> {
    let path = if model == "default" {
        judgelab_engine::default_model_path()
    } else {
        PathBuf::from(model)
    };
    let mut slot = TOKENIZER.lock().expect("tokenizer lock");
    let judge = match slot.as_ref() {
        Some((p, j)) if *p == path => Arc::clone(j),
        _ => {
            let judge = Arc::new(
                LlamaJudge::load(LlamaOptions {
                    name: model.to_string(),
                    path: path.clone(),
                    gpu_layers: Some(0),
                    context_size: 512,
                    threads: Some(1),
                    sha256: None,
                    parallel: 1,
                    share_prefix: false,
                })
                .map_err(|e| AppError::from(judgelab_engine::EngineError::from(e)))?,
            );
            *slot = Some((path, Arc::clone(&judge)));
            judge
        }
    };
    judge
        .count_tokens(messages)
        .map(|n| n as u32)
        .map_err(AppError::internal)
}

#[tauri::command]
#[specta::specta]
pub async fn preview_template(
    state: State<'_, AppState>,
    request: PreviewRequest,
) -> AppResult<Preview> {
    let dataset = super::datasets::loaded(&state, &request.dataset).await?;
    let n = dataset.items.len();
    if n == 0 {
        return Err(AppError::invalid("the dataset has no items"));
    }
    let idx = (request.item_idx as usize).min(n - 1);
    let item = &dataset.items[idx];
    // A preview shows examples from the other items; a run draws them from its seeded pool.
    let examples: Vec<&Item> = dataset
        .items
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != idx)
        .take(request.few_shot as usize)
        .map(|(_, e)| e)
        .collect();
    let template = Template::new("preview", &request.source);
    let output = OutputKind::default_for(dataset.task);
    template
        .validate(dataset.task, output)
        .map_err(|e| AppError::invalid(e.to_string()))?;
    let allow_tie = judgelab_engine::allow_tie(&dataset);
    let ctx = RenderContext::new(dataset.task, output, allow_tie, item, &examples);
    let messages = template
        .render(&ctx)
        .map_err(|e| AppError::invalid(e.to_string()))?;
    let n_tokens = match request.model.as_deref() {
        Some(model) => {
            let (model, messages) = (model.to_string(), messages.clone());
            Some(
                tauri::async_runtime::spawn_blocking(move || count_tokens(&model, &messages))
                    .await
                    .map_err(|e| AppError::internal(e.to_string()))??,
            )
        }
        None => None,
    };
    Ok(Preview {
        messages: messages
            .into_iter()
            .map(|m| ChatMessage {
                role: m.role,
                content: m.content,
            })
            .collect(),
        n_tokens,
        item_id: item.id.clone(),
        label: item.human_label.category(),
    })
}
