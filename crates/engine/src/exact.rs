//! Exact verdicts: the verdict of a one-token answer read from the first output token's
//! distribution, for every (temperature, top_p) of a sweep from one forward pass: a local
//! judge's logits over its whole vocabulary, or the most likely tokens and their
//! log-probabilities a server returns for one call (`Ranked::top`: top_p cuts by their
//! true mass; the mass they leave out is the pass's `uncovered`, a bound on the error at
//! temperatures up to 1).
//!
//! Every vocabulary token is parsed once as if it were the whole output, so variants such
//! as `4` and ` 4` read as the same label and the rest as failures. Each trial's exact
//! distribution comes from `core::sampling` (top_p, then temperature, as llama.cpp's
//! chain), and the row's verdict is a seeded draw from it. The draw of a call uses the
//! call's seed alone, so trials that differ only in temperature or top_p draw with the same
//! uniform number: their differences are the sampling's, not the dice's.
//!
//! A checklist asks one criterion per call ([`judgelab_core::rubric`]), each answered with
//! one value on the criterion's own scale: its calls are read by a reader per criterion
//! ([`Readers`]), so a criterion's distribution, G-Eval score and temperature × top_p grid
//! come from one pass as a single label's do. A rubric's answer has a value per criterion
//! and is generated.
//!
//! With `constraint = "grammar"`, the tokens whose text is not exactly a valid verdict are
//! removed before top_p, as the grammar sampler does before the chain. (The grammar
//! sampler would also admit a token that only begins a verdict, such as `t` of `tie`, and
//! continue; a one-token verdict cannot, so those are excluded.)

use std::borrow::Cow;
use std::collections::HashMap;

use judgelab_core::judge::{Completion, Vocabulary};
use judgelab_core::sampling::{self, Ranked, VerdictDistribution};
use judgelab_core::verdict::{self, OutputKind, Verdict};
use judgelab_core::{Constraint, Task, TrialParams};

use crate::resolve::Resolved;

/// How one group of trials reads verdicts from a pass: a local judge's first-token logits
/// over its vocabulary, or a remote judge's most likely first tokens.
pub(crate) struct Reader {
    output: OutputKind,
    task: Task,
    /// A local judge's vocabulary, each token read once; none for a remote judge, whose
    /// passes name their own tokens.
    local: Option<Local>,
}

struct Local {
    vocabulary: Vocabulary,
    verdicts: Vec<Verdict>,
    /// With a grammar: the tokens it admits.
    allowed: Option<Vec<bool>>,
}

/// One pass ranked once for all the trials that share it, with what its tokens read as.
pub(crate) struct Pass<'r> {
    ranked: Ranked,
    texts: Cow<'r, [String]>,
    verdicts: Cow<'r, [Verdict]>,
    remote: bool,
}

/// One trial's exact distribution for one pass: every token it may draw, and the
/// verdicts they add up to. Computed once per trial, however many repeats draw from it.
pub(crate) struct TrialDistribution {
    tokens: Vec<(usize, f64)>,
    pub verdicts: VerdictDistribution,
}

impl Reader {
    /// A local judge's reader (`vocabulary`), or a remote judge's (`None`). A local one
    /// fails when a valid verdict is not one token of the model: then no first token can
    /// stand for it. A remote one cannot know its model's tokens before a pass; a pass
    /// whose most likely tokens lack a verdict leaves its probability out, and the
    /// verdict's belief shows it missing.
    pub fn new(
        vocabulary: Option<Vocabulary>,
        output: OutputKind,
        task: Task,
        allow_tie: bool,
        constraint: Constraint,
    ) -> Result<Reader, String> {
        if vocabulary.is_none() {
            prefix_free(task, allow_tie)?;
        }
        let local = vocabulary
            .map(|vocabulary| Local::new(vocabulary, output, task, allow_tie, constraint))
            .transpose()?;
        Ok(Reader {
            output,
            task,
            local,
        })
    }

