//! Tests of the proposer: what it is shown, and which replies make a candidate.

use super::proposer::{self, instruction, revise, sample, Judging, Mistake, Rejected};
use crate::dataset::{Choice, Item, Label, Task};
use crate::template::{RenderContext, Template};
use crate::verdict::{FailureKind, OutputKind, Verdict};

const PAIRWISE: Judging = Judging {
    task: Task::Pairwise,
    output: OutputKind::Label,
    allow_tie: false,
    references: false,
};

fn pairwise() -> Template {
    Template::builtin("pairwise").unwrap()
}

fn item(id: &str, question: &str) -> Item {
    Item {
        id: id.into(),
        question: question.into(),
        answer_a: Some("the first answer".into()),
        answer_b: Some("the second answer".into()),
        answer: None,
        reference: None,
        human_label: Label::Choice(Choice::B),
        human_labels: Default::default(),
        meta: serde_json::Value::Null,
    }
}

/// The messages of `t` for one item, without examples.
fn messages(t: &Template) -> Vec<(String, String)> {
    let i = item("x", "Name a colour.");
    let ctx = RenderContext::new(Task::Pairwise, OutputKind::Label, false, i.text(), &[]);
    t.render(&ctx)
        .unwrap()
        .into_iter()
        .map(|m| (m.role, m.content))
        .collect()
}

#[test]
fn the_instruction_is_the_system_blocks_body() {
    let t = pairwise();
    let block = instruction(&t.source).unwrap();
    assert!(block
        .text
        .starts_with("You are a careful and impartial judge."));
    assert!(block.text.ends_with("may influence your decision."));
    assert_eq!(instruction("{{ question }}"), None);
    let spaced = "{%- block  system -%} Be fair. {%- endblock -%}{% block user %}{{ question }}{% endblock %}";
    assert_eq!(instruction(spaced).unwrap().text, "Be fair.");
}

#[test]
fn plain_instructions_replace_the_system_block_and_keep_the_rest() {
    let parent = pairwise();
    let reply = "```text\nPrefer the output that answers exactly what was asked.\n```";
    let child = revise(&parent, reply, PAIRWISE, "c1").unwrap();
    let (before, after) = (messages(&parent), messages(&child));
    assert_eq!(after[0].0, "system");
    assert_eq!(
        after[0].1,
        "Prefer the output that answers exactly what was asked."
    );
    assert_eq!(before[1], after[1], "the user message is the parent's");
    assert_eq!(child.name, "c1");
    // The prompt's own tags are taken off too.
    let tagged = "<instructions>\nBe strict.\n</instructions>";
    let child = revise(&parent, tagged, PAIRWISE, "c2").unwrap();
    assert_eq!(messages(&child)[0].1, "Be strict.");
    // A template without a system block gets one.
    let bare = Template::new(
        "bare",
        "{{ question }}\n{{ answer_a }}\n{{ answer_b }}\nAnswer A or B.",
    );
    let child = revise(&bare, "Be strict.", PAIRWISE, "c3").unwrap();
    let m = messages(&child);
    assert_eq!(m[0], ("system".into(), "Be strict.".into()));
    assert_eq!(m[1], messages(&bare)[0]);
}

#[test]
fn a_whole_template_is_taken_as_it_is() {
    let reply = "{% block system %}Judge well.{% endblock %}{% block user %}{{ question }}\n(a) {{ answer_a }}\n(b) {{ answer_b }}\n{% for ex in examples %}{{ ex.label }}{% endfor %}Reply A or B.{% endblock %}";
    let child = revise(&pairwise(), reply, PAIRWISE, "c").unwrap();
    assert_eq!(child.source, reply);
}

#[test]
fn replies_that_cannot_judge_are_rejected_with_their_reason() {
    let parent = pairwise();
    let check = |reply: &str, kind: &str| {
        let err = revise(&parent, reply, PAIRWISE, "c").unwrap_err();
        assert_eq!(err.kind(), kind, "{reply:?}: {err}");
        err
    };
    assert_eq!(check("  \n ", "empty"), Rejected::Empty);
    check(&"word ".repeat(1_000), "too_long");
    // Jinja that does not compile, or reads what no judge template has.
    check("{% if %}Be fair.", "invalid");
    check("Be fair to {{ the_author }}.", "invalid");
    // A whole template that no longer shows answer (b), or the few-shot examples.
    let err = check(
        "{{ question }} {{ answer_a }} {% for ex in examples %}{% endfor %} Say A or B.",
        "drops_variable",
    );
    assert_eq!(
        err.to_string(),
        "the reply drops `answer_b`, which the judge reads"
    );
    check(
        "{{ question }} {{ answer_a }} {{ answer_b }} Say A or B.",
        "drops_variable",
    );
    // One that no longer asks for a letter.
    let err = check(
        "{{ question }} {{ answer_a }} {{ answer_b }} {% for ex in examples %}{% endfor %} Which is better?",
        "drops_format",
    );
    assert_eq!(
        err.to_string(),
        "the reply drops the verdict format: its prompt no longer names `A`"
    );
}

