//! An alignment's outcome in words, on a fixed search: a start, a rewrite a race dropped,
//! a rejected reply and the debiased order, which the test split confirms.

use judgelab_core::align::outcome::{AlignOutcome, Confirmation, Scored};
use judgelab_core::align::plan::{self, Budget, Child, Shape};
use judgelab_core::align::{Candidate, Move, Proposal};
use judgelab_core::metrics::{paired, BootstrapSpec, Estimate, Observation, Quality, SplitScore};
use judgelab_core::{Choice, Label, Task};

/// `n` verdicts against alternating labels, the first `right` of them right.
fn verdicts(n: usize, right: usize) -> Vec<Observation> {
    (0..n)
        .map(|u| {
            let human = Label::Choice(if u % 2 == 0 { Choice::A } else { Choice::B });
            let wrong = Label::Choice(if u % 2 == 0 { Choice::B } else { Choice::A });
            Observation::verdict(u, human, if u < right { human } else { wrong })
        })
        .collect()
}

fn candidate(id: u32, parent: Option<u32>, kind: Move) -> Candidate {
    Candidate {
        id,
        parent,
        generation: u32::from(parent.is_some()),
        kind,
        trial_id: Some(i64::from(id) + 1),
        proposal: None,
        rejected: None,
    }
}

fn scored(c: Candidate, dev: Option<&[Observation]>, calls: u64) -> Scored {
    let spec = BootstrapSpec::default();
    Scored {
        dev_items: dev.map_or(0, <[Observation]>::len),
        dev: dev.map(|o| SplitScore::of(Task::Pairwise, o, &spec)),
        template: None,
        params: None,
        examples: Vec::new(),
        diff: String::new(),
        dropped_after: None,
        calls,
        test_calls: 0,
        candidate: c,
    }
}

#[test]
fn an_alignment_in_words() {
    let spec = BootstrapSpec::default();
    let shape = Shape {
        n_dev: 20,
        n_test: 10,
        start_calls_per_item: 1,
        start_judged: true,
        parents: 1,
        children: [
            (Move::Rewrite, 1, 1),
            (Move::Examples, 1, 0),
            (Move::Order, 2, 0),
        ]
        .map(|(kind, calls_per_item, proposer_calls)| Child {
            kind,
            calls_per_item,
            proposer_calls,
        })
        .to_vec(),
        max_generations: 3,
        usd_per_call: None,
        usd_per_proposer_call: None,
    };
    let plan = plan::plan(
        &shape,
        Budget {
            calls: Some(200),
            usd: None,
        },
    )
    .unwrap();
    let proposal = Proposal {
        prompt: Vec::new(),
        reply: Some("Prefer the exact answer.".into()),
        error: None,
        cost_usd: None,
        sends: 1,
    };
    let rewrite = Candidate {
        proposal: Some(proposal.clone()),
        ..candidate(1, Some(0), Move::Rewrite)
    };
    let rejected = Candidate {
        proposal: Some(Proposal {
            reply: Some("{{ question }}".into()),
            ..proposal
        }),
        rejected: Some("the reply drops `answer_b`, which the judge reads".into()),
        trial_id: None,
        ..candidate(2, Some(0), Move::Rewrite)
    };
    let (start_dev, order_dev) = (verdicts(20, 9), verdicts(20, 15));
    let mut dropped = scored(rewrite, Some(&verdicts(10, 3)), 10);
    dropped.dropped_after = Some(10);
    let (start_test, best_test) = (verdicts(10, 4), verdicts(10, 10));
    let candidates = vec![
        scored(candidate(0, None, Move::Start), Some(&start_dev), 0),
        dropped,
        scored(rejected, None, 0),
        Scored {
            test_calls: 20,
            ..scored(candidate(3, Some(0), Move::Order), Some(&order_dev), 40)
        },
    ];
    let metric = Quality::Accuracy;
    let outcome = AlignOutcome {
        alignment: "e-align-1".into(),
        source: "e".into(),
        trial: 1,
        plan,
        metric,
        candidates,
        start: 0,
        best: 3,
        dev_naive: SplitScore::of(Task::Pairwise, &order_dev, &spec)
            .quality
            .get(metric),
        dev_corrected: Some(Estimate {
            value: Some(0.7),
            ci: Some((0.55, 0.85)),
        }),
        confirmation: Some(Confirmation {
            start: SplitScore::of(Task::Pairwise, &start_test, &spec),
            best: SplitScore::of(Task::Pairwise, &best_test, &spec),
            difference: paired::compare(Task::Pairwise, &best_test, &start_test, metric, &spec),
            confirmed: true,
            verdict: "confirmed".into(),
        }),
        dev_items: (0..20).map(|i| format!("d{i}")).collect(),
        test_items: (0..10).map(|i| format!("t{i}")).collect(),
        spent_calls: 71,
        dev_calls: 50,
        full_dev_calls: 60,
        stopped: None,
    };
    insta::assert_snapshot!("alignment_text", judgelab_report::alignment::text(&outcome));
}
