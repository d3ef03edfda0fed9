//! From what a run is missing to the calls that judge it, and from each response back to
//! the verdict rows it answers.
//!
//! Normally a call answers one verdict: one (trial, item, repeat, answer order). Where a
//! trial's verdicts are exact (a local judge's logits, or a remote judge's `top_logprobs`),
//! trials that show that judge the same prompts — they differ only
//! in temperature, top_p or max_tokens — form one [`Group`], and one call per (item,
//! answer order) answers every missing verdict of the group, repeats included: a
//! temperature × top_p grid costs the forward passes of one point.
//!
//! A remote judge's trials that follow one another form one group too, each call with its
//! own trial's prompt: the judge is handed all their calls at once and keeps its
//! `concurrency` in flight from the first call of the first trial to the last of the
//! last, where a group per trial would leave the endpoint idle as each trial drained.
//! Calls of the group that send the same request (trials that differ only in the load
//! their latency is measured at) are made once, and the response answers each of them.

use std::collections::{BTreeMap, HashMap, HashSet};

use judgelab_core::experiment::RemoteJudge;
use judgelab_core::judge::{Completion, StopReason};
use judgelab_core::results::{Outcome, VerdictRecord};
use judgelab_core::rng::mix;
use judgelab_core::rubric::Asked;
use judgelab_core::sampling::VerdictDistribution;
use judgelab_core::verdict::{self, FailureKind, Verdict};
use judgelab_core::{
    Choice, Constraint, Item, ItemText, JudgeRequest, JudgeResponse, Label, Message, OutputKind,
    Sampling, Task,
};
use judgelab_store::{DoneKey, TrialRow};

use crate::exact::{Readers, TrialDistribution};
use crate::inputs::Shortened;
use crate::prompt::{Asking, PromptInput};
use crate::resolve::{Resolved, Trial};
use crate::EngineError;

/// A verdict to judge: an item, a repeat, whether its answers are shown swapped, and for
/// a checklist the criterion it asks (an index into the rubric).
#[derive(Clone, Copy)]
pub(crate) struct Call<'a> {
    pub item: ItemText<'a>,
    pub repeat: u32,
    pub swapped: bool,
    pub criterion: Option<usize>,
    /// What the trial's input budget shortened of the item (`crate::inputs`); none
    /// without one. What its summaries cost rides on the item's first call only.
    pub shortened: Option<Shortened>,
}

/// The calls of `trial` on `item` (as shown, with what was `shortened` of it) that `done`
/// does not hold: one per repeat and answer order, and in a checklist one per criterion
/// of each, a verdict's criteria one after another (so that they share the item's prefix).
/// The first of them all (done or not) carries what the item's summaries cost.
pub(crate) fn calls_of<'a>(
    r: &Resolved,
    trial: &TrialRow,
    (item, shortened): (ItemText<'a>, Option<Shortened>),
    done: &HashSet<DoneKey>,
) -> Vec<Call<'a>> {
    let asked = r.asked_apart(&trial.params);
    let mut calls = Vec::new();
    let mut first = true;
    for repeat in 0..r.experiment.sweep.repeats {
        for &swapped in trial.params.order.calls() {
            for &criterion in &asked {
                let name = criterion.map_or("", |i| r.checklist[i].name.as_str());
                let shortened = shortened.map(|s| Shortened {
                    written: s.written.filter(|_| first),
                    ..s
                });
                first = false;
                if !done.contains(&DoneKey::new(item.id, repeat, swapped, name)) {
                    calls.push(Call {
                        item,
                        repeat,
                        swapped,
                        criterion,
                        shortened,
                    });
                }
            }
        }
    }
    calls
}

/// Trials whose calls are made together, each with its missing calls.
pub(crate) struct Group<'a> {
    pub trials: Vec<(&'a Trial<'a>, Vec<Call<'a>>)>,
    /// Verdicts come from first-token distributions.
    pub exact: bool,
}

impl<'a> Group<'a> {
    pub fn first(&self) -> &'a Trial<'a> {
        self.trials[0].0
    }

    /// The calls judging the group makes, at most: an exact group's one per (item, answer
    /// order, criterion) that any of its trials misses.
    pub fn n_calls(&self) -> usize {
        let calls = self.trials.iter().flat_map(|(_, calls)| calls);
        match self.exact {
            true => calls
                .map(|c| (c.item.id, c.swapped, c.criterion))
                .collect::<HashSet<_>>()
                .len(),
            false => calls.count(),
        }
    }
}

