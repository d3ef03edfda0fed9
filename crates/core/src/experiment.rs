//! Experiments: a TOML file parsed into a raw form, then validated into an [`Experiment`]
//! before any model is loaded. Its sweep expands into trials: every combination of the
//! grid's values is one trial.

use serde::{Deserialize, Serialize};

use crate::sweep::{Axis, Kind};
use crate::verdict::OutputKind;

/// Where the judge runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Backend {
    /// Local GGUF files through llama.cpp.
    Llama,
    /// An OpenAI-compatible HTTP endpoint.
    #[serde(rename = "openai")]
    OpenAi,
}

/// A validated experiment.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Experiment {
    pub name: String,
    /// A dataset file (imported on the fly) or the name of an imported dataset.
    pub dataset: String,
    pub judge: JudgeSpec,
    pub sweep: Sweep,
    pub limits: Limits,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JudgeSpec {
    pub backend: Backend,
    /// `default` or GGUF paths; an axis of the sweep.
    pub models: Vec<String>,
    /// Built-in template names or `.jinja` paths; an axis of the sweep.
    pub templates: Vec<String>,
    /// Default: a label for pairwise data, a digit for ratings.
    pub output: Option<OutputKind>,
    /// Layers to offload to a GPU; default: all when a GPU backend is compiled in.
    pub gpu_layers: Option<u32>,
    /// Context window in tokens (capped at the model's training context).
    pub context_size: u32,
    /// How many requests the engine hands the judge at once.
    pub batch_size: usize,
    /// Verdicts read from the exact distribution of the first output token (local label and
    /// digit judges): one forward pass per prompt serves every temperature and top_p of the
    /// sweep. Off: every call generates. Written only when on, so that experiments from
    /// before it keep their identity.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub exact: bool,
    /// Sequences a local judge decodes together in one batch. Speed only: left out of the
    /// experiment's identity.
    #[serde(skip)]
    pub parallel: usize,
    /// The endpoint, for `backend = "openai"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote: Option<RemoteSpec>,
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
    pub stream: bool,
    pub concurrency: usize,
    pub requests_per_minute: Option<u32>,
    pub tokens_per_minute: Option<u32>,
    pub timeout_s: f64,
    pub max_attempts: u32,
    /// $ per million input and output tokens, by model name.
    pub prices: std::collections::BTreeMap<String, Price>,
}

impl Default for RemoteCalls {
    fn default() -> Self {
        RemoteCalls {
            api_key_env: None,
            api_key_keyring: None,
            stream: true,
            concurrency: 4,
            requests_per_minute: None,
            tokens_per_minute: None,
            timeout_s: 60.0,
            max_attempts: 5,
            prices: Default::default(),
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

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sweep {
    pub temperature: Vec<f64>,
    pub top_p: Vec<f64>,
    pub max_tokens: Vec<u32>,
    pub few_shot: Vec<u32>,
    /// Longest few-shot example allowed, in prompt tokens; `None` means no limit.
    pub few_shot_max_tokens: Vec<Option<u32>>,
    /// Answer orders (pairwise); left out of the serialised form while it is the default,
    /// so that experiments written before it existed keep their identity.
    #[serde(skip_serializing_if = "Order::only_ab")]
    pub order: Vec<Order>,
    /// Output constraints; left out while it is only `none`, like `order`.
    #[serde(skip_serializing_if = "Constraint::only_none")]
    pub constraint: Vec<Constraint>,
    pub repeats: u32,
    pub seed: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Limits {
    /// Judge a seeded subset of this many items.
    pub items: Option<usize>,
}

/// The order in which a pairwise item's answers are shown to the judge.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Order {
    /// As in the dataset: answer A first.
    #[default]
    Ab,
    /// Swapped: answer B first (the verdict is mapped back to the dataset's labels).
    Ba,
    /// Both orders, two calls per item; the verdict is kept when they agree and is a tie
    /// when they do not (as MT-Bench does).
    Both,
}

impl Order {
    pub fn as_str(self) -> &'static str {
        match self {
            Order::Ab => "ab",
            Order::Ba => "ba",
            Order::Both => "both",
        }
    }

    pub fn from_name(name: &str) -> Option<Order> {
        [Order::Ab, Order::Ba, Order::Both]
            .into_iter()
            .find(|o| o.as_str() == name)
    }

    /// The calls of one verdict: whether each shows the answers swapped.
    pub fn calls(self) -> &'static [bool] {
        match self {
            Order::Ab => &[false],
            Order::Ba => &[true],
            Order::Both => &[false, true],
        }
    }

    fn is_ab(&self) -> bool {
        *self == Order::Ab
    }

    fn only_ab(orders: &[Order]) -> bool {
        orders == [Order::Ab]
    }
}

/// What restricts the judge's output.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Constraint {
    /// The judge writes what it likes; the parser finds the verdict or a failure.
    #[default]
    None,
    /// A GBNF grammar admits only the valid verdicts (`verdict::grammar`), so that parse
    /// failures cannot happen (local judges).
    Grammar,
}

