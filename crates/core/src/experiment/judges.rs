//! The judges of an experiment, each with a name (what the `judge` axis ranges over), a
//! backend and that backend's settings. An experiment lists them as `[[judges]]`; one
//! written before named judges has a single `[judge]` table with one backend for all its
//! models, and is read as one judge per model, named by the model as written, so that its
//! trials and its identity stay what they were.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::{
    checked_name, non_empty_unique, ExperimentError, Invalid, OneOrMany, Price, RemoteCalls,
    RemoteSpec,
};

/// A judge of the experiment.
#[derive(Debug, Clone, PartialEq)]
pub struct NamedJudge {
    /// Its name in the `judge` axis, in trials and in every table.
    pub name: String,
    pub backend: JudgeBackend,
}

/// Where a judge runs, with what only that backend has.
#[derive(Debug, Clone, PartialEq)]
pub enum JudgeBackend {
    /// A GGUF file through llama.cpp.
    Llama(LocalJudge),
    /// A model served by an OpenAI-compatible endpoint.
    OpenAi(RemoteJudge),
}

#[derive(Debug, Clone, PartialEq)]
pub struct LocalJudge {
    /// `default` or a GGUF path.
    pub model: String,
    /// Layers to offload to a GPU; default: all when a GPU backend is compiled in. Speed
    /// only: left out of the identity.
    pub gpu_layers: Option<u32>,
    /// Context window in tokens (capped at the model's training context).
    pub context_size: u32,
    /// Verdicts read from the exact distribution of the first output token: one forward
    /// pass per prompt serves every temperature and top_p of the sweep. As written;
    /// unwritten, each trial is exact where that is valid ([`super::Experiment::exact`]).
    pub exact: Option<bool>,
    /// Sequences decoded together in one batch. Speed only.
    pub parallel: usize,
    /// Each call decoded alone from an empty cache (no shared prefix, one sequence at a
    /// time), so that an exact pass's distribution and a greedy verdict depend on their
    /// prompt alone, bit for bit, whatever was decoded before or beside them. Slower; left
    /// out of the identity, as `parallel` is.
    pub reproducible: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RemoteJudge {
    /// The model name the endpoint serves.
    pub model: String,
    pub endpoint: RemoteSpec,
    /// $ per million tokens, where known. Not part of the identity.
    pub price: Option<Price>,
    /// Verdicts read from the first token's most likely tokens and their log-probabilities
    /// (`logprobs`, `top_logprobs`): one call per prompt serves every temperature and top_p
    /// of the sweep. As written; unwritten, each trial is exact where that is valid and
    /// the server returns log-probabilities ([`super::Experiment::exact`]).
    pub exact: Option<bool>,
}

impl NamedJudge {
    pub fn local(&self) -> Option<&LocalJudge> {
        match &self.backend {
            JudgeBackend::Llama(l) => Some(l),
            JudgeBackend::OpenAi(_) => None,
        }
    }

    pub fn remote(&self) -> Option<&RemoteJudge> {
        match &self.backend {
            JudgeBackend::OpenAi(r) => Some(r),
            JudgeBackend::Llama(_) => None,
        }
    }

    /// Whether the file asks for exact verdicts (`exact = true`): then every trial of the
    /// judge reads its verdicts from the first token's exact distribution.
    pub fn written_exact(&self) -> bool {
        self.exact_as_written() == Some(true)
    }

    /// The judge's `exact` as the file writes it, either backend.
    pub fn exact_as_written(&self) -> Option<bool> {
        match &self.backend {
            JudgeBackend::Llama(l) => l.exact,
            JudgeBackend::OpenAi(r) => r.exact,
        }
    }