#[test]
fn ratings_keep_their_scale() {
    let judging = Judging {
        task: Task::Single {
            scale_min: 1,
            scale_max: 5,
        },
        output: OutputKind::Digit,
        allow_tie: false,
        references: true,
    };
    let parent = Template::builtin("single").unwrap();
    revise(&parent, "Rate harshly.", judging, "c").unwrap();
    // Where the items carry references, a rewrite must keep showing them.
    let err = revise(
        &parent,
        "{{ question }} {{ answer }} Rate it 1 to 5.",
        judging,
        "c",
    );
    assert_eq!(err.unwrap_err().kind(), "drops_variable");
    let err = revise(
        &parent,
        "{% for ex in examples %}{% endfor %}{{ question }} {{ reference }} {{ answer }} Rate it.",
        judging,
        "c",
    )
    .unwrap_err();
    assert_eq!(err.kind(), "drops_format", "{err}");
}

#[test]
fn the_proposer_is_shown_the_instruction_and_the_mistakes() {
    let proposer = Template::new("proposer", proposer::BUILTIN);
    proposer::check(&proposer, PAIRWISE).unwrap();
    let long = format!("Write a poem. {}", "Make it rhyme. ".repeat(40));
    let mistakes = vec![
        Mistake::new(
            &item("d1", "Name a colour."),
            Verdict::Parsed(Label::Choice(Choice::A)),
            Some(0.734),
            100,
        ),
        Mistake::new(
            &item("d2", &long),
            Verdict::Failed(FailureKind::NoLabel),
            None,
            100,
        ),
    ];
    assert_eq!(mistakes[0].confidence, Some(73));
    assert!(mistakes[1].question.ends_with(" …"));
    assert!(mistakes[1].question.chars().count() <= 102);
    let m = proposer::prompt(&proposer, &pairwise(), PAIRWISE, &mistakes).unwrap();
    let user = &m.last().unwrap().content;
    assert!(user.contains(instruction(&pairwise().source).unwrap().text));
    assert!(user.contains("## The judge said A (73% sure); the right answer is B."));
    assert!(user.contains("## The judge said no verdict; the right answer is B."));
    assert!(user.contains("Name a colour."));
    assert!(!user.contains("{{"), "{user}");
    // A proposer template that reads what it is not given is refused before any call.
    let bad = Template::new("bad", "{{ test_items }}");
    assert!(proposer::check(&bad, PAIRWISE).is_err());
}

#[test]
fn mistakes_are_a_seeded_sample_kept_in_order() {
    let wrong: Vec<u32> = (0..20).collect();
    let a = sample(&wrong, 5, 7);
    assert_eq!(a.len(), 5);
    assert!(a.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(a, sample(&wrong, 5, 7));
    assert_ne!(a, sample(&wrong, 5, 8));
    assert_eq!(sample(&wrong[..3], 5, 7).len(), 3);
}

#[test]
fn sampling_moves_step_to_the_other_temperatures_and_where_it_samples_top_p() {
    use crate::align::sampling_moves;
    // Greedy: top_p changes nothing, so only the temperature moves.
    assert_eq!(sampling_moves(0.0, 1.0), vec![(0.5, 1.0), (1.0, 1.0)]);
    assert_eq!(
        sampling_moves(0.5, 1.0),
        vec![(0.0, 1.0), (1.0, 1.0), (0.5, 0.9)]
    );
    // Off the grid: every temperature of it, and every top_p.
    assert_eq!(
        sampling_moves(0.7, 0.95),
        vec![
            (0.0, 0.95),
            (0.5, 0.95),
            (1.0, 0.95),
            (0.7, 0.9),
            (0.7, 1.0)
        ]
    );
}