impl Constraint {
    pub fn as_str(self) -> &'static str {
        match self {
            Constraint::None => "none",
            Constraint::Grammar => "grammar",
        }
    }

    pub fn from_name(name: &str) -> Option<Constraint> {
        [Constraint::None, Constraint::Grammar]
            .into_iter()
            .find(|c| c.as_str() == name)
    }

    fn is_none(&self) -> bool {
        *self == Constraint::None
    }

    fn only_none(constraints: &[Constraint]) -> bool {
        constraints == [Constraint::None]
    }
}

/// The parameters of one trial: one point of the grid (its axes: `crate::sweep`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TrialParams {
    pub model: String,
    pub template: String,
    pub temperature: f64,
    pub top_p: f64,
    pub max_tokens: u32,
    pub few_shot: u32,
    pub few_shot_max_tokens: Option<u32>,
    /// Absent from trials stored before the order axis existed, which were all `ab`.
    #[serde(default, skip_serializing_if = "Order::is_ab")]
    pub order: Order,
    /// Absent from trials stored before constraints existed, which had none.
    #[serde(default, skip_serializing_if = "Constraint::is_none")]
    pub constraint: Constraint,
}

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

#[derive(Deserialize)]
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
    judge: RawJudge,
    #[serde(default)]
    sweep: RawSweep,
    #[serde(default)]
    limits: RawLimits,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawJudge {
    #[serde(default = "default_backend")]
    backend: String,
    model: Option<OneOrMany<String>>,
    template: OneOrMany<String>,
    output: Option<String>,
    gpu_layers: Option<u32>,
    context_size: Option<u32>,
    batch_size: Option<usize>,
    exact: Option<bool>,
    parallel: Option<i64>,
    base_url: Option<String>,
    api_key_env: Option<String>,
    api_key_keyring: Option<String>,
    stream: Option<bool>,
    concurrency: Option<i64>,
    requests_per_minute: Option<i64>,
    tokens_per_minute: Option<i64>,
    timeout_s: Option<f64>,
    max_attempts: Option<i64>,
    top_logprobs: Option<i64>,
    json_schema: Option<bool>,
    stop: Option<OneOrMany<String>>,
    #[serde(default)]
    prices: std::collections::BTreeMap<String, Price>,
}