/// Groups trials that share their prompts when their judge's verdicts are exact (`exact`
/// says which), and consecutive trials of the same remote judge; otherwise each trial with anything missing is a group of its own. Trial
/// order is kept.
pub(crate) fn groups<'a>(
    missing: Vec<(&'a Trial<'a>, Vec<Call<'a>>)>,
    exact: impl Fn(&Trial) -> bool,
) -> Vec<Group<'a>> {
    let mut out: Vec<Group<'a>> = Vec::new();
    for (trial, todo) in missing {
        if todo.is_empty() {
            continue;
        }
        let exact = exact(trial);
        if exact {
            if let Some(group) = out.iter_mut().find(|g| same_prompts(g.first(), trial)) {
                group.trials.push((trial, todo));
                continue;
            }
        } else if trial.judge.remote().is_some() {
            if let Some(group) = out
                .last_mut()
                .filter(|g| !g.exact && g.first().params.judge == trial.params.judge)
            {
                group.trials.push((trial, todo));
                continue;
            }
        }
        out.push(Group {
            trials: vec![(trial, todo)],
            exact,
        });
    }
    out
}

fn same_prompts(a: &TrialRow, b: &TrialRow) -> bool {
    judgelab_core::sweep::same_prompts(&a.params, &b.params) && a.examples == b.examples
}

/// A call waiting for its response.
pub(crate) struct Pending {
    pub item_id: String,
    pub swapped: bool,
    /// The criterion a checklist call asks, an index into the rubric.
    pub criterion: Option<usize>,
    pub prompt_hash: String,
    /// Remote calls only: the response cache's key, a hash of (endpoint, model, messages,
    /// sampling parameters, seed, repeat).
    pub cache_key: Option<String>,
    /// The verdicts its response answers.
    pub targets: Vec<Target>,
}

/// One verdict a call answers: a trial of the group (by index) and a repeat.
pub(crate) struct Target {
    pub trial: usize,
    pub repeat: u32,
    pub seed: u32,
    /// What its trial's budget shortened of the inputs (`Call::shortened`): trials at two
    /// levels send one request for an item that fits both, each with its own.
    pub shortened: Option<Shortened>,
}

/// The seed of a verdict. A swapped call mixes one more part into it; calls in dataset
/// order keep the seeds they had before answer orders existed.
pub(crate) fn seed(r: &Resolved, item_id: &str, repeat: u32, swapped: bool) -> u32 {
    let mut parts = vec![
        r.experiment.sweep.seed,
        judgelab_core::hash::stable_u64(item_id),
        repeat as u64,
    ];
    if swapped {
        parts.push(1);
    }
    mix(&parts) as u32
}

/// The calls of a group, keyed by their index in the returned `Pending` list.
pub(crate) fn prepare(
    r: &Resolved,
    group: &Group<'_>,
    index: &HashMap<&str, &Item>,
) -> Result<(Vec<Pending>, Vec<JudgeRequest>), EngineError> {
    // What each trial shows its judge: an exact group's trials all show the same.
    let examples: Vec<Vec<&Item>> = group
        .trials
        .iter()
        .map(|(t, _)| t.examples.iter().map(|id| index[id.as_str()]).collect())
        .collect();
    let shown = |trial_idx: usize, criterion: Option<usize>| {
        let trial = group.trials[trial_idx].0;
        let params = &trial.params;
        let asked = match criterion {
            Some(i) => &r.checklist[i..=i],
            None => &r.rubric[..],
        };
        let grammar =
            (params.constraint == Constraint::Grammar).then(|| grammar(r, asked, criterion));
        let input = PromptInput {
            task: r.dataset.task,
            output: r.output,
            allow_tie: r.allow_tie(),
            template: trial.template,
            examples: &examples[trial_idx],
            rubric: Asking::of(params.style, asked),
        };
        (input, grammar)
    };
    let mut pending: Vec<Pending> = Vec::new();
    let mut requests: Vec<JudgeRequest> = Vec::new();
    // Exact groups: the call of each (item, answer order, criterion).
    let mut passes: HashMap<(&str, bool, Option<usize>), usize> = HashMap::new();
    // Remote calls: the call of each response cache key. Trials that differ only in the
    // load their latency is measured at send the same requests, and one answers them all.
    let mut asked: HashMap<String, usize> = HashMap::new();
    for (trial_idx, (trial, todo)) in group.trials.iter().enumerate() {
        let p = &trial.params;
        for call in todo {
            let (shown, grammar) = shown(trial_idx, call.criterion);
            let target = Target {
                trial: trial_idx,
                repeat: call.repeat,
                seed: seed(r, call.item.id, call.repeat, call.swapped),
                shortened: call.shortened,
            };
            if group.exact {
                let pass = (call.item.id, call.swapped, call.criterion);
                if let Some(&key) = passes.get(&pass) {
                    pending[key].targets.push(target);
                    continue;
                }
                passes.insert(pass, pending.len());
            }
            let messages = shown.render(call.item, call.swapped)?;
            let sampling = if group.exact {
                // One pass, nothing generated: the logits are the answer.
                Sampling {
                    temperature: 0.0,
                    top_p: 1.0,
                    max_tokens: 0,
                    seed: 0,
                }
            } else {
                Sampling {
                    temperature: p.temperature,
                    top_p: p.top_p,
                    max_tokens: p.max_tokens,
                    seed: target.seed,
                }
            };
            let cache_key = trial
                .judge
                .remote()
                .map(|remote| cache_key(remote, &messages, &sampling, call.repeat));
            if let Some(cache_key) = &cache_key {
                if let Some(&key) = asked.get(cache_key) {
                    pending[key].targets.push(target);
                    continue;
                }
                asked.insert(cache_key.clone(), pending.len());
            }
            let key = pending.len();
            pending.push(Pending {
                item_id: call.item.id.to_string(),
                swapped: call.swapped,
                criterion: call.criterion,
                prompt_hash: judgelab_core::hash::prompt_hash(&messages),
                cache_key,
                targets: vec![target],
            });
            requests.push(JudgeRequest {
                key,
                messages,
                sampling,
                logits: group.exact,
                grammar: if group.exact { None } else { grammar.clone() },
                uncached: false,
            });
        }
    }
    Ok((pending, requests))
}

