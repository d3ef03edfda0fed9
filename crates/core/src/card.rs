//! Judge cards: a tuned judge as a file (`judge.json`) that carries everything that defines
//! it — the template's text, the parameters, the few-shot examples whole, the model's
//! identity, the output and its constraint — and what was measured of it where it was
//! tuned, so that it runs unchanged on new data or another machine (`[[judges]] card =
//! "judge.json"`) and can be cited whole.
//!
//! A judge's identity ([`Definition::identity`]) is the sha256 of what changes its verdicts
//! on an item: every trial judged by the same judge, in any experiment, has the same one.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::hash::sha256_hex;

pub mod measured;
use crate::{Item, OutputKind, Task, TrialParams};
pub use measured::Measured;

/// The card format this build writes and reads.
pub const FORMAT: u32 = 1;

/// A judge, defined and measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgeCard {
    /// The card format ([`FORMAT`]).
    pub judgelab_card: u32,
    /// [`Definition::identity`] of `judge`.
    pub identity: String,
    pub judge: Definition,
    /// What was measured of it where it was tuned (for readers; nothing reads it back to
    /// judge); none where nothing was.
    #[serde(default)]
    pub measured: Option<Measured>,
    /// When it was exported (UTC, RFC 3339) and by which Judgelab.
    pub exported_at: String,
    pub judgelab_version: String,
}

/// Everything that makes the judge's verdicts what they are.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Definition {
    /// Its name where it was tuned (a label, not part of its identity).
    pub name: String,
    /// What it judges: pairwise, or ratings on a scale.
    pub task: Task,
    /// Whether its pairwise verdict may be a tie (its prompt and grammar say so).
    pub allow_tie: bool,
    pub output: OutputKind,
    pub template: CardTemplate,
    /// The trial's parameters (`few_shot` is the number of `examples`; the judge and
    /// template names, the example set and the load are labels, not identity).
    pub params: TrialParams,
    /// The few-shot examples it is shown, whole, in order, with their human labels.
    pub examples: Vec<Item>,
    pub model: Model,
}

/// The template, by text (its name is where it came from).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CardTemplate {
    pub name: String,
    pub source: String,
}

/// The model a judge runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "backend", rename_all = "snake_case")]
pub enum Model {
    /// A GGUF file through llama.cpp: known by its sha256 wherever it lies.
    Llama {
        /// The file's name where it was tuned (a hint for finding it).
        file: String,
        sha256: String,
        /// The file's main weight type, as its header says (e.g. `Q4_1`).
        quantization: Option<String>,
        context_size: u32,
        /// Its calls decoded alone (`[judge] reproducible`), as its verdicts were: then
        /// they are what it gives run again. Not part of the identity.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        reproducible: bool,
    },
    /// A model served by an OpenAI-compatible endpoint: its name and what of the endpoint
    /// changes verdicts.
    Openai { model: String, endpoint: Value },
}

impl Definition {
    /// The sha256 of what changes its verdicts: the task, ties, output, the template's
    /// text, the parameters, the examples' text and labels (not their ids), and the model
    /// (its file's sha256, or the endpoint's model). Names, the example set's number, the
    /// load a latency was measured at and the quantisation level's name (the file's sha256
    /// says what it was made into) are left out.
    pub fn identity(&self) -> String {
        let params = TrialParams {
            judge: String::new(),
            template: String::new(),
            few_shot_set: 0,
            concurrency: None,
            // The model file's sha256 is what it was made into.
            quantization: None,
            ..self.params.clone()
        };
        let examples: Vec<Value> = self
            .examples
            .iter()
            .map(|e| {
                json!({
                    "question": e.question,
                    "answer_a": e.answer_a,
                    "answer_b": e.answer_b,
                    "answer": e.answer,
                    "reference": e.reference,
                    "human_label": e.human_label.to_text(),
                    "human_labels": e.human_labels.iter().map(|(k, l)| (k.clone(), l.to_text())).collect::<std::collections::BTreeMap<_, _>>(),
                })
            })
            .collect();
        let model = match &self.model {
            Model::Llama {
                sha256,
                context_size,
                ..
            } => json!({"sha256": sha256, "context_size": context_size}),
            Model::Openai { model, endpoint } => json!({"model": model, "endpoint": endpoint}),
        };
        sha256_hex(
            json!({
                "task": self.task,
                "allow_tie": self.allow_tie,
                "output": self.output,
                "template": sha256_hex(&self.template.source),
                "params": params,
                "examples": examples,
                "model": model,
            })
            .to_string(),
        )
    }
}

impl JudgeCard {
    /// Reads a card (`path` names it in errors): its format known, its identity its
    /// definition's.
    pub fn from_json(path: &str, text: &str) -> Result<JudgeCard, String> {
        let card: JudgeCard =
            serde_json::from_str(text).map_err(|e| format!("{path}: not a judge card: {e}"))?;
        if card.judgelab_card != FORMAT {
            return Err(format!(
                "{path}: judge card format {} (this Judgelab reads format {FORMAT})",
                card.judgelab_card
            ));
        }
        let identity = card.judge.identity();
        if identity != card.identity {
            return Err(format!(
                "{path}: the card's definition hashes to {identity}, not to the identity it states ({}): it was edited; export it again",
                card.identity
            ));
        }
        if card.judge.examples.len() != card.judge.params.few_shot as usize {
            return Err(format!(
                "{path}: few_shot = {} but the card holds {} examples",
                card.judge.params.few_shot,
                card.judge.examples.len()
            ));
        }
        Ok(card)
    }

