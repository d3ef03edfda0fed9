//! Experiments: a TOML file parsed into a raw form, then validated into an [`Experiment`]
//! before any model is loaded. Its sweep expands into trials: every combination of the
//! grid's values is one trial.

use serde::{Deserialize, Serialize};

use crate::quantization::Quantization;
use crate::sweep::{Axis, Kind};
use crate::verdict::OutputKind;

mod judges;
mod limits;
mod panels;
mod reference;
mod robustness;
mod summary;
mod trust;
pub use panels::{PanelSpec, Rule as PanelRule, Ties};
pub use reference::Reference;
pub use trust::Trust;

pub use crate::sweep::{Constraint, Order, Shortening, Style, Sweep, TrialParams};
pub use judges::{reproducible_spec, JudgeBackend, LocalJudge, NamedJudge, RemoteJudge};
pub use limits::{Budget, Limits, Selection, Strategy};
use limits::{RawLimits, RawSelection};

/// How a trial's verdicts reproduce (`llama`'s `decode.rs` says why).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reproduces {
    /// A local judge's seeded samples (a generation at a temperature above 0), and every
    /// call of a `reproducible` judge, each decoded alone: bit for bit, whatever the batch,
    /// the `parallel` or the resume.
    BitForBit,
    /// A local judge's greedy generations and exact passes, decoded in batches: their
    /// logits move by up to a few hundredths with the batch, so a near-tie between two
    /// tokens (or a seeded draw that close to a boundary) may read otherwise.
    UpToNearTies,
    /// A remote judge's: as its server decodes them.
    AsItsServer,
}

/// A validated experiment.
#[derive(Debug, Clone, PartialEq)]
pub struct Experiment {
    pub name: String,
    /// A dataset file (imported on the fly) or the name of an imported dataset.
    pub dataset: String,
    /// The judges the `judge` axis sweeps, in its order.
    pub judges: Vec<NamedJudge>,
    /// What every judge shares.
    pub judge: JudgeSpec,
    pub sweep: Sweep,
    pub limits: Limits,
    /// How trials are chosen among (`[selection]`).
    pub selection: Selection,
    /// What selective judging is asked for (`[trust]`), outside the identity.
    pub trust: trust::Trust,
    /// Panels of its trials (`[[panels]]`), outside the identity: they make no call.
    pub panels: Vec<PanelSpec>,
    /// The trial each trial's verdicts are held against (`[reference]`), outside the
    /// identity.
    pub reference: Reference,
    /// Templates that are paraphrases of one another (`[robustness] paraphrases`), outside
    /// the identity; empty: none declared.
    pub paraphrases: Vec<String>,
    /// Written with one `[judge]` table, as experiments were before named judges: its
    /// identity is hashed as it was then.
    pub single_form: bool,
    /// The judge card its one judge runs (`[[judges]] card = …`); none for most.
    pub card: Option<CardUse>,
    /// Who writes the summaries of `input_strategy = "summary"` (`[summary] judge`), a
    /// judge it declares, swept or not; none: each trial's own judge.
    pub summariser: Option<NamedJudge>,
}

/// A judge card an experiment runs: the file as written and, once read
/// ([`Experiment::with_card`]), what it defines.
#[derive(Debug, Clone, PartialEq)]
pub struct CardUse {
    pub path: String,
    pub definition: Option<crate::card::Definition>,
}

/// What every judge of an experiment shares (its templates are an axis: `sweep.templates`).
#[derive(Debug, Clone, PartialEq)]
pub struct JudgeSpec {
    /// Default: a label for pairwise data, a digit for ratings.
    pub output: Option<OutputKind>,
    /// How many requests the engine hands a judge at once. Speed only.
    pub batch_size: usize,
}

/// An OpenAI-compatible endpoint and how to call it. Only `base_url`, `top_logprobs` and
/// `json_schema` change what the judge answers; the rest is speed, money and secrets, left
/// out of the experiment's identity.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RemoteSpec {
    /// Up to `/v1`, e.g. `https://api.openai.com/v1`.
    pub base_url: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_logprobs: Option<u32>,
    /// With `output = "json"`, ask for `response_format: json_schema`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub json_schema: bool,
    /// Stop sequences sent with every call.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stop: Vec<String>,
    #[serde(skip)]
    pub calls: RemoteCalls,
}

/// How calls to an endpoint are made; none of it changes a verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct RemoteCalls {
    /// The environment variable that holds the API key; none for local servers.
    pub api_key_env: Option<String>,
    /// Or the name of a key in the OS keychain (`judgelab key set NAME`).
    pub api_key_keyring: Option<String>,
    /// Further endpoints serving the same model as `base_url` (`base_url = [...]`): calls
    /// go to the least-loaded healthy one. Outside the identity, so that a pool can grow,
    /// shrink or lose a server and the experiment still resumes.
    pub pool: Vec<String>,
    pub stream: bool,
    pub concurrency: usize,
    pub requests_per_minute: Option<u32>,
    pub tokens_per_minute: Option<u32>,
    pub timeout_s: f64,
    pub max_attempts: u32,
}

impl Default for RemoteCalls {
    fn default() -> Self {
        RemoteCalls {
            api_key_env: None,
            api_key_keyring: None,
            pool: Vec::new(),
            stream: true,
            concurrency: 4,
            requests_per_minute: None,
            tokens_per_minute: None,
            timeout_s: 60.0,
            max_attempts: 5,
        }
    }
}

/// Dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub input: f64,
    pub output: f64,
}

impl Price {
    pub fn cost(&self, prompt_tokens: u32, completion_tokens: u32) -> f64 {
        (f64::from(prompt_tokens) * self.input + f64::from(completion_tokens) * self.output) / 1e6
    }
}

/// The order in which a pairwise item's answers are shown to the judge.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExperimentError {
    #[error("{path}: {message}")]
    Parse { path: String, message: String },
    #[error("{path}: {key}: {message}")]
    Invalid {
        path: String,
        key: String,
        message: String,
    },
}

#[derive(Deserialize, Clone)]
#[serde(untagged)]
enum OneOrMany<T> {
    One(T),
    Many(Vec<T>),
}