    /// A completion's pass, ranked: `None` where it carries no distribution (a local
    /// judge's without logits, a server's without log-probabilities).
    pub fn pass<'r>(&'r self, c: &Completion) -> Option<Pass<'r>> {
        match &self.local {
            Some(local) => {
                let logits = c.logits.as_ref()?;
                Some(Pass {
                    ranked: local.rank(logits),
                    texts: Cow::Borrowed(&local.vocabulary[..]),
                    verdicts: Cow::Borrowed(&local.verdicts),
                    remote: false,
                })
            }
            None => {
                let top = c.top_logprobs.as_ref()?;
                let mut texts: Vec<String> = top.iter().map(|t| t.token.clone()).collect();
                let logprobs: Vec<f64> = top.iter().map(|t| t.logprob).collect();
                let mut verdicts = verdict::token_verdicts(self.output, self.task, &texts);
                // The tokens the server left out, one token past those it returned: their
                // text is unknown, and they are read as no verdict.
                texts.push(String::new());
                verdicts.push(Verdict::Failed(verdict::FailureKind::NoLabel));
                Some(Pass {
                    ranked: Ranked::top(&logprobs),
                    verdicts: Cow::Owned(verdicts),
                    texts: Cow::Owned(texts),
                    remote: true,
                })
            }
        }
    }
}

/// A server's first token is read as a whole verdict: where one valid verdict begins
/// another (`1` and `10` on a 1–10 scale), the token `1` may be the start of either.
fn prefix_free(task: Task, allow_tie: bool) -> Result<(), String> {
    let spellings = verdict::spellings(task, allow_tie);
    for (a, _) in &spellings {
        if let Some((b, _)) = spellings
            .iter()
            .find(|(b, _)| b != a && b.starts_with(a.as_str()))
        {
            return Err(format!(
                "exact verdicts from a server read its first token as the whole verdict, and {a:?} begins {b:?}: the token {a:?} may be either (exact = false in the judge's table, [judge] or [[judges]], generates instead)"
            ));
        }
    }
    Ok(())
}

impl Local {
    fn new(
        vocabulary: Vocabulary,
        output: OutputKind,
        task: Task,
        allow_tie: bool,
        constraint: Constraint,
    ) -> Result<Local, String> {
        let index: HashMap<&str, usize> = vocabulary
            .iter()
            .enumerate()
            .map(|(id, piece)| (piece.as_str(), id))
            .collect();
        let spellings = verdict::spellings(task, allow_tie);
        if let Some((missing, _)) = spellings
            .iter()
            .find(|(s, _)| !index.contains_key(s.as_str()))
        {
            return Err(format!(
                "exact verdicts need every verdict to be one token, and {missing:?} is not one \
                 token of this model (set the judge's exact = false to generate instead)"
            ));
        }
        let allowed = (constraint == Constraint::Grammar).then(|| {
            let mut allowed = vec![false; vocabulary.len()];
            for (s, _) in &spellings {
                allowed[index[s.as_str()]] = true;
            }
            allowed
        });
        let verdicts = verdict::token_verdicts(output, task, &vocabulary);
        Ok(Local {
            vocabulary,
            verdicts,
            allowed,
        })
    }

    /// Ranks a pass's logits once for all the trials that share it.
    fn rank(&self, logits: &[f32]) -> Ranked {
        match &self.allowed {
            None => Ranked::new(logits),
            Some(allowed) => {
                let masked: Vec<f32> = logits
                    .iter()
                    .zip(allowed)
                    .map(|(&l, &ok)| if ok { l } else { f32::NEG_INFINITY })
                    .collect();
                Ranked::new(&masked)
            }
        }
    }
}

