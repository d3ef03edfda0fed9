//! One proposer call: the parent's dev mistakes shown, the call stored before it is sent
//! (so that a run killed meanwhile counts it as spent), and its reply made into a
//! candidate trial or stored as rejected with its reason.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use judgelab_core::align::plan::Plan;
use judgelab_core::align::proposer::{self, Mistake, MISTAKE_CHARS};
use judgelab_core::align::{Candidate, Proposal};
use judgelab_core::metrics::{self, quality::Scored, Observation};
use judgelab_core::template::Template;
use judgelab_core::{Item, JudgeRequest, Message, Task};
use judgelab_store::{ExperimentRow, NewTrial, Store};

use super::setup::{judging, Source};
use crate::resolve::Resolved;
use crate::run::loaded::Judges;
use crate::{EngineError, RunEvent};

/// The dev verdicts of `observations` (units numbered in `dev`) that disagree with the
/// humans, `n` of them drawn with `seed`: what the proposer is shown. Only the dev items
/// are handed in, so no test item can reach it.
pub(super) fn mistakes(
    task: Task,
    dev: &[&Item],
    observations: &[Observation],
    n: usize,
    seed: u64,
) -> Vec<Mistake> {
    let (_, judged) = judgelab_core::trust::confidence::judged(task, observations);
    let wrong: Vec<(usize, judgelab_core::Verdict, Option<f64>)> = metrics::group(observations)
        .iter()
        .filter(|g| g.calls[0].repeat == 0)
        .filter_map(|g| {
            let verdict = g.verdict?;
            let right = Scored::new(task, g.calls[0].human, verdict.label()).correct();
            let confidence = judged
                .iter()
                .find(|j| j.unit == g.unit && j.repeat == 0)
                .and_then(|j| j.confidence);
            (!right).then_some((g.unit, verdict, confidence))
        })
        .collect();
    proposer::sample(&wrong, n, seed)
        .into_iter()
        .map(|&(unit, verdict, confidence)| {
            Mistake::new(dev[unit], verdict, confidence, MISTAKE_CHARS)
        })
        .collect()
}

/// What one rewrite needs: where it is stored and who proposes.
pub(super) struct Rewrite<'a> {
    pub store: &'a Store,
    pub alignment: &'a ExperimentRow,
    pub source: &'a Source,
    pub r: &'a Resolved,
    /// The judge identities of the candidates so far: a reply that makes one of them
    /// again is rejected.
    pub known: &'a std::collections::HashSet<String>,
    /// A reply whose prompts would pass its cap is rejected.
    pub plan: &'a Plan,
}

