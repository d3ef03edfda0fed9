//! Turns the names in a validated experiment into things: the dataset (imported on the fly
//! when it is a file), templates (built-in or `.jinja` files), model files and the output
//! kind, plus the content hash that identifies the whole.

use std::path::{Path, PathBuf};

use judgelab_core::dataset::ImportOptions;
use judgelab_core::experiment::{JudgeBackend, NamedJudge, Style};
use judgelab_core::quantization::Quantization;
use judgelab_core::rubric::{self, Asked};
use judgelab_core::{Dataset, Experiment, Order, OutputKind, Task, Template, TrialParams};
use judgelab_store::{DatasetInfo, Store, TrialRow};
use serde_json::json;

use crate::{default_model_path, import_file, EngineError};

/// An experiment with everything it names resolved and validated.
pub(crate) struct Resolved {
    pub experiment: Experiment,
    pub spec: String,
    pub dataset_info: DatasetInfo,
    pub dataset: Dataset,
    /// Whether the dataset file was imported by this run.
    pub imported: bool,
    pub output: OutputKind,
    /// By template name as written in the experiment.
    pub templates: Vec<(String, Template)>,
    /// In the experiment's order, each with its model file.
    pub judges: Vec<ResolvedJudge>,
    /// Who writes the summaries of `input_strategy = "summary"` (`[summary] judge`), its
    /// model file as given; none: each trial's own judge.
    pub summariser: Option<ResolvedJudge>,
    /// The criteria its templates ask ([`judgelab_core::rubric`]); none: each item's one
    /// label.
    pub rubric: Vec<Asked>,
    /// What a checklist asks, a call each: the rubric's criteria, a criterion with yes/no
    /// items as its items ([`judgelab_core::rubric::items::calls`]).
    pub checklist: Vec<Asked>,
    pub content_hash: String,
    /// The examples of the judge card it runs, each known by
    /// [`judgelab_core::card::JudgeCard::example_id`]; empty for most.
    pub card_examples: Vec<judgelab_core::Item>,
}

/// The examples of the card `experiment` runs, by the ids its trials store them by.
fn card_examples(experiment: &Experiment) -> Vec<judgelab_core::Item> {
    experiment.card_definition().map_or_else(Vec::new, |d| {
        d.examples
            .iter()
            .map(|e| judgelab_core::Item {
                id: judgelab_core::card::JudgeCard::example_id(&e.id),
                ..e.clone()
            })
            .collect()
    })
}

/// A judge of the experiment with its model file resolved: for a local judge swept over
/// quantisations, one per level ([`crate::variants`]).
#[derive(Clone)]
pub(crate) struct ResolvedJudge {
    pub judge: NamedJudge,
    /// The local model file; empty for a remote judge.
    pub path: PathBuf,
    /// The model file's sha256; empty for a remote judge, and for a variant not made yet.
    pub sha256: String,
    /// The level of the quantisation axis this file is (`source`: as given).
    pub level: Quantization,
    /// A variant's source file and its sha256; none for a file as given.
    pub made_from: Option<(PathBuf, String)>,
}

impl ResolvedJudge {
    /// A judge with no model file of ours: remote, or (for a stored experiment) never used.
    fn remote_judge(judge: &NamedJudge) -> Self {
        ResolvedJudge {
            judge: judge.clone(),
            path: PathBuf::new(),
            sha256: String::new(),
            level: Quantization::Source,
            made_from: None,
        }
    }

    pub fn name(&self) -> &str {
        &self.judge.name
    }

    pub fn remote(&self) -> Option<&judgelab_core::experiment::RemoteJudge> {
        self.judge.remote()
    }

    pub fn local(&self) -> Option<&judgelab_core::experiment::LocalJudge> {
        self.judge.local()
    }