/// The endpoint of `backend = "openai"`; its keys are errors with any other backend.
fn remote(
    j: &RawJudge,
    backend: Backend,
    invalid: &Invalid<'_>,
) -> Result<Option<RemoteSpec>, ExperimentError> {
    if backend != Backend::OpenAi {
        let given = [
            ("base_url", j.base_url.is_some()),
            ("api_key_env", j.api_key_env.is_some()),
            ("api_key_keyring", j.api_key_keyring.is_some()),
            ("stream", j.stream.is_some()),
            ("concurrency", j.concurrency.is_some()),
            ("requests_per_minute", j.requests_per_minute.is_some()),
            ("tokens_per_minute", j.tokens_per_minute.is_some()),
            ("timeout_s", j.timeout_s.is_some()),
            ("max_attempts", j.max_attempts.is_some()),
            ("top_logprobs", j.top_logprobs.is_some()),
            ("json_schema", j.json_schema.is_some()),
            ("stop", j.stop.is_some()),
            ("prices", !j.prices.is_empty()),
        ];
        if let Some((key, _)) = given.iter().find(|(_, given)| *given) {
            return Err(invalid(
                &format!("judge.{key}"),
                "is for backend = \"openai\" only".into(),
            ));
        }
        return Ok(None);
    }
    let llama_only = [
        ("gpu_layers", j.gpu_layers.is_some()),
        ("context_size", j.context_size.is_some()),
        ("exact", j.exact.is_some()),
        ("parallel", j.parallel.is_some()),
    ];
    if let Some((key, _)) = llama_only.iter().find(|(_, given)| *given) {
        return Err(invalid(
            &format!("judge.{key}"),
            "is for backend = \"llama\" only".into(),
        ));
    }
    let base_url = j
        .base_url
        .as_deref()
        .map(str::trim)
        .filter(|u| !u.is_empty())
        .ok_or_else(|| {
            invalid(
                "judge.base_url",
                "is required with backend = \"openai\" (e.g. \"https://api.openai.com/v1\")".into(),
            )
        })?;
    if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
        return Err(invalid(
            "judge.base_url",
            format!("{base_url:?} must start with http:// or https://"),
        ));
    }
    let count =
        |key: &str, value: Option<i64>, lo: i64, hi: i64| -> Result<Option<u32>, ExperimentError> {
            match value {
                None => Ok(None),
                Some(v) if (lo..=hi).contains(&v) => Ok(Some(v as u32)),
                Some(v) => Err(invalid(
                    &format!("judge.{key}"),
                    format!("{v} must be between {lo} and {hi}"),
                )),
            }
        };
    let defaults = RemoteCalls::default();
    let timeout_s = j.timeout_s.unwrap_or(defaults.timeout_s);
    if !(timeout_s.is_finite() && (0.1..=3600.0).contains(&timeout_s)) {
        return Err(invalid(
            "judge.timeout_s",
            format!("{timeout_s} must be between 0.1 and 3600"),
        ));
    }
    if let Some(env) = &j.api_key_env {
        if env.is_empty() || !env.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(invalid(
                "judge.api_key_env",
                format!("{env:?} is not an environment variable name"),
            ));
        }
    }
    if j.api_key_env.is_some() && j.api_key_keyring.is_some() {
        return Err(invalid(
            "judge.api_key_keyring",
            "give api_key_env or api_key_keyring, not both".into(),
        ));
    }
    if let Some(name) = &j.api_key_keyring {
        if name.trim().is_empty() {
            return Err(invalid("judge.api_key_keyring", "is empty".into()));
        }
    }
    for (model, price) in &j.prices {
        if !(price.input >= 0.0
            && price.output >= 0.0
            && price.input.is_finite()
            && price.output.is_finite())
        {
            return Err(invalid(
                &format!("judge.prices.{model}"),
                "prices must be non-negative numbers".into(),
            ));
        }
    }
    Ok(Some(RemoteSpec {
        base_url: base_url.trim_end_matches('/').to_string(),
        top_logprobs: count("top_logprobs", j.top_logprobs, 0, 20)?,
        json_schema: j.json_schema.unwrap_or(false),
        stop: match &j.stop {
            None => Vec::new(),
            Some(OneOrMany::One(s)) => vec![s.clone()],
            Some(OneOrMany::Many(v)) => v.clone(),
        },
        calls: RemoteCalls {
            api_key_env: j.api_key_env.clone(),
            api_key_keyring: j.api_key_keyring.clone(),
            stream: j.stream.unwrap_or(defaults.stream),
            concurrency: count("concurrency", j.concurrency, 1, 256)?
                .map_or(defaults.concurrency, |c| c as usize),
            requests_per_minute: count("requests_per_minute", j.requests_per_minute, 1, 1_000_000)?,
            tokens_per_minute: count("tokens_per_minute", j.tokens_per_minute, 1, 1_000_000_000)?,
            timeout_s,
            max_attempts: count("max_attempts", j.max_attempts, 1, 100)?
                .unwrap_or(defaults.max_attempts),
            prices: j.prices.clone(),
        },
    }))
}