    /// What of the judge changes its verdicts, for the identity of a `[[judges]]`
    /// experiment.
    fn identity(&self) -> Value {
        match &self.backend {
            JudgeBackend::Llama(l) => {
                let mut v = json!({
                    "name": self.name,
                    "backend": "llama",
                    "model": l.model,
                    "context_size": l.context_size,
                });
                if l.exact == Some(true) {
                    v["exact"] = true.into();
                }
                v
            }
            JudgeBackend::OpenAi(r) => {
                let mut v = json!({
                    "name": self.name,
                    "backend": "openai",
                    "model": r.model,
                    "endpoint": r.endpoint,
                });
                if r.exact == Some(true) {
                    v["exact"] = true.into();
                }
                v
            }
        }
    }
}

/// The identity of a `[[judges]]` experiment's judges, in the order the axis sweeps them.
pub(super) fn identity(judges: &[NamedJudge]) -> Value {
    Value::Array(judges.iter().map(NamedJudge::identity).collect())
}

/// The judge table as an experiment before named judges serialised it (its shared
/// settings and one backend for every model), so that its identity hash is unchanged.
#[derive(Serialize)]
pub(super) struct SingleFormJudge<'a> {
    backend: &'static str,
    models: Vec<&'a str>,
    templates: &'a [String],
    output: Option<crate::OutputKind>,
    gpu_layers: Option<u32>,
    context_size: u32,
    batch_size: usize,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    exact: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    remote: Option<&'a RemoteSpec>,
}

impl<'a> SingleFormJudge<'a> {
    /// `judges` all share one backend and its settings: they came from one `[judge]` table.
    pub(super) fn new(
        judges: &'a [NamedJudge],
        templates: &'a [String],
        output: Option<crate::OutputKind>,
    ) -> SingleFormJudge<'a> {
        let first = &judges[0];
        SingleFormJudge {
            backend: match first.backend {
                JudgeBackend::Llama(_) => "llama",
                JudgeBackend::OpenAi(_) => "openai",
            },
            models: judges.iter().map(|j| j.name.as_str()).collect(),
            templates,
            output,
            gpu_layers: None,
            context_size: first.local().map_or(DEFAULT_CONTEXT, |l| l.context_size),
            batch_size: 0,
            exact: first.written_exact(),
            remote: first.remote().map(|r| &r.endpoint),
        }
    }
}

const DEFAULT_CONTEXT: u32 = 8192;

/// A judge table as written: `[judge]` (the shared settings, and in the single form the
/// one backend of all models) or one entry of `[[judges]]`.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawJudge {
    pub name: Option<String>,
    /// `[[judges]]`: a judge card (`judge.json`) this judge runs unchanged.
    pub card: Option<String>,
    pub backend: Option<String>,
    pub model: Option<OneOrMany<String>>,
    pub template: Option<OneOrMany<String>>,
    pub output: Option<String>,
    pub batch_size: Option<usize>,
    gpu_layers: Option<u32>,
    context_size: Option<u32>,
    exact: Option<bool>,
    parallel: Option<i64>,
    reproducible: Option<bool>,
    base_url: Option<OneOrMany<String>>,
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
    /// The single form: by model name.
    #[serde(default)]
    prices: BTreeMap<String, Price>,
    /// `[[judges]]`: this judge's price.
    price: Option<Price>,
}