    /// The variants of this judge (a local one, as given) the sweep's `levels` ask for: the
    /// file itself for `source` (or no level), for each other level a path in the model
    /// cache to make it at ([`crate::variants::make`]), its sha256 still unknown.
    fn variants(self, levels: &[Option<Quantization>]) -> Vec<ResolvedJudge> {
        levels
            .iter()
            .map(|level| match level.filter(|l| *l != Quantization::Source) {
                None => ResolvedJudge {
                    level: level.unwrap_or(Quantization::Source),
                    ..self.clone()
                },
                Some(l) => ResolvedJudge {
                    path: variant_path(&self.sha256, l),
                    sha256: String::new(),
                    level: l,
                    made_from: Some((self.path.clone(), self.sha256.clone())),
                    ..self.clone()
                },
            })
            .collect()
    }
}

/// Where a variant of the file whose sha256 is `source_sha256` lives:
/// `<user cache>/judgelab/models/quantized/<sha256, 16 digits>-<type>.gguf`.
fn variant_path(source_sha256: &str, level: Quantization) -> PathBuf {
    crate::default_model_path()
        .with_file_name("quantized")
        .join(format!(
            "{}-{}.gguf",
            &source_sha256[..16.min(source_sha256.len())],
            level.name()
        ))
}

/// What a trial names, resolved once: its judge and its template.
#[derive(Clone, Copy)]
pub(crate) struct Parts<'r> {
    pub judge: &'r ResolvedJudge,
    pub template: &'r Template,
}

/// A stored trial with what it names resolved: what every step of a run takes, so that no
/// step looks a name up again.
#[derive(Clone)]
pub(crate) struct Trial<'r> {
    pub row: TrialRow,
    pub judge: &'r ResolvedJudge,
    pub template: &'r Template,
}

impl std::ops::Deref for Trial<'_> {
    type Target = TrialRow;

    fn deref(&self) -> &TrialRow {
        &self.row
    }
}

/// A path as written, relative to the experiment file's folder if it exists there, else to
/// the working directory.
pub(crate) fn locate(base: &Path, written: &str) -> Option<PathBuf> {
    let written = Path::new(written);
    [base.join(written), written.to_path_buf()]
        .into_iter()
        .find(|p| p.is_file())
}

impl Resolved {
    /// Whether a pairwise verdict may be a tie ([`Experiment::allow_tie`]).
    pub fn allow_tie(&self) -> bool {
        self.experiment.allow_tie(&self.dataset)
    }

    /// Every item a trial names by id: the dataset's, and a card's examples.
    pub fn item_index(&self) -> std::collections::HashMap<&str, &judgelab_core::Item> {
        self.dataset
            .items
            .iter()
            .chain(&self.card_examples)
            .map(|i| (i.id.as_str(), i))
            .collect()
    }

    /// What each call of a trial with `params` asks: every criterion of the rubric at once
    /// (or the item's one label), or in a checklist one criterion or yes/no item per call
    /// (an index into `checklist`).
    pub fn asked_apart(&self, params: &TrialParams) -> Vec<Option<usize>> {
        if params.style == Some(Style::Checklist) {
            (0..self.checklist.len()).map(Some).collect()
        } else {
            vec![None]
        }
    }

