//! Where an alignment starts: its source experiment and trial, checked; its plan; and its
//! own experiment, created on the first run (the start trial's verdicts copied) and read
//! back with its candidates on every later one.

use judgelab_core::align::plan::{self, Child, Plan, Shape};
use judgelab_core::align::proposer::{self, Judging};
use judgelab_core::align::{Candidate, Move};
use judgelab_core::template::Template;
use judgelab_store::{ExperimentRow, NewExperiment, NewTrial, Store, TrialRow};

use super::{price, AlignRequest};
use crate::resolve::{resolve_stored, Resolved};
use crate::EngineError;

/// The source of an alignment, read and checked.
pub(super) struct Source {
    pub row: ExperimentRow,
    pub r: Resolved,
    pub trial: TrialRow,
    /// The proposer: a judge of the experiment, and its template.
    pub proposer: String,
    pub proposer_template: Template,
    /// The start's dev verdicts are all stored (they are copied, not judged again).
    pub start_judged: bool,
}

impl Source {
    pub async fn open(store: &Store, request: &AlignRequest) -> Result<Source, EngineError> {
        let (row, _) = crate::stored_experiment(store, &request.experiment).await?;
        let invalid = |message: String| EngineError::Invalid {
            path: row.name.clone(),
            message,
        };
        let mut r = resolve_stored(store, &row).await?;
        // The alignment keeps to its own budget, not to the source's limits.
        r.experiment.limits.budget = Default::default();
        let trial = store
            .trials(row.id)
            .await?
            .into_iter()
            .find(|t| t.id == request.trial)
            .ok_or_else(|| invalid(format!("it has no trial #{}", request.trial)))?;
        if row.test.is_empty() {
            return Err(invalid(
                "align confirms its best judge on a test split, which this experiment has not: add `test = N` to its [limits] and run it again".into(),
            ));
        }
        let proposer = request
            .proposer
            .clone()
            .unwrap_or_else(|| trial.params.judge.clone());
        if !r.judges.iter().any(|j| j.name() == proposer) {
            return Err(invalid(format!(
                "the proposer {proposer:?} is not a judge of the experiment"
            )));
        }
        let proposer_template = match &request.proposer_template {
            Some(path) => {
                let source = std::fs::read_to_string(path).map_err(|source| EngineError::Io {
                    path: path.display().to_string(),
                    source,
                })?;
                Template::new(&path.display().to_string(), &source)
            }
            None => Template::new("align_proposer", proposer::BUILTIN),
        };
        let judging = judging(&r);
        proposer::check(&proposer_template, judging)?;
        let dev: std::collections::HashSet<&str> = row.judged.iter().map(String::as_str).collect();
        let done = store.done_keys(trial.id).await?;
        let on_dev = done
            .iter()
            .filter(|k| dev.contains(k.item_id.as_str()))
            .count();
        let start_judged = on_dev >= row.judged.len() * calls_per_item(&r, &trial);
        Ok(Source {
            row,
            r,
            trial,
            proposer,
            proposer_template,
            start_judged,
        })
    }

    pub fn alignment_name(&self) -> String {
        format!("{}-align-{}", self.row.name, self.trial.id)
    }

    /// The plan of the search `request` asks for.
    pub fn plan(&self, request: &AlignRequest) -> Result<Plan, EngineError> {
        let per_item = calls_per_item(&self.r, &self.trial) as u32;
        let children: Vec<Child> = super::moves::kinds(&self.r, &self.row, &self.trial.params)
            .into_iter()
            .map(|kind| Child {
                kind,
                calls_per_item: match kind {
                    Move::Order => 2 * per_item,
                    _ => per_item,
                },
                proposer_calls: u32::from(kind == Move::Rewrite),
            })
            .collect();
        let shape = Shape {
            n_dev: self.row.judged.len(),
            n_test: self.row.test.len(),
            start_calls_per_item: per_item,
            start_judged: self.start_judged,
            parents: request.parents.max(1),
            children,
            max_generations: request.max_generations,
            usd_per_call: None,
            usd_per_proposer_call: None,
        };
        let invalid = |message: String| EngineError::Invalid {
            path: self.alignment_name(),
            message,
        };
        let (judge, proposer) = price::prices(&self.r, &self.trial.params, &self.proposer)?;
        if judge.is_none() && proposer.is_none() {
            if request.budget.usd.is_some() {
                return Err(invalid(format!("a budget in dollars needs a price: neither the trial's judge {:?} nor the proposer {:?} has one (a remote judge's `price = {{ input = …, output = … }}`, dollars per million tokens); give the budget in calls (--budget-calls)", self.trial.params.judge, self.proposer)));
            }
            return plan::plan(&shape, request.budget).map_err(|e| invalid(e.to_string()));
        }
        let (judge_cap, proposer_cap) = price::caps(&price::Start {
            r: &self.r,
            row: &self.row,
            trial: &self.trial,
            proposer_template: &self.proposer_template,
            judging: judging(&self.r),
            mistakes: request.mistakes,
        })?;
        let max_tokens = self.trial.params.max_tokens;
        let shape = Shape {
            usd_per_call: judge.map(|p| p.cost(judge_cap as u32, max_tokens)),
            usd_per_proposer_call: proposer
                .map(|p| p.cost(proposer_cap as u32, price::PROPOSER_MAX_TOKENS)),
            ..shape
        };
        let plan = plan::plan(&shape, request.budget).map_err(|e| invalid(e.to_string()))?;
        Ok(Plan {
            // Held where the proposer alone has a price too: its prompt shows the template.
            prompt_cap: Some(judge_cap),
            proposer_prompt_cap: proposer.map(|_| proposer_cap),
            ..plan
        })
    }