impl RawJudge {
    /// The backend and model keys, set: what `[judge]` may not have beside `[[judges]]`.
    fn judge_keys(&self) -> Vec<&'static str> {
        let mut keys = self.backend_keys();
        for (key, given) in [
            ("backend", self.backend.is_some()),
            ("model", self.model.is_some()),
            ("name", self.name.is_some()),
        ] {
            if given {
                keys.push(key);
            }
        }
        keys
    }

    /// The keys of either backend's settings that are set.
    fn backend_keys(&self) -> Vec<&'static str> {
        let mut keys = self.remote_keys();
        keys.extend(self.local_keys());
        if self.exact.is_some() {
            keys.push("exact");
        }
        keys
    }

    fn local_keys(&self) -> Vec<&'static str> {
        [
            ("gpu_layers", self.gpu_layers.is_some()),
            ("context_size", self.context_size.is_some()),
            ("parallel", self.parallel.is_some()),
            ("reproducible", self.reproducible.is_some()),
        ]
        .into_iter()
        .filter_map(|(k, given)| given.then_some(k))
        .collect()
    }

    fn remote_keys(&self) -> Vec<&'static str> {
        [
            ("base_url", self.base_url.is_some()),
            ("api_key_env", self.api_key_env.is_some()),
            ("api_key_keyring", self.api_key_keyring.is_some()),
            ("stream", self.stream.is_some()),
            ("concurrency", self.concurrency.is_some()),
            ("requests_per_minute", self.requests_per_minute.is_some()),
            ("tokens_per_minute", self.tokens_per_minute.is_some()),
            ("timeout_s", self.timeout_s.is_some()),
            ("max_attempts", self.max_attempts.is_some()),
            ("top_logprobs", self.top_logprobs.is_some()),
            ("json_schema", self.json_schema.is_some()),
            ("stop", self.stop.is_some()),
            ("prices", !self.prices.is_empty()),
            ("price", self.price.is_some()),
        ]
        .into_iter()
        .filter_map(|(k, given)| given.then_some(k))
        .collect()
    }
}

/// The single form: every model of `[judge]` is a judge of its backend, named by the model
/// as written.
pub(super) fn single_form(
    raw: &RawJudge,
    invalid: &Invalid<'_>,
) -> Result<Vec<NamedJudge>, ExperimentError> {
    let key = |k: &str| format!("judge.{k}");
    if let Some(k) = [("name", raw.name.is_some()), ("price", raw.price.is_some())]
        .iter()
        .find_map(|(k, given)| given.then_some(*k))
    {
        return Err(invalid(
            &key(k),
            "belongs to a judge of [[judges]]; [judge] has the settings every judge shares".into(),
        ));
    }
    let remote = backend_is_remote(raw, "judge.backend", invalid)?;
    let models = match (&raw.model, remote) {
        (Some(m), _) => m.clone().into_vec(),
        (None, false) => vec!["default".to_string()],
        (None, true) => {
            return Err(invalid(
                "judge.model",
                "is required with backend = \"openai\": the model name the endpoint serves".into(),
            ))
        }
    };
    let models = non_empty_unique("judge.model", models, invalid)?;
    models
        .into_iter()
        .map(|model| {
            let price = raw.prices.get(&model).copied();
            Ok(NamedJudge {
                name: model.clone(),
                backend: settings(raw, "judge", remote, model, price, invalid)?,
            })
        })
        .collect()
}

/// A judge card's entry, `[[judges]] card = "judge.json"`: the experiment's one judge, a
/// local one whose model file is `model` (default: the default model), its template,
/// parameters and examples the card's ([`super::Experiment::with_card`]); only speed
/// settings beside it. Its name (default `card`) and the card's path as written.
pub(super) fn card_form(
    raws: &[RawJudge],
    shared: &RawJudge,
    invalid: &Invalid<'_>,
) -> Result<(NamedJudge, String), ExperimentError> {
    let [raw] = raws else {
        return Err(invalid(
            "judges",
            "a judge card is the experiment's one judge (a card beside other judges is not built yet)".into(),
        ));
    };
    let card = raw.card.clone().unwrap_or_default();
    if card.trim().is_empty() {
        return Err(invalid("judges[0].card", "is empty".into()));
    }
    let name = checked_name(
        "judges[0].name",
        raw.name.as_deref().unwrap_or("card"),
        "._-/:",
        invalid,
    )?;
    let key = |k: &str| format!("judges.{name}.{k}");
    let fixed = [
        ("backend", raw.backend.is_some()),
        ("template", raw.template.is_some()),
        ("output", raw.output.is_some()),
        ("context_size", raw.context_size.is_some()),
        ("exact", raw.exact.is_some()),
    ];
    if let Some((k, _)) = fixed.iter().find(|(_, given)| *given) {
        return Err(invalid(&key(k), "the card fixes it".into()));
    }
    if let Some(k) = raw.remote_keys().first() {
        return Err(invalid(
            &key(k),
            "a card of a remote judge is not built yet: cards run local judges".into(),
        ));
    }
    if let Some(k) = shared.judge_keys().first().copied().or_else(|| {
        [
            ("template", shared.template.is_some()),
            ("output", shared.output.is_some()),
        ]
        .into_iter()
        .find_map(|(k, given)| given.then_some(k))
    }) {
        return Err(invalid(&format!("judge.{k}"), "the card fixes it".into()));
    }
    let model = match &raw.model {
        Some(OneOrMany::One(m)) if !m.trim().is_empty() => m.clone(),
        None => "default".to_string(),
        Some(_) => {
            return Err(invalid(
                &key("model"),
                "names the one model file of the card's judge".into(),
            ))
        }
    };
    let backend = local_settings(raw, &key, model, invalid)?;
    Ok((NamedJudge { name, backend }, card))
}