    /// The judge and template `params` names; an error where the experiment has no such
    /// judge or template (a stored trial of an experiment whose file changed).
    pub fn parts(&self, params: &TrialParams) -> Result<Parts<'_>, EngineError> {
        let missing = |what: &str, name: &str| EngineError::Invalid {
            path: self.experiment.name.clone(),
            message: format!("a trial names the {what} {name:?}, which the experiment has not"),
        };
        let level = params.quantization.unwrap_or(Quantization::Source);
        let judge = self
            .judges
            .iter()
            .find(|j| j.name() == params.judge && j.level == level)
            .ok_or_else(|| missing("judge", &format!("{} ({})", params.judge, level.name())))?;
        let (_, template) = self
            .templates
            .iter()
            .find(|(n, _)| *n == params.template)
            .ok_or_else(|| missing("template", &params.template))?;
        Ok(Parts { judge, template })
    }

    /// The few-shot examples a trial stores by id, as items; an error for an id the
    /// dataset has not (its file changed under a stored experiment).
    pub fn example_items(&self, ids: &[String]) -> Result<Vec<&judgelab_core::Item>, EngineError> {
        ids.iter()
            .map(|id| {
                let mut items = self.dataset.items.iter().chain(&self.card_examples);
                items
                    .find(|i| i.id == *id)
                    .ok_or_else(|| EngineError::Invalid {
                        path: self.experiment.name.clone(),
                        message: format!("few-shot example {id:?} is not in the dataset"),
                    })
            })
            .collect()
    }

    /// The stored trials, each with what it names.
    pub fn trials(&self, rows: Vec<TrialRow>) -> Result<Vec<Trial<'_>>, EngineError> {
        rows.into_iter()
            .map(|row| {
                let Parts { judge, template } = self.parts(&row.params)?;
                Ok(Trial {
                    row,
                    judge,
                    template,
                })
            })
            .collect()
    }
}