impl Pass<'_> {
    /// A trial's distribution under its temperature and top_p.
    pub fn distribution(&self, temperature: f64, top_p: f64) -> TrialDistribution {
        let tokens = self.ranked.distribution(temperature, top_p);
        let mut verdicts = VerdictDistribution::new(&tokens, &self.verdicts);
        if tokens.is_empty() {
            // Every logit was -inf: nothing can be said.
            verdicts.failed = 1.0;
        }
        TrialDistribution { tokens, verdicts }
    }

    /// The seeded draw of one verdict: the token's text and what it reads as.
    pub fn draw(&self, d: &TrialDistribution, seed: u32) -> (String, Verdict) {
        match sampling::pick(&d.tokens, sampling::unit(u64::from(seed))) {
            Some(token) => (self.texts[token].clone(), self.verdicts[token]),
            None => (String::new(), Verdict::Failed(verdict::FailureKind::Empty)),
        }
    }

    /// A remote pass's probability outside the tokens the server returned, at
    /// temperature 1 ([`Ranked::top`]); `None` for a full vocabulary's.
    pub fn uncovered(&self) -> Option<f64> {
        self.remote.then(|| (1.0 - self.ranked.covered()).max(0.0))
    }
}

/// How a trial's calls read their verdicts: one reader, or a checklist's reader per
/// criterion (each on its criterion's scale), by the rubric's index.
pub(crate) struct Readers(Vec<Reader>);

impl Readers {
    /// Fails where a call of a trial with `params` cannot be read from one token: a
    /// rubric's (a value per criterion), or one whose valid verdicts are not each one
    /// token of the model.
    pub fn new(
        vocabulary: Option<Vocabulary>,
        r: &Resolved,
        params: &TrialParams,
    ) -> Result<Readers, String> {
        let asked = r.asked_apart(params);
        if asked == [None] && !r.rubric.is_empty() {
            return Err(
                "exact verdicts read one value from one token; a rubric's answer has a \
                 value per criterion (sweep style \"checklist\" asks one per call)"
                    .into(),
            );
        }
        asked
            .into_iter()
            .map(|criterion| {
                if let Some(a) = criterion.map(|i| &r.checklist[i]).filter(|a| a.item.is_some()) {
                    return Err(format!(
                        "criterion {:?} is asked as yes/no items, answered in words: they are generated",
                        judgelab_core::rubric::items::criterion(&a.name)
                    ));
                }
                let task = criterion.map_or(r.dataset.task, |i| r.checklist[i].task);
                Reader::new(
                    vocabulary.clone(),
                    r.output,
                    task,
                    r.allow_tie(),
                    params.constraint,
                )
                .map_err(|e| match criterion {
                    Some(i) => format!("criterion {:?}: {e}", r.checklist[i].name),
                    None => e,
                })
            })
            .collect::<Result<_, _>>()
            .map(Readers)
    }