/// The named form: each `[[judges]]` entry. `shared` is `[judge]`, which may then hold only
/// what every judge shares (templates, output, batch size).
pub(super) fn named_form(
    raws: &[RawJudge],
    shared: &RawJudge,
    invalid: &Invalid<'_>,
) -> Result<Vec<NamedJudge>, ExperimentError> {
    if let Some(k) = shared.judge_keys().first() {
        return Err(invalid(
            &format!("judge.{k}"),
            "belongs to each judge of [[judges]]; [judge] has only what they share (template, output, batch_size)".into(),
        ));
    }
    if raws.is_empty() {
        return Err(invalid("judges", "needs at least one judge".into()));
    }
    let mut out: Vec<NamedJudge> = Vec::new();
    for (i, raw) in raws.iter().enumerate() {
        let name = &checked_name(
            &format!("judges[{i}].name"),
            raw.name.as_deref().unwrap_or_default(),
            "._-/:",
            invalid,
        )?;
        if out.iter().any(|j| j.name == *name) {
            return Err(invalid(
                &format!("judges[{i}].name"),
                format!("{name:?} names two judges"),
            ));
        }
        let prefix = format!("judges.{name}");
        let shared_only = [
            ("template", raw.template.is_some()),
            ("output", raw.output.is_some()),
            ("batch_size", raw.batch_size.is_some()),
            ("prices", !raw.prices.is_empty()),
        ];
        if let Some((k, _)) = shared_only.iter().find(|(_, given)| *given) {
            let why = if *k == "prices" {
                "is the single [judge] table's; give each judge its own price = { input = …, output = … }"
            } else {
                "belongs in [judge], which every judge shares"
            };
            return Err(invalid(&format!("{prefix}.{k}"), why.into()));
        }
        let remote = backend_is_remote(raw, &format!("{prefix}.backend"), invalid)?;
        let model = match &raw.model {
            Some(OneOrMany::One(m)) if !m.trim().is_empty() => m.clone(),
            Some(OneOrMany::One(_)) => {
                return Err(invalid(&format!("{prefix}.model"), "is empty".into()))
            }
            Some(OneOrMany::Many(_)) => {
                return Err(invalid(
                    &format!("{prefix}.model"),
                    "names one model: list each model as a judge of its own".into(),
                ))
            }
            None if remote => {
                return Err(invalid(
                    &format!("{prefix}.model"),
                    "is required with backend = \"openai\": the model name the endpoint serves"
                        .into(),
                ))
            }
            None => "default".to_string(),
        };
        out.push(NamedJudge {
            name: name.clone(),
            backend: settings(raw, &prefix, remote, model, raw.price, invalid)?,
        });
    }
    Ok(out)
}

fn backend_is_remote(
    raw: &RawJudge,
    key: &str,
    invalid: &Invalid<'_>,
) -> Result<bool, ExperimentError> {
    match raw.backend.as_deref().unwrap_or("llama") {
        "llama" => Ok(false),
        "openai" => Ok(true),
        other => Err(invalid(
            key,
            format!("{other:?} is not a supported backend (expected \"llama\" or \"openai\")"),
        )),
    }
}