/// The GBNF grammar of a call's answer: a verdict, a rubric's criteria, or one criterion of
/// a checklist (`criterion`: its index among the checklist's calls).
fn grammar(r: &Resolved, asked: &[Asked], criterion: Option<usize>) -> String {
    match (criterion, r.output) {
        (None, _) if r.rubric.is_empty() => {
            verdict::grammar(r.output, r.dataset.task, r.allow_tie())
        }
        // A yes/no item is answered yes or no, whatever the output.
        (Some(_), _) if asked[0].item.is_some() => "root ::= \"yes\" | \"no\"\n".into(),
        // A checklist answer is the criterion's value alone, or its JSON object.
        (Some(_), kind) if kind != OutputKind::Json => {
            verdict::grammar(kind, asked[0].task, r.allow_tie())
        }
        _ => judgelab_core::rubric::grammar(r.output, asked, r.allow_tie()),
    }
}

/// A remote call's response cache key: what the endpoint is sent, so that a judge renamed
/// keeps its answers.
fn cache_key(
    remote: &RemoteJudge,
    messages: &[Message],
    sampling: &Sampling,
    repeat: u32,
) -> String {
    let endpoint = &remote.endpoint;
    judgelab_core::hash::sha256_hex(
        serde_json::json!({
            "base_url": endpoint.base_url,
            "model": remote.model,
            "messages": messages,
            "sampling": sampling,
            "repeat": repeat,
            "top_logprobs": endpoint.top_logprobs,
            "json_schema": endpoint.json_schema,
            "stop": endpoint.stop,
        })
        .to_string(),
    )
}

/// Why a remote exact call failed where its server answered without log-probabilities.
pub(crate) const NO_LOGPROBS: &str = "the server returned no log-probabilities (logprobs, \
     top_logprobs) for an exact verdict; exact = false in the judge's table ([judge] or \
     [[judges]]) generates instead";