pub(crate) async fn resolve(store: &Store, path: &Path) -> Result<Resolved, EngineError> {
    let shown = path.display().to_string();
    let spec = std::fs::read_to_string(path).map_err(|source| EngineError::Io {
        path: shown.clone(),
        source,
    })?;
    let experiment = Experiment::from_toml(&shown, &spec)?;
    let base = path.parent().unwrap_or(Path::new("."));
    let invalid = |key: &str, message: String| EngineError::Invalid {
        path: format!("{shown}: {key}"),
        message,
    };
    let experiment = with_card(base, experiment, &invalid)?;

    let (dataset_info, imported) = dataset_of(store, base, &experiment, &invalid).await?;
    let dataset = store.load_dataset(&dataset_info).await?;

    if let Some(d) = experiment.card_definition() {
        if d.task != dataset.task {
            return Err(invalid(
                "judges",
                format!(
                    "the card's judge judges {} data; dataset {:?} is {}",
                    d.task.describe(),
                    dataset.name,
                    dataset.task.describe()
                ),
            ));
        }
    }
    let output = output_of(&experiment, &dataset, &invalid)?;
    let templates = templates_of(base, &experiment, &dataset, output, &invalid)?;
    let rubric = rubric_of(&experiment, &templates, &dataset, &invalid)?;
    // What ranks the trials must be a metric of this data, or a race could drop nothing
    // and the test split would go to nobody.
    let metric = experiment.selection.metric;
    if !judgelab_core::metrics::Quality::ranking(dataset.task).contains(&metric) {
        return Err(EngineError::Invalid {
            path: path.display().to_string(),
            message: format!(
                "selection.metric: {metric} is not defined for {} data (it has {})",
                dataset.task.name(),
                judgelab_core::metrics::Quality::ranking(dataset.task)
                    .iter()
                    .map(|q| q.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        });
    }

    let judges = judges_of(base, &experiment, output, &invalid)?;
    let summariser = match &experiment.summariser {
        Some(j) => Some(judge_of(base, &experiment, j, output, &invalid)?),
        None => None,
    };
    if let Some(judgelab_core::card::Model::Llama { sha256, file, .. }) =
        experiment.card_definition().map(|d| &d.model)
    {
        let j = &judges[0];
        if j.sha256 != *sha256 {
            return Err(invalid(
                &format!("judges.{}.model", j.name()),
                format!(
                    "{} is not the card's model (sha256 {}, not the card's {sha256}): give the path of the card's model file, {file} where it was tuned",
                    j.path.display(),
                    j.sha256
                ),
            ));
        }
    }
    // The identity of an experiment is what changes its verdicts (`Experiment::identity`),
    // the dataset's content, the output kind, the templates' and the model files' hashes.
    let mut identity = json!({
        "experiment": experiment.identity(),
        "dataset": &dataset.content_hash,
        "output": output,
        "templates": templates.iter().map(|(_, t)| &t.hash).collect::<Vec<_>>(),
        "models": judges.iter().map(|j| &j.sha256).collect::<Vec<_>>(),
    });
    // Written only where there is one, so that other experiments keep their identity.
    if let Some(s) = &summariser {
        identity["summariser"] = json!(s.sha256);
    }
    let content_hash = judgelab_core::hash::sha256_hex(identity.to_string());
    Ok(Resolved {
        spec,
        dataset_info,
        dataset,
        imported,
        output,
        templates,
        judges,
        summariser,
        checklist: rubric::items::calls(&rubric),
        rubric,
        content_hash,
        card_examples: card_examples(&experiment),
        experiment,
    })
}

/// The experiment with the judge card it runs read (relative to its file, or to the working
/// directory).
fn with_card(
    base: &Path,
    experiment: Experiment,
    invalid: &Invalid<'_>,
) -> Result<Experiment, EngineError> {
    let Some(card) = &experiment.card else {
        return Ok(experiment);
    };
    let written = card.path.clone();
    let file = locate(base, &written).ok_or_else(|| {
        invalid(
            "judges.card",
            format!(
                "{written:?} is not a file (looked in {} and the working directory)",
                base.display()
            ),
        )
    })?;
    let text = std::fs::read_to_string(&file).map_err(|source| EngineError::Io {
        path: file.display().to_string(),
        source,
    })?;
    let card = judgelab_core::card::JudgeCard::from_json(&file.display().to_string(), &text)
        .map_err(|message| invalid("judges.card", message))?;
    experiment
        .with_card(&card.judge)
        .map_err(|message| invalid("judges.card", message))
}

/// The error of a key of the experiment file, with a message.
type Invalid<'a> = dyn Fn(&str, String) -> EngineError + Sync + 'a;

/// The experiment's dataset: a file, imported on the fly (and whether this call imported
/// it), or the name of an imported one.
async fn dataset_of(
    store: &Store,
    base: &Path,
    experiment: &Experiment,
    invalid: &Invalid<'_>,
) -> Result<(DatasetInfo, bool), EngineError> {
    Ok(match locate(base, &experiment.dataset) {
        Some(file) => {
            let imported = import_file(store, &file, &ImportOptions::default()).await?;
            (imported.dataset, !imported.already)
        }
        None => match store.dataset_by_name(&experiment.dataset).await? {
            Some(info) => (info, false),
            None => {
                return Err(invalid(
                    "dataset",
                    format!(
                        "{:?} is neither a file (looked in {} and the working directory) nor an imported dataset",
                        experiment.dataset,
                        base.display()
                    ),
                ))
            }
        },
    })
}

/// The output kind of the verdicts, checked against the task (and answer orders against
/// a rating dataset).
fn output_of(
    experiment: &Experiment,
    dataset: &Dataset,
    invalid: &Invalid<'_>,
) -> Result<OutputKind, EngineError> {
    let output = experiment
        .judge
        .output
        .unwrap_or(OutputKind::default_for(dataset.task));
    match (dataset.task, output) {
        (Task::Pairwise, OutputKind::Digit) => {
            return Err(invalid(
                "judge.output",
                "\"digit\" needs a rating dataset; this one is pairwise".into(),
            ))
        }
        (Task::Single { .. }, OutputKind::Label) => {
            return Err(invalid(
                "judge.output",
                "\"label\" needs a pairwise dataset; this one has ratings".into(),
            ))
        }
        _ => {}
    }
    if matches!(dataset.task, Task::Single { .. }) && experiment.sweep.order != [Order::Ab] {
        return Err(invalid(
            "sweep.order",
            "swapping answers needs a pairwise dataset; this one rates single answers".into(),
        ));
    }

    Ok(output)
}

/// Each template the sweep names: built-in, or a `.jinja` file; each checked against the
/// task and the output kind.
fn templates_of(
    base: &Path,
    experiment: &Experiment,
    dataset: &Dataset,
    output: OutputKind,
    invalid: &Invalid<'_>,
) -> Result<Vec<(String, Template)>, EngineError> {
    let mut templates = Vec::new();
    for name in &experiment.sweep.templates {
        // A card's template is its text, whatever a template of that name is here.
        let carded = experiment
            .card_definition()
            .map(|d| Template::new(&d.template.name, &d.template.source));
        let template = match carded.or_else(|| Template::builtin(name)) {
            Some(t) => t,
            None => {
                let file = locate(base, name).ok_or_else(|| {
                    invalid(
                        "judge.template",
                        format!(
                            "{name:?} is neither a built-in template ({}) nor a file",
                            Template::builtin_names().collect::<Vec<_>>().join(", ")
                        ),
                    )
                })?;
                let source = std::fs::read_to_string(&file).map_err(|source| EngineError::Io {
                    path: file.display().to_string(),
                    source,
                })?;
                Template::new(&file.display().to_string(), &source)
            }
        };
        template.validate(dataset.task, output)?;
        templates.push((name.clone(), template));
    }
    Ok(templates)
}

/// The criteria the templates ask (none: each item's one label), checked against the
/// dataset's criteria; every template of a sweep asks the same ones, and a style other than
/// `rubric` needs some.
fn rubric_of(
    experiment: &Experiment,
    templates: &[(String, Template)],
    dataset: &Dataset,
    invalid: &Invalid<'_>,
) -> Result<Vec<Asked>, EngineError> {
    let mut first: Option<(&str, Vec<Asked>)> = None;
    for (name, template) in templates {
        let declared = template.criteria()?;
        let asked = rubric::ask(&declared, &dataset.criteria)
            .map_err(|m| invalid("judge.template", format!("{name:?}: {m}")))?;
        let names = |a: &[Asked]| {
            let mut names: Vec<String> = a.iter().map(|c| c.name.clone()).collect();
            names.sort();
            names
        };
        match &first {
            None => first = Some((name, asked)),
            Some((other, before)) if names(before) != names(&asked) => {
                let shown = |a: &[Asked]| match names(a).join(", ") {
                    n if n.is_empty() => "no criteria".to_string(),
                    n => n,
                };
                return Err(invalid(
                    "judge.template",
                    format!(
                        "{name:?} asks {} and {other:?} asks {}: the templates of a sweep ask the same criteria",
                        shown(&asked),
                        shown(before)
                    ),
                ));
            }
            Some(_) => {}
        }
    }
    let asked = first.map(|(_, a)| a).unwrap_or_default();
    if asked.is_empty() && experiment.sweep.style.iter().any(Option::is_some) {
        return Err(invalid(
            "sweep.style",
            "says how a rubric template's criteria are asked; the templates declare none".into(),
        ));
    }
    if asked.is_empty() {
        return Ok(asked);
    }
    // What is not built yet is refused rather than judged as one label.
    if dataset.task == Task::Pairwise {
        return Err(invalid(
            "judge.template",
            "a rubric rates criteria of rating data; this dataset is pairwise".into(),
        ));
    }
    if experiment.sweep.style.contains(&Some(Style::Checklist))
        && experiment.sweep.concurrency.iter().any(Option::is_some)
    {
        return Err(invalid(
            "sweep.concurrency",
            "times one request per verdict at a load; a checklist's verdict is a call per criterion (leave out \"concurrency\", or sweep style \"rubric\" only)".into(),
        ));
    }
    let together = experiment
        .sweep
        .style
        .iter()
        .any(|s| *s != Some(Style::Checklist));
    if let Some(j) = experiment
        .judges
        .iter()
        .find(|j| together && j.written_exact())
    {
        return Err(invalid(
            &format!("judges.{}.exact", j.name),
            "reads one value from one token; a rubric's answer has a value per criterion (sweep style \"checklist\" asks one per call, or leave out \"exact\" to read the checklist's calls exactly and generate the rubric's)".into(),
        ));
    }
    Ok(asked)
}

/// The criteria a stored experiment's templates ask, as its run resolved them.
fn stored_rubric(
    templates: &[(String, Template)],
    dataset: &Dataset,
) -> Result<Vec<Asked>, EngineError> {
    let Some((name, template)) = templates.first() else {
        return Ok(Vec::new());
    };
    rubric::ask(&template.criteria()?, &dataset.criteria).map_err(|message| EngineError::Invalid {
        path: format!("template {name}"),
        message,
    })
}

/// Each judge with its local model file and its sha256 (both empty for a remote judge,
/// whose settings are checked against the output and the environment instead), a local
/// one a file per level of the quantisation axis.
fn judges_of(
    base: &Path,
    experiment: &Experiment,
    output: OutputKind,
    invalid: &Invalid<'_>,
) -> Result<Vec<ResolvedJudge>, EngineError> {
    let mut judges = Vec::new();
    for judge in &experiment.judges {
        let given = judge_of(base, experiment, judge, output, invalid)?;
        match given.judge.backend {
            JudgeBackend::OpenAi(_) => judges.push(given),
            JudgeBackend::Llama(_) => judges.extend(given.variants(&experiment.sweep.quantization)),
        }
    }
    Ok(judges)
}

/// `judge` with its local model file as given and its sha256, or checked as a remote one.
fn judge_of(
    base: &Path,
    experiment: &Experiment,
    judge: &NamedJudge,
    output: OutputKind,
    invalid: &Invalid<'_>,
) -> Result<ResolvedJudge, EngineError> {
    // Where an error names a judge's key: `judge.` in the single form.
    let key = |k: &str| {
        if experiment.single_form {
            format!("judge.{k}")
        } else {
            format!("judges.{}.{k}", judge.name)
        }
    };
    match &judge.backend {
        JudgeBackend::OpenAi(remote) => {
            if remote.endpoint.json_schema && output != OutputKind::Json {
                return Err(invalid(
                    &key("json_schema"),
                    "constrains JSON verdicts: it needs output = \"json\"".into(),
                ));
            }
            // A remote model is a name the endpoint serves: nothing to check on disk. A
            // key that is named but missing is the user's to fix before anything is
            // called.
            if let Some(env) = &remote.endpoint.calls.api_key_env {
                if std::env::var_os(env).is_none_or(|v| v.is_empty()) {
                    return Err(invalid(
                        &key("api_key_env"),
                        format!("the environment variable {env} is not set"),
                    ));
                }
            }
            Ok(ResolvedJudge::remote_judge(judge))
        }
        JudgeBackend::Llama(local) => {
            let name = &local.model;
            let file = if name == "default" {
                default_model_path()
            } else {
                locate(base, name).unwrap_or_else(|| PathBuf::from(name))
            };
            let sha256 = crate::check_model(&file)?;
            if name == "default" && sha256 != judgelab_core::DEFAULT_MODEL_SHA256 {
                return Err(EngineError::DefaultModelChanged {
                    path: file.display().to_string(),
                    sha256,
                });
            }
            Ok(ResolvedJudge {
                judge: judge.clone(),
                path: file,
                sha256,
                level: Quantization::Source,
                made_from: None,
            })
        }
    }
}

/// The experiment's judges with the model files its trials record, a file per level of
/// the quantisation axis as they were judged with, each checked to be unchanged.
fn stored_judges(
    experiment: &Experiment,
    trials: &[TrialRow],
    invalid: &dyn Fn(String) -> EngineError,
) -> Result<Vec<ResolvedJudge>, EngineError> {
    let mut judges = Vec::new();
    for judge in &experiment.judges {
        let JudgeBackend::Llama(_) = &judge.backend else {
            judges.push(ResolvedJudge::remote_judge(judge));
            continue;
        };
        // A file per level of the quantisation axis, as its trials were judged with.
        let mut seen: Vec<Quantization> = Vec::new();
        for t in trials.iter().filter(|t| t.params.judge == judge.name) {
            let level = t.params.quantization.unwrap_or(Quantization::Source);
            if seen.contains(&level) {
                continue;
            }
            seen.push(level);
            let file = PathBuf::from(&t.model_path);
            let sha256 = crate::check_model(&file)?;
            if Some(&sha256) != t.model_sha256.as_ref() {
                return Err(invalid(format!(
                    "judge {:?}: the model file {} has changed since the experiment ran (sha256 {sha256}); run the experiment again",
                    judge.name,
                    file.display()
                )));
            }
            judges.push(ResolvedJudge {
                judge: judge.clone(),
                path: file,
                sha256,
                level,
                made_from: None,
            });
        }
        if seen.is_empty() {
            judges.push(ResolvedJudge::remote_judge(judge));
        }
    }
    Ok(judges)
}

/// A stored experiment's summariser: its model file as its file names it (a path as the
/// run was started from, or the default model), read again only where a summary it
/// needs is not stored.
pub(crate) fn stored_summariser(judge: &NamedJudge) -> ResolvedJudge {
    let JudgeBackend::Llama(local) = &judge.backend else {
        return ResolvedJudge::remote_judge(judge);
    };
    let file = match local.model.as_str() {
        "default" => default_model_path(),
        path => PathBuf::from(path),
    };
    // A file not found from here (a path relative to where the run was started) finds no
    // stored summary, and is reported where one must be written with it.
    ResolvedJudge {
        sha256: crate::check_model(&file).unwrap_or_default(),
        path: file,
        ..ResolvedJudge::remote_judge(judge)
    }
}

/// The stored experiment `row` resolved as its run resolved it: its dataset, the templates
/// and model files its trials record (each model file checked to be the one judged with),
/// and its stored identity; what judges the experiment again without its file.
pub(crate) async fn resolve_stored(
    store: &Store,
    row: &judgelab_store::ExperimentRow,
) -> Result<Resolved, EngineError> {
    let experiment = row.experiment.clone();
    let dataset_info = store
        .datasets()
        .await?
        .into_iter()
        .find(|d| d.id == row.dataset_id)
        .ok_or_else(|| EngineError::UnknownExperiment(row.name.clone()))?;
    let dataset = store.load_dataset(&dataset_info).await?;
    let output = experiment
        .judge
        .output
        .unwrap_or(OutputKind::default_for(dataset.task));
    let trials = store.trials(row.id).await?;
    let invalid = |message: String| EngineError::Invalid {
        path: row.name.clone(),
        message,
    };
    let mut templates = Vec::new();
    // The sweep's, then any other a trial names (an alignment's candidates').
    let mut names: Vec<&String> = experiment.sweep.templates.iter().collect();
    for t in &trials {
        if !names.contains(&&t.params.template) {
            names.push(&t.params.template);
        }
    }
    for name in names {
        let Some(trial) = trials.iter().find(|t| t.params.template == *name) else {
            continue;
        };
        let template = store
            .template(&trial.template_hash)
            .await?
            .ok_or_else(|| invalid(format!("template {name:?} is not stored")))?;
        templates.push((name.clone(), template));
    }
    let judges = stored_judges(&experiment, &trials, &invalid)?;
    let summariser = experiment.summariser.as_ref().map(stored_summariser);
    let rubric = stored_rubric(&templates, &dataset)?;
    Ok(Resolved {
        spec: row.spec.clone(),
        dataset_info,
        dataset,
        imported: false,
        output,
        checklist: rubric::items::calls(&rubric),
        rubric,
        templates,
        judges,
        summariser,
        content_hash: row.content_hash.clone(),
        card_examples: card_examples(&experiment),
        experiment,
    })
}