fn default_backend() -> String {
    "llama".into()
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawSweep {
    temperature: Option<OneOrMany<f64>>,
    top_p: Option<OneOrMany<f64>>,
    max_tokens: Option<OneOrMany<i64>>,
    few_shot: Option<OneOrMany<i64>>,
    few_shot_max_tokens: Option<OneOrMany<i64>>,
    order: Option<OneOrMany<String>>,
    constraint: Option<OneOrMany<String>>,
    repeats: Option<i64>,
    seed: Option<i64>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawLimits {
    items: Option<i64>,
}

impl Experiment {
    /// Parses and validates the TOML `text` of the file at `path` (named in errors).
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

        let name = raw.name.trim().to_string();
        if name.is_empty()
            || name.len() > 100
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
        {
            return Err(invalid(
                "name",
                format!("{name:?} must be 1 to 100 letters, digits, '.', '_' or '-'"),
            ));
        }
        if raw.dataset.trim().is_empty() {
            return Err(invalid("dataset", "is empty".into()));
        }

        let backend = match raw.judge.backend.as_str() {
            "llama" => Backend::Llama,
            "openai" => Backend::OpenAi,
            other => {
                return Err(invalid(
                    "judge.backend",
                    format!(
                        "{other:?} is not a supported backend (expected \"llama\" or \"openai\")"
                    ),
                ))
            }
        };
        let remote = remote(&raw.judge, backend, &invalid)?;
        let models = match (raw.judge.model, backend) {
            (Some(m), _) => m.into_vec(),
            (None, Backend::Llama) => vec!["default".to_string()],
            (None, Backend::OpenAi) => {
                return Err(invalid(
                    "judge.model",
                    "is required with backend = \"openai\": the model name the endpoint serves"
                        .into(),
                ))
            }
        };
        let models = non_empty_unique("judge.model", models, &invalid)?;
        let templates =
            non_empty_unique("judge.template", raw.judge.template.into_vec(), &invalid)?;
        let output = raw
            .judge
            .output
            .map(|o| {
                OutputKind::from_name(&o).ok_or_else(|| {
                    invalid(
                        "judge.output",
                        format!("{o:?} is not an output kind (expected \"label\", \"digit\" or \"json\")"),
                    )
                })
            })
            .transpose()?;
        let context_size = raw.judge.context_size.unwrap_or(8192);
        if !(256..=1 << 20).contains(&context_size) {
            return Err(invalid(
                "judge.context_size",
                format!("{context_size} must be between 256 and 1048576"),
            ));
        }
        let batch_size = raw.judge.batch_size.unwrap_or(8);
        if !(1..=256).contains(&batch_size) {
            return Err(invalid(
                "judge.batch_size",
                format!("{batch_size} must be between 1 and 256"),
            ));
        }

        let s = raw.sweep;
        let temperature = reals(Axis::Temperature, s.temperature, &invalid)?;
        let top_p = reals(Axis::TopP, s.top_p, &invalid)?;
        let max_tokens = counts(Axis::MaxTokens, s.max_tokens, &invalid)?;
        let few_shot = counts(Axis::FewShot, s.few_shot, &invalid)?;
        // No limit unless some are given.
        let few_shot_max_tokens = match s.few_shot_max_tokens {
            None => vec![None],
            values => counts(Axis::FewShotMaxTokens, values, &invalid)?
                .into_iter()
                .map(Some)
                .collect(),
        };
        let order = named(
            Axis::Order,
            s.order,
            Order::from_name,
            "an answer order",
            &invalid,
        )?;
        let constraint = named(
            Axis::Constraint,
            s.constraint,
            Constraint::from_name,
            "an output constraint",
            &invalid,
        )?;
        if backend == Backend::OpenAi && constraint.contains(&Constraint::Grammar) {
            return Err(invalid(
                "sweep.constraint",
                "\"grammar\" needs backend = \"llama\" (remote endpoints constrain JSON with json_schema)".into(),
            ));
        }
        let exact = raw.judge.exact.unwrap_or(false);
        if exact && output == Some(OutputKind::Json) {
            return Err(invalid(
                "judge.exact",
                "needs a one-token verdict: output = \"label\" or \"digit\", not \"json\"".into(),
            ));
        }
        let parallel = match raw.judge.parallel {
            None => 4,
            Some(n) if (1..=64).contains(&n) => n as usize,
            Some(n) => {
                return Err(invalid(
                    "judge.parallel",
                    format!("{n} must be between 1 and 64"),
                ))
            }
        };
        let repeats = ints(
            "sweep.repeats",
            vec![s.repeats.unwrap_or(1)],
            1,
            10_000,
            &invalid,
        )?[0];
        let seed = s.seed.unwrap_or(0);
        if seed < 0 {
            return Err(invalid(
                "sweep.seed",
                format!("{seed} must not be negative"),
            ));
        }
        let items = match raw.limits.items {
            None => None,
            Some(n) if n >= 1 => Some(n as usize),
            Some(n) => return Err(invalid("limits.items", format!("{n} must be at least 1"))),
        };

        Ok(Experiment {
            name,
            dataset: raw.dataset,
            judge: JudgeSpec {
                backend,
                models,
                templates,
                output,
                gpu_layers: raw.judge.gpu_layers,
                context_size,
                batch_size,
                exact,
                parallel,
                remote,
            },
            sweep: Sweep {
                temperature,
                top_p,
                max_tokens,
                few_shot,
                few_shot_max_tokens,
                order,
                constraint,
                repeats,
                seed: seed as u64,
            },
            limits: Limits { items },
        })
    }

    /// Every point of the grid, in a stable order: the product over the sweep's axes
    /// (`crate::sweep::Axis::ALL`: model, template, few-shot count, few-shot length,
    /// max_tokens, temperature, top_p, order, constraint; the last varies fastest).
    pub fn trials(&self) -> Vec<TrialParams> {
        crate::sweep::trials(self)
    }

    /// The most few-shot examples any trial needs: the size of the reserved pool.
    pub fn max_few_shot(&self) -> usize {
        self.sweep.few_shot.iter().copied().max().unwrap_or(0) as usize
    }
}

type Invalid<'a> = dyn Fn(&str, String) -> ExperimentError + 'a;

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

/// Distinct names, each read by `from_name`; `what` says what a name should be.
/// The sweep key of `axis`, as errors name it.
fn sweep_key(axis: Axis) -> String {
    format!("sweep.{}", axis.key())
}

/// The values of a choice axis (its default when absent), each read by `from_name`.
fn named<T>(
    axis: Axis,
    values: Option<OneOrMany<String>>,
    from_name: fn(&str) -> Option<T>,
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
    non_empty_unique(key, values, invalid)?
        .iter()
        .map(|v| {
            from_name(v)
                .ok_or_else(|| invalid(key, format!("{v:?} is not {what} (expected {expected})")))
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

    fn check_err(text: &str, expect: &str) {
        let err = Experiment::from_toml("e.toml", text)
            .unwrap_err()
            .to_string();
        assert!(err.contains(expect), "expected {expect:?} in:\n{err}");
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
            .all(|t| t.model == "default" && t.max_tokens == 4));
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
        assert_eq!(e.judge.models, vec!["default".to_string()]);
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
        assert!(e.judge.exact);
        assert_eq!(e.judge.parallel, 2);
        assert_eq!(e.trials().len(), 16);
        assert_eq!(e.trials()[1].constraint, Constraint::Grammar);
        // Written only when they differ from the defaults, so that older files and trials
        // keep their identity; parallel is speed only and never written.
        let json = serde_json::to_string(&e).unwrap();
        assert!(
            json.contains("\"exact\":true")
                && json.contains("\"constraint\":[\"none\",\"grammar\"]")
        );
        assert!(!json.contains("parallel"));
        let plain = serde_json::to_string(&Experiment::from_toml("e.toml", GRID).unwrap()).unwrap();
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
        check_err(
            &remote.replace(
                "template = \"pairwise\"",
                "template = \"pairwise\"\nexact = true",
            ),
            "judge.exact: is for backend = \"llama\" only",
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
            &GRID.replace("template = \"pairwise\"\n", ""),
            "missing field `template`",
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
        assert!(!serde_json::to_string(&plain).unwrap().contains("order"));
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
            ("demo.toml", include_str!("../../../examples/demo.toml")),
            (
                "position-bias.toml",
                include_str!("../../../examples/position-bias.toml"),
            ),
        ];
        for (name, text) in examples {
            let e = Experiment::from_toml(name, text).unwrap();
            assert!(!e.trials().is_empty(), "{name}");
        }
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

    #[test]
    fn remote_judges_are_configured_and_checked() {
        let e = Experiment::from_toml("e.toml", REMOTE).unwrap();
        assert_eq!(e.judge.backend, Backend::OpenAi);
        let r = e.judge.remote.as_ref().unwrap();
        assert_eq!(r.base_url, "http://127.0.0.1:8080/v1");
        assert_eq!(r.calls.concurrency, 2);
        assert_eq!(r.calls.api_key_env.as_deref(), Some("OPENAI_API_KEY"));
        assert!((r.calls.prices["smollm2"].cost(1_000_000, 0) - 0.15).abs() < 1e-12);
        assert_eq!(e.trials().len(), 2);
        // Speed, money and secrets are not part of the identity.
        let json = serde_json::to_string(&e).unwrap();
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