/// A local judge's settings: no remote key, a context and a `parallel` in range.
fn local_settings(
    raw: &RawJudge,
    key: &dyn Fn(&str) -> String,
    model: String,
    invalid: &Invalid<'_>,
) -> Result<JudgeBackend, ExperimentError> {
    if let Some(k) = raw.remote_keys().first() {
        return Err(invalid(&key(k), "is for backend = \"openai\" only".into()));
    }
    let context_size = raw.context_size.unwrap_or(DEFAULT_CONTEXT);
    if !(256..=1 << 20).contains(&context_size) {
        return Err(invalid(
            &key("context_size"),
            format!("{context_size} must be between 256 and 1048576"),
        ));
    }
    let parallel = match raw.parallel {
        None => 4,
        Some(n) if (1..=64).contains(&n) => n as usize,
        Some(n) => {
            return Err(invalid(
                &key("parallel"),
                format!("{n} must be between 1 and 64"),
            ))
        }
    };
    Ok(JudgeBackend::Llama(LocalJudge {
        model,
        gpu_layers: raw.gpu_layers,
        context_size,
        exact: raw.exact,
        parallel,
        reproducible: raw.reproducible.unwrap_or(false),
    }))
}

/// A remote judge's endpoints: one URL, or a pool of endpoints serving the same model.
/// The first names the judge (it is in the identity and the response cache's key); the
/// others only share its calls.
fn base_urls(
    raw: &RawJudge,
    key: &dyn Fn(&str) -> String,
    invalid: &Invalid<'_>,
) -> Result<Vec<String>, ExperimentError> {
    let urls: Vec<String> = match &raw.base_url {
        None => Vec::new(),
        Some(urls) => urls.clone().into_vec(),
    };
    let urls: Vec<String> = urls
        .iter()
        .map(|u| u.trim().trim_end_matches('/').to_string())
        .collect();
    if urls.is_empty() || urls.iter().all(String::is_empty) {
        return Err(invalid(
            &key("base_url"),
            "is required with backend = \"openai\" (e.g. \"https://api.openai.com/v1\")".into(),
        ));
    }
    for (i, url) in urls.iter().enumerate() {
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(invalid(
                &key("base_url"),
                format!("{url:?} must start with http:// or https://"),
            ));
        }
        if urls[..i].contains(url) {
            return Err(invalid(
                &key("base_url"),
                format!("{url:?} is listed twice"),
            ));
        }
    }
    Ok(urls)
}

/// A remote judge's API key settings (an environment variable's name, or a keychain
/// entry, not both) and its prices (non-negative).
fn check_key_and_prices(
    raw: &RawJudge,
    key: &dyn Fn(&str) -> String,
    invalid: &Invalid<'_>,
) -> Result<(), ExperimentError> {
    if let Some(env) = &raw.api_key_env {
        if env.is_empty() || !env.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(invalid(
                &key("api_key_env"),
                format!("{env:?} is not an environment variable name"),
            ));
        }
    }
    if raw.api_key_env.is_some() && raw.api_key_keyring.is_some() {
        return Err(invalid(
            &key("api_key_keyring"),
            "give api_key_env or api_key_keyring, not both".into(),
        ));
    }
    if let Some(name) = &raw.api_key_keyring {
        if name.trim().is_empty() {
            return Err(invalid(&key("api_key_keyring"), "is empty".into()));
        }
    }
    let priced: Vec<(String, &Price)> = match &raw.price {
        Some(p) => vec![(key("price"), p)],
        None => raw
            .prices
            .iter()
            .map(|(m, p)| (key(&format!("prices.{m}")), p))
            .collect(),
    };
    for (k, p) in priced {
        if !(p.input >= 0.0 && p.output >= 0.0 && p.input.is_finite() && p.output.is_finite()) {
            return Err(invalid(&k, "prices must be non-negative numbers".into()));
        }
    }
    Ok(())
}