    /// The id a card's example is known by in an experiment that uses the card: apart from
    /// the ids of the data it judges.
    pub fn example_id(id: &str) -> String {
        format!("card:{id}")
    }

    /// A card example's own id, from the id an experiment knows it by
    /// ([`JudgeCard::example_id`]); none for an item of the data.
    pub fn own_id(known_as: &str) -> Option<&str> {
        known_as.strip_prefix("card:")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::Label;

    fn definition() -> Definition {
        let params: TrialParams = serde_json::from_value(json!({
            "model": "default", "template": "pairwise", "temperature": 0.0, "top_p": 0.9,
            "max_tokens": 4, "few_shot": 1, "few_shot_max_tokens": null,
        }))
        .unwrap();
        Definition {
            name: "default".into(),
            task: Task::Pairwise,
            allow_tie: false,
            output: OutputKind::Label,
            template: CardTemplate {
                name: "pairwise".into(),
                source: "{{ question }}".into(),
            },
            params,
            examples: vec![Item {
                id: "e1".into(),
                question: "q".into(),
                answer_a: Some("a".into()),
                answer_b: Some("b".into()),
                answer: None,
                reference: None,
                human_label: Label::from_text("B").unwrap(),
                human_labels: Default::default(),
                meta: json!({}),
            }],
            model: Model::Llama {
                file: "m.gguf".into(),
                sha256: "ab".repeat(32),
                quantization: Some("Q4_1".into()),
                context_size: 8192,
                reproducible: false,
            },
        }
    }

    /// The identity is what changes verdicts: names, ids, the example set, the load and
    /// where the file lies leave it as it is; the text, a parameter, a label or the model
    /// file change it.
    #[test]
    fn a_judge_is_known_by_what_changes_its_verdicts() {
        let d = definition();
        let same = |f: &dyn Fn(&mut Definition)| {
            let mut other = d.clone();
            f(&mut other);
            other.identity() == d.identity()
        };
        assert!(same(&|o| o.name = "card".into()));
        assert!(same(&|o| o.params.judge = "card".into()));
        assert!(same(&|o| o.params.template = "mine.jinja".into()));
        assert!(same(&|o| o.examples[0].id = "card:e1".into()));
        assert!(same(&|o| o.examples[0].meta = json!({"source": "x"})));
        assert!(same(&|o| o.params.few_shot_set = 2));
        assert!(same(&|o| o.params.concurrency = Some(4)));
        assert!(same(
            &|o| o.params.quantization = Some(crate::quantization::Quantization::Q8_0)
        ));
        assert!(same(&|o| {
            if let Model::Llama {
                file, quantization, ..
            } = &mut o.model
            {
                *file = "elsewhere.gguf".into();
                *quantization = None;
            }
        }));
        assert!(!same(&|o| o.template.source.push(' ')));
        assert!(!same(&|o| o.params.temperature = 0.1));
        assert!(!same(&|o| o.allow_tie = true));
        assert!(!same(
            &|o| o.examples[0].human_label = Label::from_text("A").unwrap()
        ));
        assert!(!same(&|o| o.examples[0].question.push('?')));
        assert!(!same(&|o| {
            if let Model::Llama { sha256, .. } = &mut o.model {
                *sha256 = "cd".repeat(32);
            }
        }));
    }

    /// A card reads back as written; an edited one, or one of another format, is refused.
    #[test]
    fn a_card_reads_back_and_an_edited_one_is_refused() {
        let judge = definition();
        let card = JudgeCard {
            judgelab_card: FORMAT,
            identity: judge.identity(),
            judge,
            measured: None,
            exported_at: "2026-12-06T00:00:00Z".into(),
            judgelab_version: "0.1.0".into(),
        };
        let text = serde_json::to_string_pretty(&card).unwrap();
        assert_eq!(JudgeCard::from_json("judge.json", &text).unwrap(), card);
        let edited = text.replace("\"temperature\": 0.0", "\"temperature\": 0.5");
        let err = JudgeCard::from_json("judge.json", &edited).unwrap_err();
        assert!(err.contains("it was edited; export it again"), "{err}");
        let future = text.replace("\"judgelab_card\": 1", "\"judgelab_card\": 2");
        let err = JudgeCard::from_json("judge.json", &future).unwrap_err();
        assert!(err.contains("judge card format 2"), "{err}");
    }

    /// A card's judge allows ties where it was tuned, whatever labels the new data has.
    #[test]
    fn a_cards_judge_keeps_its_ties() {
        let data = crate::dataset::parse(
            "d.jsonl",
            br#"{"id":"1","task":"pairwise","question":"q","answer_a":"a","answer_b":"b","human_label":"A"}"#,
            &Default::default(),
        )
        .unwrap();
        assert!(!data.allows_tie());
        let text = "name = \"c\"\ndataset = \"d.jsonl\"\n[[judges]]\ncard = \"judge.json\"\n";
        let runs = crate::Experiment::from_toml("c.toml", text).unwrap();
        let tuned = Definition {
            allow_tie: true,
            ..definition()
        };
        let e = runs.with_card(&tuned).unwrap();
        assert!(e.allow_tie(&data));
        assert_eq!(e.trials().len(), 1);
        assert_eq!(e.trials()[0].few_shot, 1);
    }
}