    /// The alignment's experiment: created on the first run; its start (the source trial,
    /// its verdicts copied) added where it has none yet, and its copies made again where a
    /// run stopped between the steps (each is kept where it is stored already).
    pub async fn alignment(&self, store: &Store) -> Result<ExperimentRow, EngineError> {
        let name = self.alignment_name();
        let row = match store.experiment_by_name(&name).await? {
            Some(row) if row.content_hash == self.content_hash() => row,
            Some(_) => {
                return Err(EngineError::Invalid {
                    path: name,
                    message: "an experiment of this name exists and is not this alignment (its source changed?): delete it, or align from another trial".into(),
                })
            }
            None => {
                let new = NewExperiment {
                    name,
                    content_hash: self.content_hash(),
                    // Its candidates' verdicts are what their judges give run again.
                    spec: judgelab_core::experiment::reproducible_spec(&self.row.spec)
                        .map_err(|message| EngineError::Invalid {
                            path: self.row.name.clone(),
                            message,
                        })?,
                    dataset_id: self.row.dataset_id,
                    pool: self.row.pool.clone(),
                    judged: self.row.judged.clone(),
                    test: self.row.test.clone(),
                    card: None,
                };
                store.create_experiment(&new, &[], None).await?
            }
        };
        let start = match store.candidates(row.id).await?.first() {
            Some(c) => c.trial_id,
            None => self.add_start(store, &row).await?,
        };
        if let Some(start) = start {
            store.copy_verdicts(self.trial.id, start).await?;
        }
        Ok(row)
    }

    /// Stores the start: the source trial as the alignment's first candidate.
    async fn add_start(
        &self,
        store: &Store,
        row: &ExperimentRow,
    ) -> Result<Option<i64>, EngineError> {
        let start = Candidate {
            id: 0,
            parent: None,
            generation: 0,
            kind: Move::Start,
            trial_id: None,
            proposal: None,
            rejected: None,
        };
        let t = &self.trial;
        let new = NewTrial {
            params: t.params.clone(),
            template_hash: t.template_hash.clone(),
            model_path: t.model_path.clone(),
            model_sha256: t.model_sha256.clone(),
            examples: t.examples.clone(),
            judge_identity: t.judge_identity.clone().unwrap_or_default(),
        };
        let trial = store.add_candidate(row.id, &start, Some(&new)).await?;
        Ok(trial.map(|t| t.id))
    }

    /// What makes this alignment this one: its source's content and trial, and the
    /// proposer with its template. A budget is not: a larger one continues a search.
    fn content_hash(&self) -> String {
        judgelab_core::hash::sha256_hex(format!(
            "align\n{}\n{}\n{}\n{}",
            self.row.content_hash, self.trial.trial_idx, self.proposer, self.proposer_template.hash
        ))
    }
}

/// What the source's judges are, as the proposer's replies are checked against.
pub(super) fn judging(r: &Resolved) -> Judging {
    Judging {
        task: r.dataset.task,
        output: r.output,
        allow_tie: r.allow_tie(),
        references: r.dataset.items.iter().any(|i| i.reference.is_some()),
    }
}

/// The calls a trial makes per item: one per repeat and answer order, and in a checklist
/// one per criterion of each.
pub(super) fn calls_per_item(r: &Resolved, t: &TrialRow) -> usize {
    r.experiment.sweep.repeats as usize
        * t.params.order.calls().len()
        * r.asked_apart(&t.params).len()
}

/// The alignment's experiment resolved with its candidates' templates, and no budget of
/// its source's.
pub(super) async fn resolved(
    store: &Store,
    alignment: &ExperimentRow,
) -> Result<Resolved, EngineError> {
    let mut r = resolve_stored(store, alignment).await?;
    r.experiment.limits.budget = Default::default();
    Ok(r)
}