    /// The reader of a call asking `criterion` (none: the item's one label).
    pub fn get(&self, criterion: Option<usize>) -> &Reader {
        &self.0[criterion.unwrap_or(0)]
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use judgelab_core::{Choice, Label};

    use super::*;

    fn completion() -> Completion {
        Completion {
            text: String::new(),
            prompt_tokens: 1,
            completion_tokens: 1,
            latency_ms: 1.0,
            ttft_ms: None,
            stop: judgelab_core::judge::StopReason::MaxTokens,
            cached_tokens: None,
            attempts: 1,
            logprobs: None,
            decoded_tokens: None,
            endpoint: None,
            logits: None,
            top_logprobs: None,
        }
    }

    fn logits(l: &[f32]) -> Completion {
        Completion {
            logits: Some(Arc::new(l.to_vec())),
            ..completion()
        }
    }

    #[test]
    fn a_servers_most_likely_tokens_are_read_by_their_text() {
        let r = Reader::new(
            None,
            OutputKind::Label,
            Task::Pairwise,
            false,
            Constraint::None,
        )
        .unwrap();
        assert!(
            r.pass(&completion()).is_none(),
            "no log-probabilities, no pass"
        );
        let top = [("B", 0.5), (" A", 0.2), ("A", 0.15), ("The", 0.1)]
            .iter()
            .map(|(token, p)| judgelab_core::judge::TokenLogprob {
                token: token.to_string(),
                logprob: f64::ln(*p),
            })
            .collect();
        let pass = r
            .pass(&Completion {
                top_logprobs: Some(top),
                ..completion()
            })
            .unwrap();
        assert!((pass.uncovered().unwrap() - 0.05).abs() < 1e-12);
        let warm = pass.distribution(1.0, 1.0).verdicts;
        // At temperature 1, as the server said: A is " A" and "A"; the 0.05 it left out
        // is no verdict.
        assert!((warm.p(&Label::Choice(Choice::A)) - 0.35).abs() < 1e-12);
        assert!((warm.failed - 0.15).abs() < 1e-12);
        // top_p 0.6 cuts inside them: B and " A", exactly.
        let cut = pass.distribution(1.0, 0.6).verdicts;
        assert!((cut.p(&Label::Choice(Choice::B)) - 0.5 / 0.7).abs() < 1e-12);
        let greedy = pass.distribution(0.0, 1.0);
        assert_eq!(
            pass.draw(&greedy, 3),
            ("B".to_string(), Verdict::Parsed(Label::Choice(Choice::B)))
        );
        assert_eq!(
            r.pass(&logits(&[1.0])).map(|_| ()),
            None,
            "a remote reader reads no logits"
        );
        // On a 1–10 scale, a first token "1" may begin "10": refused, with what to set.
        let ten = Task::Single {
            scale_min: 1,
            scale_max: 10,
        };
        let err = Reader::new(None, OutputKind::Digit, ten, false, Constraint::None)
            .err()
            .unwrap();
        assert!(
            err.contains("\"1\" begins \"10\"") && err.contains("exact = false"),
            "{err}"
        );
    }

    fn vocabulary() -> Vocabulary {
        Arc::new(
            ["A", " A", "B", "The", "", "tie", "t"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
        )
    }

    #[test]
    fn variants_read_as_one_label_and_the_rest_fail() {
        let r = Reader::new(
            Some(vocabulary()),
            OutputKind::Label,
            Task::Pairwise,
            false,
            Constraint::None,
        )
        .unwrap();
        let ranked = r
            .pass(&logits(&[2.0, 1.0, 1.5, 1.75, 0.0, -9.0, -9.0]))
            .unwrap();
        let greedy = ranked.distribution(0.0, 1.0);
        let (text, verdict) = ranked.draw(&greedy, 1);
        assert_eq!(
            (text.as_str(), verdict),
            ("A", Verdict::Parsed(Label::Choice(Choice::A)))
        );
        let warm = ranked.distribution(1.0, 1.0);
        let z: f64 = [2.0f64, 1.0, 1.5, 1.75, 0.0, -9.0, -9.0]
            .iter()
            .map(|l| l.exp())
            .sum();
        let pa = (2f64.exp() + 1f64.exp()) / z;
        assert!((warm.verdicts.p(&Label::Choice(Choice::A)) - pa).abs() < 1e-9);
        // "The", "" and "t" fail; "tie" is a tie only where ties are allowed, and still
        // parses as one here: the parser, not the spelling list, reads tokens.
        let failed = (1.75f64.exp() + 1.0 + (-9f64).exp()) / z;
        assert!(
            (warm.verdicts.failed - failed).abs() < 1e-9,
            "{}",
            warm.verdicts.failed
        );
    }

    #[test]
    fn a_grammar_keeps_exact_spellings_only() {
        let r = Reader::new(
            Some(vocabulary()),
            OutputKind::Label,
            Task::Pairwise,
            true,
            Constraint::Grammar,
        )
        .unwrap();
        let ranked = r
            .pass(&logits(&[0.0, 5.0, 1.0, 9.0, 9.0, 0.0, 9.0]))
            .unwrap();
        let d = ranked.distribution(1.0, 1.0).verdicts;
        assert_eq!(d.failed, 0.0);
        let z = 1.0 + 1f64.exp() + 1.0;
        assert!((d.p(&Label::Choice(Choice::B)) - 1f64.exp() / z).abs() < 1e-9);
        assert!((d.p(&Label::Choice(Choice::Tie)) - 1.0 / z).abs() < 1e-9);
    }

    #[test]
    fn labels_that_are_not_one_token_are_refused() {
        let err = Reader::new(
            Some(vocabulary()),
            OutputKind::Digit,
            Task::Single {
                scale_min: 1,
                scale_max: 10,
            },
            false,
            Constraint::None,
        )
        .err()
        .unwrap();
        assert!(err.contains("\"1\" is not one token"), "{err}");
    }
}