impl Rewrite<'_> {
    /// Sends (or, for one stored unanswered, sends again) `candidate`'s proposer call with
    /// `parent_template`, and stores its outcome: the candidate with its trial, or its
    /// rejection. The trial and template it makes, where it makes one.
    pub async fn propose(
        &self,
        judges: &mut Judges<'_>,
        mut candidate: Candidate,
        parent: &judgelab_store::TrialRow,
        seed: u32,
        on_event: &mut (dyn FnMut(RunEvent) + Send),
    ) -> Result<(Candidate, Option<(NewTrial, Template)>), EngineError> {
        let prompt = match candidate.proposal.as_mut() {
            Some(p) => {
                p.sends += 1;
                p.prompt.clone()
            }
            None => return Ok((candidate, None)),
        };
        self.store
            .add_candidate(self.alignment.id, &candidate, None)
            .await?;
        // The source's judges: the proposer may have no trial in the alignment.
        let judge = self
            .source
            .r
            .judges
            .iter()
            .find(|j| j.name() == self.source.proposer)
            .expect("the proposer is checked to be a judge");
        let loaded = judges.get(judge, on_event).await?;
        let (reply, cost_usd) =
            ask(loaded, prompt, seed, judge.remote().and_then(|j| j.price)).await?;
        let proposal = candidate.proposal.as_mut().expect("a rewrite's proposal");
        proposal.cost_usd = cost_usd;
        let made = match reply {
            Ok(text) => {
                proposal.reply = Some(text.clone());
                let parent_template = self.r.parts(&parent.params)?.template;
                self.made(&text, parent_template, parent)?
            }
            Err(message) => {
                proposal.error = Some(message);
                Err("the proposer's call failed".to_string())
            }
        };
        let (trial, rejected) = match made {
            Ok(child) => (child, None),
            Err(why) => (None, Some(why)),
        };
        candidate.rejected = rejected;
        if let Some((_, template)) = &trial {
            self.store.save_template(template).await?;
        }
        let row = self
            .store
            .add_candidate(self.alignment.id, &candidate, trial.as_ref().map(|t| &t.0))
            .await?;
        candidate.trial_id = row.map(|r| r.id);
        Ok((candidate, trial))
    }

    /// The trial a reply makes of `parent`, or why it makes none.
    fn made(
        &self,
        reply: &str,
        parent_template: &Template,
        parent: &judgelab_store::TrialRow,
    ) -> Result<Result<Option<(NewTrial, Template)>, String>, EngineError> {
        let revised = proposer::revise(parent_template, reply, judging(self.r), "candidate");
        let template = match revised {
            Ok(t) => Template::new(&super::moves::template_name(&t), &t.source),
            Err(why) => return Ok(Err(why.to_string())),
        };
        if template.hash == parent_template.hash {
            return Ok(Err("the reply changes nothing".into()));
        }
        let child = super::moves::child(
            self.r,
            &self.source.row,
            parent,
            super::moves::Step::Rewrite(&template),
        )?;
        match child {
            Some((trial, _)) if self.known.contains(&trial.judge_identity) => {
                Ok(Err("the reply makes a judge the search has already".into()))
            }
            Some((trial, template)) => {
                let row = &self.source.row;
                match super::price::over_cap(self.r, self.plan, row, &trial, &template)? {
                    Some(why) => Ok(Err(why)),
                    None => Ok(Ok(Some((trial, template)))),
                }
            }
            None => Ok(Ok(None)),
        }
    }
}

/// A new rewrite candidate of `parent_id`, its proposer prompt rendered, not yet sent.
pub(super) fn candidate(
    source: &Source,
    parent_template: &Template,
    (id, parent_id, generation): (u32, u32, u32),
    mistakes: &[Mistake],
) -> Result<Candidate, EngineError> {
    let prompt: Vec<Message> = proposer::prompt(
        &source.proposer_template,
        parent_template,
        judging(&source.r),
        mistakes,
    )?;
    Ok(Candidate {
        id,
        parent: Some(parent_id),
        generation,
        kind: judgelab_core::align::Move::Rewrite,
        trial_id: None,
        proposal: Some(Proposal {
            prompt,
            reply: None,
            error: None,
            cost_usd: None,
            sends: 0,
        }),
        rejected: None,
    })
}

/// The proposer's reply to `messages`: its text, or why the call failed; and what its
/// usage cost at `price`, where it has one.
async fn ask(
    judge: Arc<dyn judgelab_core::Judge>,
    messages: Vec<Message>,
    seed: u32,
    price: Option<judgelab_core::experiment::Price>,
) -> Result<(Result<String, String>, Option<f64>), EngineError> {
    let sampling = judgelab_core::judge::Sampling {
        temperature: 0.7,
        top_p: 0.95,
        max_tokens: super::price::PROPOSER_MAX_TOKENS,
        seed,
    };
    tokio::task::spawn_blocking(move || {
        let mut out = (Err("the proposer returned nothing".to_string()), None);
        let cancel = Arc::new(AtomicBool::new(false));
        judge.judge_batch(
            vec![JudgeRequest::new(0, messages, sampling)],
            &cancel,
            &mut |response| {
                out = match response.result {
                    Ok(c) => {
                        let cost = price.map(|p| p.cost(c.prompt_tokens, c.completion_tokens));
                        (Ok(c.text), cost)
                    }
                    Err(e) => (Err(e.message), None),
                };
            },
        );
        out
    })
    .await
    .map_err(|e| EngineError::Judge(format!("the proposer's thread panicked: {e}")))
}