/// The records a response answers, each with the index of its trial in the group.
pub(crate) fn rows(
    r: &Resolved,
    group: &Group<'_>,
    p: &Pending,
    response: &JudgeResponse,
    readers: Option<&Readers>,
) -> Vec<(usize, VerdictRecord)> {
    let reader = readers.map(|rs| rs.get(p.criterion));
    let mut per_trial: HashMap<usize, (TrialDistribution, VerdictDistribution)> = HashMap::new();
    let pass = match (&response.result, reader) {
        (Ok(c), Some(reader)) => reader.pass(c),
        _ => None,
    };
    let framed = |d: &VerdictDistribution| VerdictDistribution {
        labels: d
            .labels
            .iter()
            .map(|&(label, prob)| (unswap_label(label, p.swapped), prob))
            .collect(),
        failed: d.failed,
    };
    // What the model believes, whatever a trial samples with: the pass's distribution at
    // temperature 1 over every token (after a grammar's mask), once per pass.
    let belief = pass
        .as_ref()
        .map(|pass| framed(&pass.distribution(1.0, 1.0).verdicts));
    p.targets
        .iter()
        .map(|t| {
            let trial = group.trials[t.trial].0;
            let record = |outcome: Outcome| VerdictRecord {
                criterion: p
                    .criterion
                    .map_or_else(String::new, |i| r.checklist[i].name.clone()),
                input_cut: t.shortened.map(|s| s.cut),
                summaries: t.shortened.and_then(|s| s.written),
                ..VerdictRecord::new(
                    trial.id,
                    &p.item_id,
                    t.repeat,
                    p.swapped,
                    t.seed,
                    &p.prompt_hash,
                    outcome,
                )
            };
            let c = match &response.result {
                Ok(c) => c,
                Err(e) => {
                    let row = VerdictRecord {
                        attempts: e.attempts,
                        ..record(Outcome::CallFailed(e.message.clone()))
                    };
                    return (t.trial, row);
                }
            };
            let judged = |v: Verdict| Outcome::Judged(unswap(v, p.swapped));
            // A remote call's price, whole on each trial's row it answers (its first repeat's,
            // for an exact pass: the repeats only draw again): what the trial would have paid
            // alone. A run's spending counts an exact pass once.
            let priced = !group.exact || t.repeat == 0;
            let cost_usd = trial
                .judge
                .remote()
                .and_then(|remote| remote.price)
                .map(|price| price.cost(c.prompt_tokens, c.completion_tokens))
                .map(|usd| if priced { usd } else { 0.0 });
            let row = match (&pass, reader, c.stop) {
                (_, _, StopReason::PromptTooLong) => VerdictRecord {
                    raw_output: Some(String::new()),
                    exact: group.exact,
                    ..measured(
                        record(judged(Verdict::Failed(FailureKind::PromptTooLong))),
                        c,
                    )
                },
                (Some(pass), _, _) => {
                    // Each trial's distribution once per pass; its repeats only draw.
                    let (d, in_frame) = per_trial.entry(t.trial).or_insert_with(|| {
                        let d = pass.distribution(trial.params.temperature, trial.params.top_p);
                        let in_frame = framed(&d.verdicts);
                        (d, in_frame)
                    });
                    let (text, verdict) = pass.draw(d, t.seed);
                    VerdictRecord {
                        raw_output: Some(text),
                        // The verdict is one token, read rather than generated.
                        completion_tokens: 1,
                        exact: true,
                        distribution: Some(in_frame.clone()),
                        belief: belief.clone(),
                        uncovered: pass.uncovered(),
                        cost_usd,
                        ..measured(record(judged(verdict)), c)
                    }
                }
                (None, Some(_), _) if trial.judge.remote().is_some() => {
                    record(Outcome::CallFailed(NO_LOGPROBS.into()))
                }
                (None, Some(_), _) => record(Outcome::CallFailed(
                    "the judge returned no logits for an exact verdict".into(),
                )),
                (_, None, stop) => {
                    let truncated = stop == StopReason::MaxTokens;
                    let (v, criteria) = parsed(r, p.criterion, &c.text, truncated);
                    VerdictRecord {
                        criteria,
                        raw_output: Some(c.text.clone()),
                        cost_usd,
                        logprobs: c.logprobs.clone(),
                        ..measured(record(judged(v)), c)
                    }
                }
            };
            (t.trial, row)
        })
        .collect()
}

/// What the call measured: tokens, timing, attempts.
fn measured(base: VerdictRecord, c: &Completion) -> VerdictRecord {
    VerdictRecord {
        prompt_tokens: c.prompt_tokens,
        completion_tokens: c.completion_tokens,
        latency_ms: Some(c.latency_ms),
        ttft_ms: c.ttft_ms,
        cached_tokens: c.cached_tokens,
        attempts: c.attempts,
        endpoint: c.endpoint.clone(),
        ..base
    }
}

/// The judge named positions; the record names the dataset's answers.
/// A generated answer's verdict, and its verdict per criterion for a rubric: the call's
/// verdict is then the criteria's unweighted aggregate on the item's scale
/// ([`judgelab_core::rubric::aggregate`]). A checklist call's verdict is its criterion's
/// value, in that criterion's frame (a yes/no item's: 1 or 0).
fn parsed(
    r: &Resolved,
    criterion: Option<usize>,
    text: &str,
    truncated: bool,
) -> (Verdict, BTreeMap<String, Verdict>) {
    if let Some(i) = criterion {
        let v = judgelab_core::rubric::parse_one(r.output, &r.checklist[i], text, truncated);
        return (v, BTreeMap::new());
    }
    match r.dataset.task {
        Task::Single {
            scale_min,
            scale_max,
        } if !r.rubric.is_empty() => {
            let criteria = judgelab_core::rubric::parse(&r.rubric, text, truncated);
            let v = judgelab_core::rubric::aggregate(&r.rubric, &criteria, (scale_min, scale_max));
            (v, criteria)
        }
        task => (
            verdict::parse(r.output, task, text, truncated),
            BTreeMap::new(),
        ),
    }
}

fn unswap(verdict: Verdict, swapped: bool) -> Verdict {
    match verdict {
        Verdict::Parsed(label) => Verdict::Parsed(unswap_label(label, swapped)),
        failed => failed,
    }
}

fn unswap_label(label: Label, swapped: bool) -> Label {
    match label {
        Label::Choice(Choice::A) if swapped => Label::Choice(Choice::B),
        Label::Choice(Choice::B) if swapped => Label::Choice(Choice::A),
        other => other,
    }
}
