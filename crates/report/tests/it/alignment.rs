//! An alignment's outcome in words and in the report's "Alignment" section, on a fixed
//! search: a start, a rewrite a race dropped, a rejected reply, the debiased order, which
//! the test split confirms, and a sampling move of it; and the outcome as the store keeps it (JSON) read back.

use judgelab_core::align::outcome::{AlignOutcome, Confirmation, Scored};
use judgelab_core::align::plan::{self, Budget, Child, Shape};
use judgelab_core::align::{Candidate, Move, Proposal};
use judgelab_core::metrics::{paired, BootstrapSpec, Estimate, Observation, Quality, SplitScore};
use judgelab_core::{Choice, Label, Task, TrialParams};

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

/// The fixed search.
fn outcome() -> AlignOutcome {
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
            params: Some(TrialParams::default()),
            ..scored(candidate(3, Some(0), Move::Order), Some(&order_dev), 40)
        },
        // From the debiased order's passes: no call of its own.
        Scored {
            params: Some(TrialParams {
                temperature: 0.5,
                ..TrialParams::default()
            }),
            ..scored(
                candidate(4, Some(3), Move::Sampling),
                Some(&verdicts(20, 13)),
                0,
            )
        },
    ];
    let metric = Quality::Accuracy;
    AlignOutcome {
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
        spent_usd: None,
        stopped: None,
    }
}

#[test]
fn an_alignment_in_words() {
    insta::assert_snapshot!(
        "alignment_text",
        judgelab_report::alignment::text(&outcome())
    );
}

#[test]
fn an_outcome_reads_back_as_it_was_written() {
    let o = outcome();
    let json = serde_json::to_string(&o).unwrap();
    let back: AlignOutcome = serde_json::from_str(&json).unwrap();
    // JSON's decimal floats come back within an ulp: the outcome reads the same.
    let text = judgelab_report::alignment::text;
    assert_eq!(text(&back), text(&o));
    assert_eq!(back.candidates.len(), o.candidates.len());
    let (b, c) = (back.confirmation.unwrap(), o.confirmation.unwrap());
    assert_eq!(b.start.quality.0.len(), c.start.quality.0.len());
    assert!((b.difference.mcnemar_p - c.difference.mcnemar_p).abs() < 1e-12);
}

/// The report of an alignment opens with its section: the candidates, the confirmation,
/// the calls, and the chart of the best dev score by generation.
#[test]
fn the_report_of_an_alignment_has_its_section() {
    let dir = tempfile::tempdir().unwrap();
    let options = judgelab_report::ReportOptions {
        quality: Quality::Accuracy,
        comparisons: Vec::new(),
        alignment: Some(outcome()),
    };
    judgelab_report::write_report(&crate::fixture::renderers(), dir.path(), &options).unwrap();
    let md = std::fs::read_to_string(dir.path().join("report.md")).unwrap();
    let start = md.find("## Alignment").expect("an Alignment section");
    let end = md[start + 3..]
        .find("\n## ")
        .map_or(md.len(), |e| start + 3 + e);
    insta::assert_snapshot!("alignment_report_section", &md[start..end]);
    assert!(md.contains("![the alignment's best dev score by generation](alignment.png)"));
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(html.contains("<h2>Alignment</h2>"));
    let chart = judgelab_report::alignment::chart(&outcome(), Task::Pairwise).unwrap();
    // The start (0.45 on the dev split), then the debiased order (0.75): the rewrite a race
    // dropped after 10 items is not among the complete candidates.
    let ys: Vec<f64> = chart.series[0].points.iter().map(|p| p.y).collect();
    assert_eq!(ys, vec![0.45, 0.75]);
    assert!(dir.path().join("alignment.png").exists());
}

/// Where calls have a price, the plan and the outcome say what they may cost and what
/// they cost.
#[test]
fn an_alignment_in_dollars() {
    let mut o = outcome();
    o.plan = plan::Plan {
        max_usd: Some(0.0213),
        usd_per_call: Some(0.0001),
        prompt_cap: Some(2000),
        usd_per_proposer_call: None,
        budget: Budget {
            calls: None,
            usd: Some(0.05),
        },
        ..o.plan
    };
    o.spent_usd = Some(0.00312);
    let plan = judgelab_report::alignment::plan_text(&o.plan);
    assert!(plan.contains("within a budget of $0.05"), "{plan}");
    assert!(
        plan.ends_with(", $0.0213 (a judge call at most $0.000100 (prompts of up to 2000 tokens))"),
        "{plan}"
    );
    let text = judgelab_report::alignment::text(&o);
    // 71 calls spent, 2 of them the proposer's (unpriced): 69 judge calls at their most.
    assert!(
        text.contains("dollars: $0.0031 spent of a budget of $0.05, as the servers' usage priced the calls; counted at their most, as the budget counts them: $0.0069"),
        "{text}"
    );
}