/// One judge's backend settings from its table (`prefix` names it in errors).
fn settings(
    raw: &RawJudge,
    prefix: &str,
    remote: bool,
    model: String,
    price: Option<Price>,
    invalid: &Invalid<'_>,
) -> Result<JudgeBackend, ExperimentError> {
    let key = |k: &str| format!("{prefix}.{k}");
    if !remote {
        return local_settings(raw, &key, model, invalid);
    }
    if let Some(k) = raw.local_keys().first() {
        return Err(invalid(&key(k), "is for backend = \"llama\" only".into()));
    }
    let urls = base_urls(raw, &key, invalid)?;
    let count = |k: &str, value: Option<i64>, lo: i64, hi: i64| match value {
        None => Ok(None),
        Some(v) if (lo..=hi).contains(&v) => Ok(Some(v as u32)),
        Some(v) => Err(invalid(
            &key(k),
            format!("{v} must be between {lo} and {hi}"),
        )),
    };
    let defaults = RemoteCalls::default();
    let timeout_s = raw.timeout_s.unwrap_or(defaults.timeout_s);
    if !(timeout_s.is_finite() && (0.1..=3600.0).contains(&timeout_s)) {
        return Err(invalid(
            &key("timeout_s"),
            format!("{timeout_s} must be between 0.1 and 3600"),
        ));
    }
    check_key_and_prices(raw, &key, invalid)?;
    Ok(JudgeBackend::OpenAi(RemoteJudge {
        model,
        price,
        exact: raw.exact,
        endpoint: RemoteSpec {
            base_url: urls[0].clone(),
            top_logprobs: count("top_logprobs", raw.top_logprobs, 0, 20)?,
            json_schema: raw.json_schema.unwrap_or(false),
            stop: match &raw.stop {
                None => Vec::new(),
                Some(s) => s.clone().into_vec(),
            },
            calls: RemoteCalls {
                api_key_env: raw.api_key_env.clone(),
                api_key_keyring: raw.api_key_keyring.clone(),
                pool: urls[1..].to_vec(),
                stream: raw.stream.unwrap_or(defaults.stream),
                concurrency: count("concurrency", raw.concurrency, 1, 256)?
                    .map_or(defaults.concurrency, |c| c as usize),
                requests_per_minute: count(
                    "requests_per_minute",
                    raw.requests_per_minute,
                    1,
                    1_000_000,
                )?,
                tokens_per_minute: count(
                    "tokens_per_minute",
                    raw.tokens_per_minute,
                    1,
                    1_000_000_000,
                )?,
                timeout_s,
                max_attempts: count("max_attempts", raw.max_attempts, 1, 100)?
                    .unwrap_or(defaults.max_attempts),
            },
        },
    }))
}

/// `spec` (an experiment file's text) with `reproducible = true` on each of its local
/// judges: what an alignment (`judgelab align`) judges its candidates with, so that a
/// candidate's stored verdicts are what its judge gives run again anywhere.
pub fn reproducible_spec(spec: &str) -> Result<String, String> {
    let mut t: toml::Table = spec.parse().map_err(|e| format!("{e}"))?;
    let local = |j: &toml::Table| {
        j.get("backend")
            .and_then(|b| b.as_str())
            .is_none_or(|b| b == "llama")
    };
    let set = |j: &mut toml::Table| {
        if local(j) {
            j.insert("reproducible".into(), true.into());
        }
    };
    match t.get_mut("judges").and_then(toml::Value::as_array_mut) {
        Some(judges) => judges
            .iter_mut()
            .filter_map(toml::Value::as_table_mut)
            .for_each(set),
        None => {
            if let Some(j) = t.get_mut("judge").and_then(toml::Value::as_table_mut) {
                set(j);
            }
        }
    }
    toml::to_string(&t).map_err(|e| e.to_string())
}