impl<T> OneOrMany<T> {
    fn into_vec(self) -> Vec<T> {
        match self {
            OneOrMany::One(x) => vec![x],
            OneOrMany::Many(xs) => xs,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawExperiment {
    name: String,
    dataset: String,
    #[serde(default)]
    judge: judges::RawJudge,
    judges: Option<Vec<judges::RawJudge>>,
    #[serde(default)]
    sweep: RawSweep,
    #[serde(default)]
    limits: RawLimits,
    #[serde(default)]
    selection: RawSelection,
    #[serde(default)]
    trust: trust::RawTrust,
    #[serde(default)]
    panels: Vec<panels::RawPanel>,
    reference: Option<toml::Table>,
    #[serde(default)]
    robustness: robustness::RawRobustness,
    summary: Option<summary::RawSummary>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawSweep {
    judge: Option<OneOrMany<String>>,
    temperature: Option<OneOrMany<f64>>,
    top_p: Option<OneOrMany<f64>>,
    max_tokens: Option<OneOrMany<i64>>,
    few_shot: Option<OneOrMany<i64>>,
    few_shot_max_tokens: Option<OneOrMany<i64>>,
    few_shot_set: Option<OneOrMany<i64>>,
    order: Option<OneOrMany<String>>,
    constraint: Option<OneOrMany<String>>,
    concurrency: Option<OneOrMany<i64>>,
    style: Option<OneOrMany<String>>,
    quantization: Option<OneOrMany<String>>,
    input_max_tokens: Option<OneOrMany<InputLevel>>,
    input_strategy: Option<OneOrMany<String>>,
    repeats: Option<i64>,
    seed: Option<i64>,
    sample: Option<i64>,
}

/// A level of `input_max_tokens` as written: a number of tokens, or `"none"` (the inputs
/// whole), so that one sweep compares the whole inputs with cut ones.
#[derive(Deserialize)]
#[serde(untagged)]
enum InputLevel {
    Tokens(i64),
    Word(String),
}

impl Experiment {
    /// Parses and validates the TOML `text` of the file at `path` (named in errors), in
    /// steps: the raw form, the judges, what they share, the sweep, whether the judges can
    /// do what the sweep asks, the limits.
    pub fn from_toml(path: &str, text: &str) -> Result<Experiment, ExperimentError> {
        let raw: RawExperiment = toml::from_str(text).map_err(|e| ExperimentError::Parse {
            path: path.to_string(),
            message: e.to_string().trim_end().to_string(),
        })?;
        let invalid = |key: &str, message: String| ExperimentError::Invalid {
            path: path.to_string(),
            key: key.to_string(),
            message,
        };

        let name = checked_name("name", &raw.name, "._-", &invalid)?;
        if raw.dataset.trim().is_empty() {
            return Err(invalid("dataset", "is empty".into()));
        }
        let single_form = raw.judges.is_none();
        let mut card = None;
        let declared = match &raw.judges {
            None => judges::single_form(&raw.judge, &invalid)?,
            Some(list) if list.iter().any(|j| j.card.is_some()) => {
                let (judge, path) = judges::card_form(list, &raw.judge, &invalid)?;
                card_fixes(&raw.sweep, &invalid)?;
                card = Some(CardUse {
                    path,
                    definition: None,
                });
                vec![judge]
            }
            Some(list) => judges::named_form(list, &raw.judge, &invalid)?,
        };
        let (templates, judge) = shared_judge(&raw.judge, card.is_some(), &invalid)?;
        let judges = swept_judges(
            declared.clone(),
            raw.sweep.judge.clone(),
            single_form,
            &invalid,
        )?;
        let names = judges.iter().map(|j| j.name.clone()).collect();
        let sweep = sweep(raw.sweep, names, templates, &invalid)?;
        let summariser = summary::summariser(raw.summary, &declared, &sweep, &invalid)?;
        check_judges_can(&judges, &sweep, &judge, single_form, &invalid)?;
        let limits = limits::limits(raw.limits, &invalid)?;
        let selection = limits::selection(raw.selection, &invalid)?;
        let trust = trust::trust(raw.trust, &invalid)?;
        let paraphrases = robustness::paraphrases(raw.robustness, &sweep.templates, &invalid)?;
        let panels = panels::panels(raw.panels, &invalid)?;
        check_pool(&limits, &sweep, &selection, &invalid)?;
        let mut experiment = Experiment {
            name,
            dataset: raw.dataset,
            judges,
            judge,
            single_form,
            sweep,
            limits,
            selection,
            trust,
            panels,
            reference: Reference::default(),
            paraphrases,
            card,
            summariser,
        };
        experiment.reference = reference::reference(raw.reference, &experiment, &invalid)?;
        Ok(experiment)
    }

    /// Every point of the grid, in a stable order: the product over the sweep's axes
    /// (`crate::sweep::Axis::ALL`: model, template, few-shot count, few-shot length,
    /// max_tokens, temperature, top_p, order, constraint, concurrency; the last varies fastest).
    /// Its trials, each marked exact where [`Experiment::exact_where_valid`] says so.
    pub fn trials(&self) -> Vec<TrialParams> {
        let mut trials = self.sweep.trials();
        for t in &mut trials {
            t.exact = self.exact_where_valid(t);
        }
        trials
    }

    /// Whether a trial's verdicts are read from the exact distribution of its first output
    /// token: one forward pass per prompt serves every temperature and top_p, and its
    /// seeded samples are drawn from that distribution, equal in law to llama.cpp's
    /// sampler. As its judge's `exact` says where the file writes it; otherwise as the
    /// trial was created (`TrialParams::exact`): trials stored before exact verdicts were
    /// the default generate as they did.
    pub fn exact(&self, params: &TrialParams) -> bool {
        match self.judge_named(&params.judge) {
            Some(judge) => judge.exact_as_written().unwrap_or(params.exact),
            None => false,
        }
    }

    /// How the trial's verdicts reproduce when it is judged again, resumed, or decoded
    /// beside other requests.
    pub fn reproduces(&self, params: &TrialParams) -> Reproduces {
        match self.judge_named(&params.judge).and_then(NamedJudge::local) {
            None => Reproduces::AsItsServer,
            Some(local) if local.reproducible => Reproduces::BitForBit,
            Some(_) if !self.exact(params) && params.temperature > 0.0 => Reproduces::BitForBit,
            Some(_) => Reproduces::UpToNearTies,
        }
    }

    /// Whether a new trial is exact: as its judge's `exact` says, or unwritten, where the
    /// verdict is one token a judge can read from one pass (`max_tokens = 1`, a label or a
    /// digit, with or without the grammar). A remote judge's server must also return
    /// log-probabilities, which the run asks it before it creates the trials, and a trial
    /// that measures latency at a load (`sweep.concurrency`) generates.
    pub fn exact_where_valid(&self, params: &TrialParams) -> bool {
        match self.judge_named(&params.judge) {
            // A load's latency is measured by calls made at that load, one per cell.
            Some(judge) if judge.remote().is_some() && params.concurrency.is_some() => false,
            Some(judge) => judge
                .exact_as_written()
                .unwrap_or(params.max_tokens == 1 && self.judge.output != Some(OutputKind::Json)),
            None => false,
        }
    }

    /// What of the experiment changes its verdicts, as hashed into its identity. Settings
    /// that only change speed (batch size, GPU offload, parallel sequences, an endpoint's
    /// limits and keys) and the path the dataset was reached by are left out, so that a run
    /// interrupted on one machine resumes on another.
    pub fn identity(&self) -> serde_json::Value {
        let mut v = serde_json::json!({
            "name": self.name,
            "dataset": "",
            "sweep": self.sweep,
            "limits": self.limits,
        });
        if !self.selection.is_default() {
            v["selection"] = serde_json::to_value(self.selection).expect("selection serialises");
        }
        if let Some(summariser) = &self.summariser {
            v["summary"] =
                serde_json::json!({ "judge": judges::identity(std::slice::from_ref(summariser)) });
        }
        if let Some(card) = &self.card {
            v["card"] = card.definition.as_ref().map(|d| d.identity()).into();
        }
        if self.single_form {
            let judge = judges::SingleFormJudge::new(
                &self.judges,
                &self.sweep.templates,
                self.judge.output,
            );
            v["judge"] = serde_json::to_value(judge).expect("judges serialise");
        } else {
            v["judges"] = judges::identity(&self.judges);
            v["judge"] = serde_json::json!({
                "templates": self.sweep.templates,
                "output": self.judge.output,
            });
        }
        v
    }

    /// The experiment with its card read: one trial, of the card's template, parameters
    /// and examples (shown from the card: no few-shot pool is taken from the data), on the
    /// card's context and output.
    pub fn with_card(mut self, definition: &crate::card::Definition) -> Result<Experiment, String> {
        let Some(card) = self.card.as_mut() else {
            return Err(format!("experiment {:?} runs no judge card", self.name));
        };
        let p = &definition.params;
        let (context, reproducible) = match &definition.model {
            crate::card::Model::Llama {
                context_size,
                reproducible,
                ..
            } => (*context_size, *reproducible),
            crate::card::Model::Openai { .. } => {
                return Err(format!(
                    "{}: a card of a remote judge is not built yet: cards run local judges",
                    card.path
                ))
            }
        };
        card.definition = Some(definition.clone());
        let s = &mut self.sweep;
        s.templates = vec![definition.template.name.clone()];
        s.temperature = vec![p.temperature];
        s.top_p = vec![p.top_p];
        s.max_tokens = vec![p.max_tokens];
        s.few_shot = vec![definition.examples.len() as u32];
        s.few_shot_max_tokens = vec![p.few_shot_max_tokens];
        s.few_shot_set = vec![0];
        s.order = vec![p.order];
        s.constraint = vec![p.constraint];
        s.concurrency = vec![None];
        s.style = vec![p.style];
        s.quantization = vec![None];
        s.input_max_tokens = vec![p.input_max_tokens];
        s.input_strategy = vec![p.input_strategy];
        self.judge.output = Some(definition.output);
        if let Some(JudgeBackend::Llama(local)) = self.judges.first_mut().map(|j| &mut j.backend) {
            local.context_size = context;
            local.exact = Some(p.exact);
            local.reproducible |= reproducible;
        }
        self.limits.pool = Some(0);
        Ok(self)
    }

    /// Whether its judges' pairwise verdicts on `dataset` may be a tie (their prompt and
    /// grammar say so): as where a card's judge was tuned, else where the humans used ties.
    pub fn allow_tie(&self, dataset: &crate::Dataset) -> bool {
        match self.card_definition() {
            Some(d) => d.allow_tie,
            None => dataset.allows_tie(),
        }
    }

    /// What the card it runs defines, once read.
    pub fn card_definition(&self) -> Option<&crate::card::Definition> {
        self.card.as_ref().and_then(|c| c.definition.as_ref())
    }

    /// The judge named `name`.
    pub fn judge_named(&self, name: &str) -> Option<&NamedJudge> {
        self.judges.iter().find(|j| j.name == name)
    }

    /// How many items it judges, and in which order (see [`crate::split::Sizes`]).
    pub fn sizes(&self) -> crate::split::Sizes {
        crate::split::Sizes {
            items: self.limits.items,
            dev: self.limits.dev,
            test: self.limits.test,
            stratified: self.limits.dev.is_some()
                || self.limits.test.is_some()
                || self.selection.is_race(),
        }
    }

    /// The most few-shot examples any trial needs.
    pub fn max_few_shot(&self) -> usize {
        self.sweep.few_shot.iter().copied().max().unwrap_or(0) as usize
    }

    /// The size of the reserved few-shot pool: `limits.pool`, or as many as the most
    /// examples a trial shows.
    pub fn pool_size(&self) -> usize {
        self.limits.pool.unwrap_or_else(|| self.max_few_shot())
    }
}

type Invalid<'a> = dyn Fn(&str, String) -> ExperimentError + 'a;

/// What every judge shares: the templates (an axis of the sweep), the output kind and the
/// batch size.
fn shared_judge(
    raw: &judges::RawJudge,
    card: bool,
    invalid: &Invalid<'_>,
) -> Result<(Vec<String>, JudgeSpec), ExperimentError> {
    let templates = match raw.template.clone() {
        Some(t) => non_empty_unique("judge.template", t.into_vec(), invalid)?,
        // The card's, once it is read.
        None if card => vec!["card".to_string()],
        None => {
            return Err(invalid(
                "judge.template",
                "is required: a built-in template name or a .jinja file".into(),
            ))
        }
    };
    let output = raw
        .output
        .as_ref()
        .map(|o| {
            o.parse::<OutputKind>().map_err(|_| {
                invalid(
                    "judge.output",
                    format!(
                        "{o:?} is not an output kind (expected \"label\", \"digit\" or \"json\")"
                    ),
                )
            })
        })
        .transpose()?;
    let batch_size = raw.batch_size.unwrap_or(8);
    if !(1..=256).contains(&batch_size) {
        return Err(invalid(
            "judge.batch_size",
            format!("{batch_size} must be between 1 and 256"),
        ));
    }
    Ok((templates, JudgeSpec { output, batch_size }))
}

/// A card experiment's sweep: only its repeats, seed and sample; the card fixes each axis.
/// Checks that the few-shot pool holds what the sweep shows and draws, and that a test
/// split is set where the selection confirms on one.
fn check_pool(
    limits: &Limits,
    sweep: &Sweep,
    selection: &Selection,
    invalid: &Invalid<'_>,
) -> Result<(), ExperimentError> {
    let max_few_shot = sweep.few_shot.iter().copied().max().unwrap_or(0) as usize;
    match limits.pool {
        Some(pool) if pool < max_few_shot => {
            return Err(invalid(
                "limits.pool",
                format!("{pool} holds fewer examples than few_shot = {max_few_shot} shows"),
            ))
        }
        None if sweep.few_shot_set.iter().any(|&s| s != 0) && max_few_shot > 0 => {
            return Err(invalid(
                "sweep.few_shot_set",
                format!(
                    "draws examples from the few-shot pool, which holds only the {max_few_shot} that few_shot shows: set limits.pool larger (for example {})",
                    4 * max_few_shot
                ),
            ))
        }
        _ if sweep.few_shot_set.iter().any(|&s| s != 0) && max_few_shot == 0 => {
            return Err(invalid(
                "sweep.few_shot_set",
                "chooses which few-shot examples a trial shows, but few_shot shows none"
                    .into(),
            ))
        }
        _ => {}
    }
    if selection.confirm.is_some() && limits.test.is_none() {
        return Err(invalid(
            "selection.confirm",
            "chooses who judges the test split: set limits.test too".into(),
        ));
    }
    Ok(())
}

fn card_fixes(s: &RawSweep, invalid: &Invalid<'_>) -> Result<(), ExperimentError> {
    let axes = [
        ("judge", s.judge.is_some()),
        ("temperature", s.temperature.is_some()),
        ("top_p", s.top_p.is_some()),
        ("max_tokens", s.max_tokens.is_some()),
        ("few_shot", s.few_shot.is_some()),
        ("few_shot_max_tokens", s.few_shot_max_tokens.is_some()),
        ("few_shot_set", s.few_shot_set.is_some()),
        ("order", s.order.is_some()),
        ("constraint", s.constraint.is_some()),
        ("concurrency", s.concurrency.is_some()),
        ("style", s.style.is_some()),
        ("quantization", s.quantization.is_some()),
        ("input_max_tokens", s.input_max_tokens.is_some()),
        ("input_strategy", s.input_strategy.is_some()),
    ];
    match axes.iter().find(|(_, given)| *given) {
        Some((k, _)) => Err(invalid(
            &format!("sweep.{k}"),
            "the judge card fixes it (an experiment that runs a card sets only repeats, seed and sample)".into(),
        )),
        None => Ok(()),
    }
}

/// The sweep's axes, each checked against its registry entry, with the judges and
/// templates it ranges over, its repeats and its seed.
fn sweep(
    s: RawSweep,
    judges: Vec<String>,
    templates: Vec<String>,
    invalid: &Invalid<'_>,
) -> Result<Sweep, ExperimentError> {
    let temperature = reals(Axis::Temperature, s.temperature, invalid)?;
    let top_p = reals(Axis::TopP, s.top_p, invalid)?;
    let max_tokens = counts(Axis::MaxTokens, s.max_tokens, invalid)?;
    let few_shot = counts(Axis::FewShot, s.few_shot, invalid)?;
    // No limit unless some are given.
    let few_shot_max_tokens = match s.few_shot_max_tokens {
        None => vec![None],
        values => counts(Axis::FewShotMaxTokens, values, invalid)?
            .into_iter()
            .map(Some)
            .collect(),
    };
    let few_shot_set = counts(Axis::FewShotSet, s.few_shot_set, invalid)?;
    let order = named::<Order>(Axis::Order, s.order, "an answer order", invalid)?;
    let constraint = named::<Constraint>(
        Axis::Constraint,
        s.constraint,
        "an output constraint",
        invalid,
    )?;
    // The judge's own concurrency unless some levels are given.
    let concurrency = match s.concurrency {
        None => vec![None],
        values => counts(Axis::Concurrency, values, invalid)?
            .into_iter()
            .map(Some)
            .collect(),
    };
    // Unset unless some styles are given: a rubric template then asks all its criteria in
    // one call.
    let style = match s.style {
        None => vec![None],
        values => named::<Style>(Axis::Style, values, "a rubric style", invalid)?
            .into_iter()
            .map(Some)
            .collect(),
    };
    // The model files as they are unless some levels are given.
    let quantization = match s.quantization {
        None => vec![None],
        values => named::<Quantization>(
            Axis::Quantization,
            values,
            "a quantisation llama.cpp makes",
            invalid,
        )?
        .into_iter()
        .map(Some)
        .collect(),
    };
    let input_max_tokens = budgets(s.input_max_tokens, invalid)?;
    let input_strategy = named::<Shortening>(
        Axis::InputStrategy,
        s.input_strategy,
        "a way of shortening inputs",
        invalid,
    )?;
    let repeats = ints(
        "sweep.repeats",
        vec![s.repeats.unwrap_or(1)],
        1,
        10_000,
        invalid,
    )?[0];
    let seed = s.seed.unwrap_or(0);
    if seed < 0 {
        return Err(invalid(
            "sweep.seed",
            format!("{seed} must not be negative"),
        ));
    }
    let sample = match s.sample {
        None => None,
        Some(n) if n >= 1 => Some(n as usize),
        Some(n) => {
            return Err(invalid(
                "sweep.sample",
                format!("{n} must be at least 1 (trials drawn from the grid)"),
            ))
        }
    };
    Ok(Sweep {
        judges,
        templates,
        temperature,
        top_p,
        max_tokens,
        few_shot,
        few_shot_max_tokens,
        few_shot_set,
        order,
        constraint,
        concurrency,
        style,
        quantization,
        input_max_tokens,
        input_strategy,
        repeats,
        seed: seed as u64,
        sample,
    })
}

/// Refuses a sweep its judges cannot run: a grammar on a remote endpoint, requests in
/// flight of a local judge, exact verdicts of JSON output.
fn check_judges_can(
    judges: &[NamedJudge],
    sweep: &Sweep,
    judge: &JudgeSpec,
    single_form: bool,
    invalid: &Invalid<'_>,
) -> Result<(), ExperimentError> {
    let exact_key = |j: &NamedJudge| match single_form {
        true => "judge.exact".to_string(),
        false => format!("judges.{}.exact", j.name),
    };
    if sweep.constraint.contains(&Constraint::Grammar) {
        if let Some(j) = judges.iter().find(|j| j.remote().is_some()) {
            let why = if single_form {
                "\"grammar\" needs backend = \"llama\" (remote endpoints constrain JSON with json_schema)".to_string()
            } else {
                format!("\"grammar\" needs local judges; {:?} is remote (remote endpoints constrain JSON with json_schema)", j.name)
            };
            return Err(invalid("sweep.constraint", why));
        }
    }
    if sweep.concurrency.iter().any(Option::is_some) {
        if let Some(j) = judges.iter().find(|j| j.remote().is_none()) {
            let why = if single_form {
                "measures a remote judge's latency at each load and needs backend = \"openai\" (`judgelab load` ramps a local judge)".to_string()
            } else {
                format!("measures a remote judge's latency at each load; {:?} is local (`judgelab load` ramps a local judge)", j.name)
            };
            return Err(invalid("sweep.concurrency", why));
        }
        if let Some(j) = judges.iter().find(|j| j.written_exact()) {
            return Err(invalid(
                &exact_key(j),
                "reads every load's verdicts from one call, and sweep.concurrency measures \
                 the latency of calls made at each load: leave exact unwritten or false"
                    .into(),
            ));
        }
    }
    if sweep.quantization.iter().any(Option::is_some) {
        if let Some(j) = judges.iter().find(|j| j.remote().is_some()) {
            let why = if single_form {
                "makes the model file in other types with llama.cpp's quantiser and needs backend = \"llama\"".to_string()
            } else {
                format!("makes local model files in other types with llama.cpp's quantiser; {:?} is remote", j.name)
            };
            return Err(invalid("sweep.quantization", why));
        }
    }
    if judge.output == Some(OutputKind::Json) {
        if let Some(j) = judges.iter().find(|j| j.written_exact()) {
            return Err(invalid(
                &exact_key(j),
                "needs a one-token verdict: output = \"label\" or \"digit\", not \"json\"".into(),
            ));
        }
    }
    Ok(())
}

/// `written`, trimmed, if it is 1 to 100 ASCII letters, digits or `allowed` characters.
fn checked_name(
    key: &str,
    written: &str,
    allowed: &str,
    invalid: &Invalid<'_>,
) -> Result<String, ExperimentError> {
    let name = written.trim();
    if name.is_empty()
        || name.len() > 100
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || allowed.contains(c))
    {
        let chars: Vec<String> = allowed.chars().map(|c| format!("'{c}'")).collect();
        let (last, init) = chars.split_last().expect("some characters are allowed");
        return Err(invalid(
            key,
            format!(
                "{name:?} must be 1 to 100 letters, digits, {} or {last}",
                init.join(", ")
            ),
        ));
    }
    Ok(name.to_string())
}

/// The judges the `judge` axis sweeps: those `[sweep] judge` names, in its order, or every
/// judge in the order listed.
fn swept_judges(
    judges: Vec<NamedJudge>,
    swept: Option<OneOrMany<String>>,
    single_form: bool,
    invalid: &Invalid<'_>,
) -> Result<Vec<NamedJudge>, ExperimentError> {
    let Some(swept) = swept else {
        return Ok(judges);
    };
    if single_form {
        return Err(invalid(
            "sweep.judge",
            "sweeps the judges of [[judges]]; with one [judge] table, list its models in judge.model".into(),
        ));
    }
    let names = non_empty_unique("sweep.judge", swept.into_vec(), invalid)?;
    names
        .iter()
        .map(|name| {
            judges
                .iter()
                .find(|j| j.name == *name)
                .cloned()
                .ok_or_else(|| {
                    let known: Vec<String> =
                        judges.iter().map(|j| format!("{:?}", j.name)).collect();
                    invalid(
                        "sweep.judge",
                        format!(
                            "{name:?} is not a judge of [[judges]] ({})",
                            known.join(", ")
                        ),
                    )
                })
        })
        .collect()
}

fn non_empty_unique(
    key: &str,
    values: Vec<String>,
    invalid: &Invalid<'_>,
) -> Result<Vec<String>, ExperimentError> {
    if values.is_empty() {
        return Err(invalid(key, "needs at least one value".into()));
    }
    for (i, v) in values.iter().enumerate() {
        if v.trim().is_empty() {
            return Err(invalid(key, "has an empty value".into()));
        }
        if values[..i].contains(v) {
            return Err(invalid(key, format!("{v:?} is listed twice")));
        }
    }
    Ok(values)
}

/// The sweep key of `axis`, as errors name it.
fn sweep_key(axis: Axis) -> String {
    format!("sweep.{}", axis.key())
}

/// The values of a choice axis (its default when absent), each read by its name.
fn named<T: std::str::FromStr>(
    axis: Axis,
    values: Option<OneOrMany<String>>,
    what: &str,
    invalid: &Invalid<'_>,
) -> Result<Vec<T>, ExperimentError> {
    let info = axis.info();
    let key = &sweep_key(axis);
    let values = values.map_or(vec![info.default.to_string()], OneOrMany::into_vec);
    let expected = match info.choices {
        [] => String::new(),
        [one] => format!("\"{one}\""),
        [init @ .., last] => format!(
            "{} or \"{last}\"",
            init.iter()
                .map(|c| format!("\"{c}\""))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    // Distinct names, each read by its name; `what` says what a name should be.
    non_empty_unique(key, values, invalid)?
        .iter()
        .map(|v| {
            v.parse()
                .map_err(|_| invalid(key, format!("{v:?} is not {what} (expected {expected})")))
        })
        .collect()
}

/// The values of a real axis (its default when absent), checked against its range.
fn reals(
    axis: Axis,
    values: Option<OneOrMany<f64>>,
    invalid: &Invalid<'_>,
) -> Result<Vec<f64>, ExperimentError> {
    let info = axis.info();
    let Kind::Real {
        min,
        max,
        above_min,
    } = info.kind
    else {
        unreachable!("{axis:?} is a real axis")
    };
    let key = &sweep_key(axis);
    let values = match values {
        Some(v) => v.into_vec(),
        None => vec![info
            .default
            .parse()
            .expect("the default of a real axis is a number")],
    };
    if values.is_empty() {
        return Err(invalid(key, "needs at least one value".into()));
    }
    for (i, &v) in values.iter().enumerate() {
        if !v.is_finite() || v < min || (above_min && v == min) || v > max {
            let lo = if above_min {
                format!("above {min}")
            } else {
                format!("at least {min}")
            };
            return Err(invalid(key, format!("{v} must be {lo} and at most {max}")));
        }
        if values[..i].contains(&v) {
            return Err(invalid(key, format!("{v} is listed twice")));
        }
    }
    Ok(values)
}

/// The values of a count axis (its default when absent), checked against its range.
/// The levels of `input_max_tokens`: the inputs whole unless some are given.
fn budgets(
    values: Option<OneOrMany<InputLevel>>,
    invalid: &Invalid<'_>,
) -> Result<Vec<Option<u32>>, ExperimentError> {
    let Some(values) = values else {
        return Ok(vec![None]);
    };
    let key = sweep_key(Axis::InputMaxTokens);
    let mut out = Vec::new();
    for v in values.into_vec() {
        out.push(match v {
            InputLevel::Word(w) if w == "none" => None,
            InputLevel::Word(w) => {
                return Err(invalid(
                    &key,
                    format!("{w:?} is neither a number of tokens nor \"none\" (the inputs whole)"),
                ))
            }
            InputLevel::Tokens(n) => {
                Some(counts(Axis::InputMaxTokens, Some(OneOrMany::One(n)), invalid)?[0])
            }
        });
    }
    if out.is_empty() {
        return Err(invalid(&key, "needs at least one level".into()));
    }
    if let Some(i) = (1..out.len()).find(|&i| out[..i].contains(&out[i])) {
        let level = out[i].map_or("\"none\"".into(), |n| n.to_string());
        return Err(invalid(&key, format!("{level} is listed twice")));
    }
    Ok(out)
}

fn counts(
    axis: Axis,
    values: Option<OneOrMany<i64>>,
    invalid: &Invalid<'_>,
) -> Result<Vec<u32>, ExperimentError> {
    let info = axis.info();
    let Kind::Count { min, max } = info.kind else {
        unreachable!("{axis:?} is a count axis")
    };
    let values = match values {
        Some(v) => v.into_vec(),
        None => vec![info
            .default
            .parse()
            .expect("the default of a count axis is a number")],
    };
    ints(
        &sweep_key(axis),
        values,
        i64::from(min),
        i64::from(max),
        invalid,
    )
}

fn ints(
    key: &str,
    values: Vec<i64>,
    lo: i64,
    hi: i64,
    invalid: &Invalid<'_>,
) -> Result<Vec<u32>, ExperimentError> {
    if values.is_empty() {
        return Err(invalid(key, "needs at least one value".into()));
    }
    for (i, &v) in values.iter().enumerate() {
        if v < lo || v > hi {
            return Err(invalid(key, format!("{v} must be between {lo} and {hi}")));
        }
        if values[..i].contains(&v) {
            return Err(invalid(key, format!("{v} is listed twice")));
        }
    }
    Ok(values.into_iter().map(|v| v as u32).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    const GRID: &str = r#"
name = "llmbar-grid"
dataset = "datasets/llmbar_natural.jsonl"
[judge]
backend = "llama"
model = "default"
template = "pairwise"
[sweep]
temperature = [0, 0.7]
top_p = [0.9, 1.0]
max_tokens = [4]
few_shot = [0, 2]
repeats = 1
seed = 42
[limits]
items = 20
"#;

    #[test]
    fn one_token_verdicts_are_exact_unless_the_file_says_not() {
        let one = GRID.replace("max_tokens = [4]", "max_tokens = [1, 4]");
        let e = Experiment::from_toml("e.toml", &one).unwrap();
        let exact: Vec<(u32, bool)> = e.trials().iter().map(|t| (t.max_tokens, t.exact)).collect();
        assert!(exact.iter().all(|&(m, x)| x == (m == 1)), "{exact:?}");
        assert!(e.trials().iter().all(|t| e.exact(t) == t.exact));
        // The default is not written: the file hashes as it did before the default.
        assert!(!e.identity().to_string().contains("exact"));
        // A trial stored before the default has no mark: it generates as it did.
        let stored = TrialParams {
            exact: false,
            ..e.trials()[0].clone()
        };
        assert!(!e.exact(&stored));
        assert!(!serde_json::to_string(&stored).unwrap().contains("exact"));
        let marked = serde_json::to_value(&e.trials()[0]).unwrap();
        assert_eq!(marked["exact"], true);

        let off = one.replace(
            "template = \"pairwise\"",
            "template = \"pairwise\"\nexact = false",
        );
        let e = Experiment::from_toml("e.toml", &off).unwrap();
        assert!(e.trials().iter().all(|t| !t.exact && !e.exact(t)));
        assert!(!e.exact(&TrialParams {
            exact: true,
            ..e.trials()[0].clone()
        }));
        let on = one.replace(
            "template = \"pairwise\"",
            "template = \"pairwise\"\nexact = true",
        );
        let e = Experiment::from_toml("e.toml", &on).unwrap();
        assert!(e.trials().iter().all(|t| t.exact));
        // Stored under an older release, with no mark: the written flag decides.
        assert!(e.exact(&stored));
        // JSON verdicts are never exact by default.
        let json = one.replace(
            "template = \"pairwise\"",
            "template = \"pairwise\"\noutput = \"json\"",
        );
        let e = Experiment::from_toml("e.toml", &json).unwrap();
        assert!(e.trials().iter().all(|t| !t.exact));
        let remote = one.replace(
            "backend = \"llama\"",
            "backend = \"openai\"\nbase_url = \"http://127.0.0.1:1/v1\"",
        );
        // A remote judge's one-token trials are too (where its server returns
        // log-probabilities, which the run asks), but not those stored before remote exact
        // verdicts, nor where a trial measures latency at a load.
        let e = Experiment::from_toml("e.toml", &remote).unwrap();
        assert!(e.trials().iter().all(|t| t.exact == (t.max_tokens == 1)));
        assert!(!e.exact(&stored));
        let at_load = remote.replace("repeats = 1", "concurrency = 2\nrepeats = 1");
        let e = Experiment::from_toml("e.toml", &at_load).unwrap();
        assert!(e.trials().iter().all(|t| !t.exact));
    }

    #[test]
    fn example_sets_need_a_pool_to_draw_from() {
        let sets = GRID.replace("repeats = 1", "few_shot_set = [0, 1, 2]\nrepeats = 1");
        check_err(&sets, "sweep.few_shot_set: draws examples from the few-shot pool, which holds only the 2 that few_shot shows: set limits.pool larger (for example 8)");
        let pooled = sets.replace("items = 20", "items = 20\npool = 8");
        let e = Experiment::from_toml("e.toml", &pooled).unwrap();
        assert_eq!((e.pool_size(), e.trials().len()), (8, 24));
        check_err(
            &pooled.replace("few_shot = [0, 2]", "few_shot = 0"),
            "sweep.few_shot_set: chooses which few-shot examples a trial shows, but few_shot shows none",
        );
        check_err(
            &GRID.replace("items = 20", "items = 20\npool = 1"),
            "limits.pool: 1 holds fewer examples than few_shot = 2 shows",
        );
    }

    fn check_err(text: &str, expect: &str) {
        let err = Experiment::from_toml("e.toml", text)
            .unwrap_err()
            .to_string();
        assert!(err.contains(expect), "expected {expect:?} in:\n{err}");
    }

    #[test]
    fn panels_are_checked_and_outside_the_identity() {
        let plain = Experiment::from_toml("e.toml", GRID).unwrap();
        assert!(plain.panels.is_empty());
        let text = format!(
            "{GRID}\n[[panels]]\nname = \"vote3\"\nmembers = [1, 2, 3]\n\n[[panels]]\nname = \"pair\"\nmembers = [4, 5]\nrule = \"mean\"\n"
        );
        let e = Experiment::from_toml("e.toml", &text).unwrap();
        assert_eq!(e.identity(), plain.identity());
        assert_eq!(e.panels.len(), 2);
        assert_eq!(
            (e.panels[0].rule, e.panels[0].ties, &e.panels[0].members),
            (PanelRule::Majority, None, &vec![1, 2, 3])
        );
        assert_eq!(e.panels[1].rule, PanelRule::Mean);
        // What a written panel says is what the file would say.
        let again =
            Experiment::from_toml("e.toml", &format!("{GRID}\n{}", e.panels[1].to_toml())).unwrap();
        assert_eq!(again.panels[0], e.panels[1]);
        let panel = |body: &str| format!("{GRID}\n[[panels]]\n{body}\n");
        check_err(&panel("name = \"p\"\nmembers = [1]"), "panels[0].members");
        check_err(&panel("name = \"p\"\nmembers = [1, 1]"), "listed twice");
        check_err(&panel("name = \"a b\"\nmembers = [1, 2]"), "panels[0].name");
        check_err(
            &panel("name = \"p\"\nmembers = [1, 2]\nrule = \"vote\""),
            "unknown variant",
        );
        check_err(
            &panel("name = \"p\"\nmembers = [1, 2]\nweight = 1"),
            "weight",
        );
        check_err(
            &format!("{GRID}\n[[panels]]\nname = \"p\"\nmembers = [1, 2]\n[[panels]]\nname = \"p\"\nmembers = [3, 4]\n"),
            "names another panel too",
        );
    }

    #[test]
    fn the_trust_target_is_checked_and_outside_the_identity() {
        let plain = Experiment::from_toml("e.toml", GRID).unwrap();
        assert_eq!(plain.trust, Default::default());
        let text =
            format!("{GRID}\n[trust]\nagreement = 0.8\nrisk = 0.05\ncascade_threshold = 0.7\n");
        let e = Experiment::from_toml("e.toml", &text).unwrap();
        let t = e.trust;
        assert_eq!((t.target.agreement, t.target.risk), (0.8, 0.05));
        assert_eq!(t.cascade_threshold, Some(0.7));
        assert_eq!(e.identity(), plain.identity());
        check_err(
            &format!("{GRID}\n[trust]\nagreement = 1.5\n"),
            "trust.agreement",
        );
        check_err(
            &format!("{GRID}\n[trust]\nrisk = 0\n"),
            "must lie between 0 and 1",
        );
        check_err(&format!("{GRID}\n[trust]\nalpha = 0.9\n"), "alpha");
        check_err(
            &format!("{GRID}\n[trust]\ncascade_threshold = 2\n"),
            "trust.cascade_threshold",
        );
    }

    #[test]
    fn a_reference_names_values_the_sweep_has_and_is_outside_the_identity() {
        let plain = Experiment::from_toml("e.toml", GRID).unwrap();
        assert!(!plain.reference.is_declared());
        let e = Experiment::from_toml("e.toml", &format!("{GRID}\n[reference]\ntemperature = 0\n"))
            .unwrap();
        assert_eq!(e.identity(), plain.identity());
        assert_eq!(
            e.reference.values,
            vec![(crate::sweep::Axis::Temperature, "0".into())]
        );
        // Each trial's reference: its own values but on temperature, and not itself.
        let trials = e.trials();
        let warm = trials.iter().find(|t| t.temperature == 0.7).unwrap();
        let refs: Vec<_> = trials
            .iter()
            .filter(|q| e.reference.is_reference_of(q, warm))
            .collect();
        assert_eq!(refs.len(), 1);
        assert_eq!(
            (refs[0].temperature, refs[0].top_p, refs[0].few_shot),
            (0.0, warm.top_p, warm.few_shot)
        );
        assert!(!trials
            .iter()
            .any(|q| e.reference.is_reference_of(q, refs[0])));
        check_err(
            &format!("{GRID}\n[reference]\ntemperature = 0.3\n"),
            "reference.temperature: 0.3 is not a value the sweep has on temperature (0, 0.7)",
        );
        check_err(
            &format!("{GRID}\n[reference]\nwording = \"x\"\n"),
            "reference.wording: is not an axis",
        );
    }

    /// Every shipped example is a valid experiment file.
    #[test]
    fn every_example_parses() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
        let mut n = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "toml") {
                let text = std::fs::read_to_string(&path).unwrap();
                let shown = path.display().to_string();
                Experiment::from_toml(&shown, &text).unwrap_or_else(|e| panic!("{e}"));
                n += 1;
            }
        }
        assert!(n >= 7, "{n} examples");
    }

    #[test]
    fn paraphrases_are_templates_of_the_sweep() {
        let two = GRID.replace(
            "template = \"pairwise\"",
            "template = [\"pairwise\", \"pairwise_paraphrase_1\"]",
        );
        let plain = Experiment::from_toml("e.toml", &two).unwrap();
        assert!(plain.paraphrases.is_empty());
        let text = format!(
            "{two}\n[robustness]\nparaphrases = [\"pairwise\", \"pairwise_paraphrase_1\"]\n"
        );
        let e = Experiment::from_toml("e.toml", &text).unwrap();
        assert_eq!(e.paraphrases, vec!["pairwise", "pairwise_paraphrase_1"]);
        assert_eq!(e.identity(), plain.identity());
        check_err(
            &format!("{two}\n[robustness]\nparaphrases = [\"pairwise\", \"other\"]\n"),
            "robustness.paraphrases: \"other\" is not a template of the sweep",
        );
        check_err(
            &format!("{two}\n[robustness]\nparaphrases = [\"pairwise\"]\n"),
            "robustness.paraphrases: needs two or more templates",
        );
    }

    #[test]
    fn a_sample_of_the_grid_is_seeded_and_in_grid_order() {
        let full = Experiment::from_toml("e.toml", GRID).unwrap();
        let sampled = |sample: &str, seed: &str| {
            let text = GRID
                .replace("repeats = 1", &format!("repeats = 1\n{sample}"))
                .replace("seed = 42", seed);
            Experiment::from_toml("e.toml", &text).unwrap()
        };
        let e = sampled("sample = 3", "seed = 42");
        let trials = e.trials();
        assert_eq!(trials.len(), 3);
        assert_eq!(e.sweep.grid_size(), 8);
        let all = full.trials();
        let at: Vec<usize> = trials
            .iter()
            .map(|t| all.iter().position(|a| a == t).unwrap())
            .collect();
        assert!(at.windows(2).all(|w| w[0] < w[1]), "{at:?}");
        assert_eq!(trials, sampled("sample = 3", "seed = 42").trials());
        assert!(
            (0..8).any(|seed| sampled("sample = 3", &format!("seed = {seed}")).trials() != trials)
        );
        // A sample as large as the grid is the grid; an unset one keeps the identity.
        assert_eq!(sampled("sample = 8", "seed = 42").trials(), all);
        assert_ne!(e.identity(), full.identity());
        assert!(full.identity()["sweep"].get("sample").is_none());
        check_err(
            &GRID.replace("repeats = 1", "repeats = 1\nsample = 0"),
            "sweep.sample: 0 must be at least 1",
        );
    }

    #[test]
    fn grid_expands_to_every_combination() {
        let e = Experiment::from_toml("e.toml", GRID).unwrap();
        let trials = e.trials();
        assert_eq!(trials.len(), 8);
        assert_eq!(e.max_few_shot(), 2);
        assert_eq!(e.limits.items, Some(20));
        let first = &trials[0];
        assert_eq!(
            (first.few_shot, first.temperature, first.top_p),
            (0, 0.0, 0.9)
        );
        let last = &trials[7];
        assert_eq!((last.few_shot, last.temperature, last.top_p), (2, 0.7, 1.0));
        assert!(trials
            .iter()
            .all(|t| t.judge == "default" && t.max_tokens == 4));
    }

    #[test]
    fn scalars_stand_for_one_value_lists_and_defaults_apply() {
        let e = Experiment::from_toml(
            "e.toml",
            "name = \"x\"\ndataset = \"d\"\n[judge]\ntemplate = \"pairwise\"\n[sweep]\ntemperature = 0.3\n",
        )
        .unwrap();
        assert_eq!(e.sweep.temperature, vec![0.3]);
        assert_eq!(e.sweep.top_p, vec![1.0]);
        let names: Vec<&str> = e.judges.iter().map(|j| j.name.as_str()).collect();
        assert_eq!(names, ["default"]);
        assert_eq!(e.trials().len(), 1);
    }

    #[test]
    fn exact_verdicts_and_constraints_are_checked_and_keep_old_identities() {
        let e = Experiment::from_toml(
            "e.toml",
            &GRID
                .replace(
                    "template = \"pairwise\"",
                    "template = \"pairwise\"\nexact = true\nparallel = 2",
                )
                .replace(
                    "repeats = 1",
                    "constraint = [\"none\", \"grammar\"]\nrepeats = 1",
                ),
        )
        .unwrap();
        assert!(e.judges[0].written_exact());
        assert_eq!(e.judges[0].local().unwrap().parallel, 2);
        assert_eq!(e.trials().len(), 16);
        assert_eq!(e.trials()[1].constraint, Constraint::Grammar);
        // Written only when they differ from the defaults, so that older files and trials
        // keep their identity; parallel is speed only and never written.
        let json = e.identity().to_string();
        assert!(
            json.contains("\"exact\":true")
                && json.contains("\"constraint\":[\"none\",\"grammar\"]")
        );
        assert!(!json.contains("parallel"));
        let plain = Experiment::from_toml("e.toml", GRID)
            .unwrap()
            .identity()
            .to_string();
        assert!(
            !plain.contains("exact") && !plain.contains("constraint"),
            "{plain}"
        );
        check_err(
            &GRID.replace("repeats = 1", "constraint = \"regex\"\nrepeats = 1"),
            "sweep.constraint: \"regex\" is not an output constraint (expected \"none\" or \"grammar\")",
        );
        check_err(
            &GRID.replace(
                "template = \"pairwise\"",
                "template = \"pairwise\"\nexact = true\noutput = \"json\"",
            ),
            "judge.exact: needs a one-token verdict",
        );
        check_err(
            &GRID.replace(
                "template = \"pairwise\"",
                "template = \"pairwise\"\nparallel = 0",
            ),
            "judge.parallel: 0 must be between 1 and 64",
        );
        let remote = GRID.replace(
            "backend = \"llama\"",
            "backend = \"openai\"\nbase_url = \"http://127.0.0.1:1/v1\"",
        );
        // A remote judge reads exact verdicts from its server's log-probabilities, but
        // not where the sweep measures latency at each load.
        let remote_exact = remote.replace(
            "template = \"pairwise\"",
            "template = \"pairwise\"\nexact = true",
        );
        assert!(Experiment::from_toml("e.toml", &remote_exact)
            .unwrap()
            .judges[0]
            .written_exact());
        check_err(
            &remote_exact.replace("repeats = 1", "concurrency = [1, 4]\nrepeats = 1"),
            "judge.exact: reads every load's verdicts from one call",
        );
        check_err(
            &remote.replace("repeats = 1", "constraint = \"grammar\"\nrepeats = 1"),
            "sweep.constraint: \"grammar\" needs backend = \"llama\"",
        );
    }

    #[test]
    fn bad_keys_and_values_are_named() {
        check_err(
            &GRID.replace("seed = 42", "sed = 42"),
            "unknown field `sed`",
        );
        check_err(
            &GRID.replace("[limits]", "[limit]"),
            "unknown field `limit`",
        );
        check_err(
            &GRID.replace("top_p = [0.9, 1.0]", "top_p = [0.9, 1.5]"),
            "e.toml: sweep.top_p: 1.5 must be above 0 and at most 1",
        );
        check_err(
            &GRID.replace("top_p = [0.9, 1.0]", "top_p = [0.0]"),
            "sweep.top_p: 0 must be above 0",
        );
        check_err(
            &GRID.replace("temperature = [0, 0.7]", "temperature = [-1]"),
            "sweep.temperature: -1 must be at least 0",
        );
        check_err(
            &GRID.replace("max_tokens = [4]", "max_tokens = [0]"),
            "sweep.max_tokens: 0 must be between 1 and 65536",
        );
        check_err(
            &GRID.replace("few_shot = [0, 2]", "few_shot = [2, 2]"),
            "sweep.few_shot: 2 is listed twice",
        );
        let budget = |levels: &str| {
            GRID.replace(
                "max_tokens = [4]",
                &format!("max_tokens = [4]\ninput_max_tokens = {levels}"),
            )
        };
        check_err(
            &budget("[\"none\", 64, 64]"),
            "sweep.input_max_tokens: 64 is listed twice",
        );
        check_err(
            &budget("[\"none\", \"none\"]"),
            "sweep.input_max_tokens: \"none\" is listed twice",
        );
        check_err(
            &budget("[8]"),
            "sweep.input_max_tokens: 8 must be between 16 and 1048576",
        );
        check_err(
            &budget("[\"all\"]"),
            "sweep.input_max_tokens: \"all\" is neither a number of tokens nor \"none\"",
        );
        let levels = Experiment::from_toml("e.toml", &budget("[\"none\", 256]")).unwrap();
        assert_eq!(levels.sweep.input_max_tokens, [None, Some(256)]);
        check_err(
            &GRID.replace("max_tokens = [4]", "max_tokens = [\"4\"]"),
            "e.toml",
        );
        check_err(
            &GRID.replace("backend = \"llama\"", "backend = \"gpt\""),
            "judge.backend: \"gpt\" is not a supported backend",
        );
        check_err(
            &GRID.replace("llmbar-grid", "my grid"),
            "name: \"my grid\" must be",
        );
        check_err(
            &GRID.replace("items = 20", "items = 0"),
            "limits.items: 0 must be at least 1",
        );
        check_err(
            &format!("{GRID}\n[selection]\nmetric = \"mae\"\n"),
            "selection.metric: \"mae\" is not a metric that ranks trials",
        );
        check_err(
            &GRID.replace("template = \"pairwise\"\n", ""),
            "judge.template: is required",
        );
    }

    #[test]
    fn order_is_an_axis_that_old_experiments_do_not_see() {
        let e = Experiment::from_toml(
            "e.toml",
            &GRID.replace("seed = 42", "seed = 42\norder = [\"ab\", \"both\"]"),
        )
        .unwrap();
        let trials = e.trials();
        assert_eq!(trials.len(), 16);
        assert_eq!((trials[0].order, trials[1].order), (Order::Ab, Order::Both));
        // Serialised without the default, so that stored hashes and params do not change.
        let plain = Experiment::from_toml("e.toml", GRID).unwrap();
        assert!(!plain.identity().to_string().contains("order"));
        let params: TrialParams = serde_json::from_str(
            r#"{"model":"m","template":"t","temperature":0.0,"top_p":1.0,"max_tokens":4,"few_shot":0,"few_shot_max_tokens":null}"#,
        )
        .unwrap();
        assert_eq!(params.order, Order::Ab);
        check_err(
            &GRID.replace("seed = 42", "seed = 42\norder = \"ba_ab\""),
            "sweep.order: \"ba_ab\" is not an answer order",
        );
    }

    #[test]
    fn the_examples_parse() {
        let examples = [
            ("demo.toml", include_str!("../../../../examples/demo.toml")),
            (
                "position-bias.toml",
                include_str!("../../../../examples/position-bias.toml"),
            ),
        ];
        for (name, text) in examples {
            let e = Experiment::from_toml(name, text).unwrap();
            assert!(!e.trials().is_empty(), "{name}");
        }
    }

    /// Experiment files whose identity must never change: stored experiments resume only
    /// while it holds.
    fn identity_cases() -> Vec<(&'static str, String)> {
        vec![
            ("grid", GRID.to_string()),
            ("remote", REMOTE.to_string()),
            ("demo", include_str!("../../../../examples/demo.toml").to_string()),
            (
                "position-bias",
                include_str!("../../../../examples/position-bias.toml").to_string(),
            ),
            (
                "exact",
                "name = \"x\"\ndataset = \"d\"\n[judge]\ntemplate = \"pairwise\"\nexact = true\ngpu_layers = 3\nparallel = 2\nbatch_size = 16\n[sweep]\ntemperature = [0.0, 0.8]\ntop_p = [0.9, 1.0]\nmax_tokens = [2]\norder = [\"ab\", \"both\"]\nconstraint = [\"none\", \"grammar\"]\nrepeats = 2\nseed = 3\nfew_shot = [0, 2]\nfew_shot_max_tokens = [64]\n".into(),
            ),
            (
                "rating",
                "name = \"r\"\ndataset = \"d\"\n[judge]\nmodel = [\"default\", \"/m/other.gguf\"]\ntemplate = [\"single\", \"t.jinja\"]\noutput = \"digit\"\ncontext_size = 4096\n[limits]\nitems = 5\n".into(),
            ),
        ]
    }

    /// The registry's `identity` flag is what `Experiment::identity` does: changing any axis
    /// declared part of it changes the hash.
    #[test]
    fn every_identity_axis_changes_the_identity() {
        // The grid, with a remote judge for an axis of remote judges.
        let grid = |axis: Axis| -> String {
            match axis.info().applies {
                crate::sweep::Applies::Remote => GRID.replace(
                    "backend = \"llama\"\nmodel = \"default\"",
                    "backend = \"openai\"\nbase_url = \"http://127.0.0.1:8080/v1\"\nmodel = \"smollm2\"",
                ),
                // Shortened by one strategy or another: inputs with a budget.
                _ if axis == Axis::InputStrategy => {
                    GRID.replace("repeats = 1", "input_max_tokens = [256]\nrepeats = 1")
                }
                _ => GRID.to_string(),
            }
        };
        let changed = |axis: Axis| -> String {
            let (old, new) = match axis {
                Axis::Judge => (
                    "model = \"default\"",
                    "model = [\"default\", \"/m/x.gguf\"]",
                ),
                Axis::Template => (
                    "template = \"pairwise\"",
                    "template = [\"pairwise\", \"single\"]",
                ),
                Axis::FewShot => ("few_shot = [0, 2]", "few_shot = [0, 1]"),
                Axis::FewShotMaxTokens => {
                    ("repeats = 1", "few_shot_max_tokens = [64]\nrepeats = 1")
                }
                Axis::FewShotSet => (
                    "repeats = 1\nseed = 42\n[limits]\nitems = 20",
                    "few_shot_set = [0, 1]\nrepeats = 1\nseed = 42\n[limits]\nitems = 20\npool = 4",
                ),
                Axis::MaxTokens => ("max_tokens = [4]", "max_tokens = [5]"),
                Axis::Temperature => ("temperature = [0, 0.7]", "temperature = [0, 0.8]"),
                Axis::TopP => ("top_p = [0.9, 1.0]", "top_p = [0.8, 1.0]"),
                Axis::Order => ("repeats = 1", "order = [\"ab\", \"ba\"]\nrepeats = 1"),
                Axis::Constraint => ("repeats = 1", "constraint = \"grammar\"\nrepeats = 1"),
                Axis::Concurrency => ("repeats = 1", "concurrency = [1, 4]\nrepeats = 1"),
                Axis::Style => (
                    "repeats = 1",
                    "style = [\"rubric\", \"checklist\"]\nrepeats = 1",
                ),
                Axis::Quantization => (
                    "repeats = 1",
                    "quantization = [\"source\", \"Q4_0\"]\nrepeats = 1",
                ),
                Axis::InputMaxTokens => (
                    "repeats = 1",
                    "input_max_tokens = [\"none\", 256]\nrepeats = 1",
                ),
                Axis::InputStrategy => (
                    "input_max_tokens = [256]",
                    "input_max_tokens = [256]\ninput_strategy = \"summary\"",
                ),
            };
            let grid = grid(axis);
            assert!(grid.contains(old), "{axis:?}");
            grid.replace(old, new)
        };
        for axis in Axis::ALL {
            let base = Experiment::from_toml("e.toml", &grid(axis)).unwrap();
            let other = Experiment::from_toml("e.toml", &changed(axis)).unwrap();
            assert_ne!(other.trials(), base.trials());
            assert_eq!(
                other.identity() != base.identity(),
                axis.info().identity,
                "{axis:?}"
            );
        }
    }

    #[test]
    fn old_experiment_files_keep_their_identity() {
        // Computed by the code before named judges (6d2f9b9: `Experiment` serialised).
        let expect = [
            (
                "grid",
                "d02d03124a667492e31d5080e352df00eb82ffef848cfe1361bff8efecbede4d",
            ),
            (
                "remote",
                "01d8e119ba031d6a8207e8c4dc74839157cf84b3e7ad96f177f04634a3f5779b",
            ),
            (
                "demo",
                "c21aa2e97fbf9ec2c7469895f0f5b992b50b04274d553242d42c6be0d12073ba",
            ),
            (
                "position-bias",
                "166639cb5b9a7e5647758eb59d11883f77795fad15bbcd83268c51c45b6719ae",
            ),
            (
                "exact",
                "f3ad6e97cf4868ad74e92a35771dd346682300843f42a8e3710e0fda7bfd6ec2",
            ),
            (
                "rating",
                "86f554180c56e503d4e0eea2e468ed413c567acfb9472ee2022c3280403e6d1f",
            ),
        ];
        for ((name, text), (expect_name, hash)) in identity_cases().into_iter().zip(expect) {
            assert_eq!(name, expect_name);
            let e = Experiment::from_toml(name, &text).unwrap();
            let got = crate::hash::sha256_hex(e.identity().to_string());
            assert_eq!(got, hash, "{name}: {}", e.identity());
        }
    }

    const NAMED: &str = r#"
name = "mixed"
dataset = "d.jsonl"
[[judges]]
name = "local"
model = "default"
exact = true
[[judges]]
name = "api"
backend = "openai"
base_url = "https://api.example.com/v1/"
model = "gpt-4o-mini"
api_key_env = "OPENAI_API_KEY"
price = { input = 0.15, output = 0.6 }
[judge]
template = "pairwise"
[sweep]
temperature = [0.0, 0.7]
"#;

    #[test]
    fn summaries_need_levels_and_a_declared_summariser() {
        let with = |sweep: &str, summary: &str| {
            NAMED.replace("temperature = [0.0, 0.7]", sweep).to_string() + summary
        };
        let levels = "input_max_tokens = [\"none\", 64]\ninput_strategy = [\"head_tail\", \"summary\"]\njudge = \"api\"";
        let e = Experiment::from_toml("e.toml", &with(levels, "[summary]\njudge = \"local\"\n"))
            .unwrap();
        // The local judge summarises and is not swept; whole inputs are one trial.
        assert_eq!(e.judges.len(), 1);
        assert_eq!(
            e.summariser.as_ref().map(|j| j.name.as_str()),
            Some("local")
        );
        let shown: Vec<(Option<u32>, Shortening)> = e
            .trials()
            .iter()
            .map(|t| (t.input_max_tokens, t.input_strategy))
            .collect();
        assert_eq!(
            shown,
            [
                (None, Shortening::HeadTail),
                (Some(64), Shortening::HeadTail),
                (Some(64), Shortening::Summary)
            ]
        );
        assert_eq!(e.sweep.grid_size(), 3);
        let own = Experiment::from_toml("e.toml", &with(levels, "")).unwrap();
        assert_eq!(own.summariser, None);
        assert_ne!(own.identity(), e.identity());
        let err = |toml: &str| {
            Experiment::from_toml("e.toml", toml)
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            err(&with("input_strategy = \"summary\"", "")),
            "e.toml: sweep.input_strategy: \"summary\" shortens the inputs over input_max_tokens: give it some levels (e.g. input_max_tokens = [\"none\", 256])"
        );
        assert_eq!(
            err(&with("input_max_tokens = 64", "[summary]\njudge = \"local\"\n")),
            "e.toml: summary.judge: writes the summaries of input_strategy = \"summary\", which the sweep does not have"
        );
        assert_eq!(
            err(&with(levels, "[summary]\njudge = \"gpt\"\n")),
            "e.toml: summary.judge: \"gpt\" is not a judge of [[judges]] (\"local\", \"api\")"
        );
        assert!(err(&with("input_strategy = \"short\"", ""))
            .contains("\"short\" is not a way of shortening inputs"));
    }

    #[test]
    fn named_judges_of_any_backend_are_one_axis() {
        let e = Experiment::from_toml("e.toml", NAMED).unwrap();
        assert!(!e.single_form);
        let names: Vec<&str> = e.judges.iter().map(|j| j.name.as_str()).collect();
        assert_eq!(names, ["local", "api"]);
        assert!(e.judges[0].written_exact() && !e.judges[1].written_exact());
        let api = e.judges[1].remote().unwrap();
        assert_eq!(api.endpoint.base_url, "https://api.example.com/v1");
        assert_eq!(api.model, "gpt-4o-mini");
        assert!((api.price.unwrap().cost(0, 1_000_000) - 0.6).abs() < 1e-12);
        let trials = e.trials();
        let points: Vec<(&str, f64)> = trials
            .iter()
            .map(|t| (t.judge.as_str(), t.temperature))
            .collect();
        assert_eq!(
            points,
            [("local", 0.0), ("local", 0.7), ("api", 0.0), ("api", 0.7)]
        );
        // [sweep] judge picks and orders them; the identity follows.
        let one = NAMED.replace("[sweep]\n", "[sweep]\njudge = \"api\"\n");
        let e1 = Experiment::from_toml("e.toml", &one).unwrap();
        assert_eq!(e1.trials().len(), 2);
        assert_ne!(e1.identity(), e.identity());
        // Speed, money and secrets stay out of the identity, as in the single form.
        let id = e.identity().to_string();
        assert!(
            id.contains("gpt-4o-mini") && !id.contains("OPENAI_API_KEY") && !id.contains("0.15"),
            "{id}"
        );
        let faster = NAMED.replace(
            "exact = true\n",
            "exact = true\nparallel = 8\ngpu_layers = 9\n",
        );
        assert_eq!(
            Experiment::from_toml("e.toml", &faster).unwrap().identity(),
            e.identity()
        );
    }

    /// An alignment's spec: its local judges decode alone, its remote ones are as they
    /// were, and its identity is its source's.
    #[test]
    fn a_reproducible_spec_keeps_the_identity() {
        for spec in [GRID, NAMED] {
            let e = Experiment::from_toml("e.toml", spec).unwrap();
            let r =
                Experiment::from_toml("e.toml", &super::reproducible_spec(spec).unwrap()).unwrap();
            assert_eq!(r.identity(), e.identity());
            assert!(r
                .judges
                .iter()
                .all(|j| j.local().is_none_or(|l| l.reproducible)));
            assert!(r.judges.iter().any(|j| j.local().is_some()));
            assert!(e
                .judges
                .iter()
                .all(|j| j.local().is_none_or(|l| !l.reproducible)));
        }
    }

    #[test]
    fn named_judges_are_checked_where_they_are_written() {
        check_err(
            &NAMED.replace("[sweep]\n", "[sweep]\njudge = [\"api\", \"gpt\"]\n"),
            "sweep.judge: \"gpt\" is not a judge of [[judges]] (\"local\", \"api\")",
        );
        check_err(
            &NAMED.replace("name = \"api\"", "name = \"local\""),
            "judges[1].name: \"local\" names two judges",
        );
        check_err(
            &NAMED.replace(
                "template = \"pairwise\"",
                "template = \"pairwise\"\nmodel = \"x\"",
            ),
            "judge.model: belongs to each judge of [[judges]]",
        );
        check_err(
            &NAMED.replace("exact = true", "exact = true\ntemplate = \"single\""),
            "judges.local.template: belongs in [judge]",
        );
        check_err(
            &NAMED.replace("exact = true", "exact = true\nbase_url = \"http://x\""),
            "judges.local.base_url: is for backend = \"openai\" only",
        );
        check_err(
            &NAMED.replace("model = \"gpt-4o-mini\"\n", ""),
            "judges.api.model: is required with backend = \"openai\"",
        );
        check_err(
            &NAMED.replace(
                "temperature = [0.0, 0.7]",
                "constraint = [\"none\", \"grammar\"]",
            ),
            "sweep.constraint: \"grammar\" needs local judges; \"api\" is remote",
        );
        check_err(
            &NAMED.replace("temperature = [0.0, 0.7]", "concurrency = [1, 4]"),
            "sweep.concurrency: measures a remote judge's latency at each load; \"local\" is local",
        );
        check_err(
            &GRID.replace("repeats = 1", "concurrency = [1, 4]\nrepeats = 1"),
            "sweep.concurrency: measures a remote judge's latency at each load and needs backend = \"openai\"",
        );
        check_err(
            &REMOTE.replace(
                "concurrency = 2",
                "concurrency = 2\n[sweep]\nconcurrency = [0, 4]",
            ),
            "sweep.concurrency: 0 must be between 1 and 1024",
        );
        check_err(
            &NAMED.replace(
                "template = \"pairwise\"",
                "template = \"pairwise\"\noutput = \"json\"",
            ),
            "judges.local.exact: needs a one-token verdict",
        );
        check_err(
            &GRID.replace("repeats = 1", "judge = \"default\"\nrepeats = 1"),
            "sweep.judge: sweeps the judges of [[judges]]",
        );
    }

    #[test]
    fn the_local_and_remote_example_parses() {
        let text = include_str!("../../../../examples/local-and-remote.toml");
        let e = Experiment::from_toml("local-and-remote.toml", text).unwrap();
        assert_eq!(e.trials().len(), 4);
        assert!(e.judges[0].local().is_some() && e.judges[1].remote().is_some());
    }

    #[test]
    fn a_pool_of_endpoints_is_one_judge_named_by_its_first() {
        let pooled = REMOTE.replace(
            "base_url = \"http://127.0.0.1:8080/v1/\"",
            "base_url = [\"http://127.0.0.1:8080/v1/\", \"http://127.0.0.1:8081/v1\", \"http://10.0.0.2:8080/v1\"]",
        );
        let e = Experiment::from_toml("e.toml", &pooled).unwrap();
        let r = &e.judges[0].remote().unwrap().endpoint;
        assert_eq!(r.base_url, "http://127.0.0.1:8080/v1");
        assert_eq!(
            r.calls.pool,
            ["http://127.0.0.1:8081/v1", "http://10.0.0.2:8080/v1"]
        );
        // Which servers share the calls is not what the judge answers: the identity is
        // the single endpoint's, so that a pool may change and the experiment resumes.
        let single = Experiment::from_toml("e.toml", REMOTE).unwrap();
        assert_eq!(e.identity(), single.identity());
        check_err(
            &REMOTE.replace(
                "base_url = \"http://127.0.0.1:8080/v1/\"",
                "base_url = [\"http://a/v1\", \"http://a/v1/\"]",
            ),
            "judge.base_url: \"http://a/v1\" is listed twice",
        );
        check_err(
            &REMOTE.replace(
                "base_url = \"http://127.0.0.1:8080/v1/\"",
                "base_url = [\"http://a/v1\", \"ftp://b\"]",
            ),
            "judge.base_url: \"ftp://b\" must start with http:// or https://",
        );
        check_err(
            &REMOTE.replace("base_url = \"http://127.0.0.1:8080/v1/\"", "base_url = []"),
            "judge.base_url: is required",
        );
    }

    const REMOTE: &str = r#"
name = "remote"
dataset = "d.jsonl"
[judge]
backend = "openai"
base_url = "http://127.0.0.1:8080/v1/"
model = ["smollm2", "other"]
template = "pairwise"
api_key_env = "OPENAI_API_KEY"
concurrency = 2
[judge.prices.smollm2]
input = 0.15
output = 0.6
"#;

    /// Each level of a swept `concurrency` is a trial; the sweep's default is the judge's
    /// own, written nowhere, so that experiments from before the axis keep their identity.
    #[test]
    fn concurrency_levels_are_trials_of_remote_judges() {
        let swept = REMOTE.replace(
            "concurrency = 2",
            "concurrency = 2\n[sweep]\nconcurrency = [1, 4]",
        );
        let e = Experiment::from_toml("e.toml", &swept).unwrap();
        let levels: Vec<_> = e
            .trials()
            .iter()
            .map(|t| (t.judge.clone(), t.concurrency))
            .collect();
        assert_eq!(
            levels,
            [
                ("smollm2".to_string(), Some(1)),
                ("smollm2".to_string(), Some(4)),
                ("other".to_string(), Some(1)),
                ("other".to_string(), Some(4)),
            ]
        );
        let stored = serde_json::to_value(&e.trials()[1]).unwrap();
        assert_eq!(stored["concurrency"], 4);
        let plain = Experiment::from_toml("e.toml", REMOTE).unwrap();
        assert_eq!(plain.trials()[0].concurrency, None);
        let stored = serde_json::to_string(&plain.trials()[0]).unwrap();
        assert!(!stored.contains("concurrency"), "{stored}");
        assert!(!plain.identity().to_string().contains("concurrency"));
    }

    #[test]
    fn remote_judges_are_configured_and_checked() {
        let e = Experiment::from_toml("e.toml", REMOTE).unwrap();
        let judge = e.judges[0].remote().unwrap();
        let r = &judge.endpoint;
        assert_eq!(r.base_url, "http://127.0.0.1:8080/v1");
        assert_eq!(r.calls.concurrency, 2);
        assert_eq!(r.calls.api_key_env.as_deref(), Some("OPENAI_API_KEY"));
        assert!((judge.price.unwrap().cost(1_000_000, 0) - 0.15).abs() < 1e-12);
        assert_eq!(e.judges[1].remote().unwrap().price, None);
        assert_eq!(e.trials().len(), 2);
        // Speed, money and secrets are not part of the identity.
        let json = e.identity().to_string();
        assert!(
            json.contains("base_url")
                && !json.contains("OPENAI_API_KEY")
                && !json.contains("prices")
        );
        check_err(
            &REMOTE.replace("base_url = \"http://127.0.0.1:8080/v1/\"\n", ""),
            "judge.base_url: is required",
        );
        check_err(
            &REMOTE.replace("model = [\"smollm2\", \"other\"]\n", ""),
            "judge.model: is required",
        );
        check_err(
            &REMOTE.replace("concurrency = 2", "concurrency = 0"),
            "judge.concurrency: 0 must be between 1 and 256",
        );
        check_err(
            &REMOTE.replace("concurrency = 2", "context_size = 512"),
            "judge.context_size: is for backend = \"llama\" only",
        );
        check_err(
            &GRID.replace(
                "template = \"pairwise\"",
                "template = \"pairwise\"\nbase_url = \"http://x\"",
            ),
            "judge.base_url: is for backend = \"openai\" only",
        );
        check_err(
            &REMOTE.replace("\"OPENAI_API_KEY\"", "\"sk-123 456\""),
            "is not an environment variable name",
        );
        check_err(
            &REMOTE.replace("concurrency = 2", "api_key_keyring = \"openai\""),
            "not both",
        );
    }
}
