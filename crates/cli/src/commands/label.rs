//! `judgelab label`: the labelling queue in a terminal. Items come the most disputed
//! first; one key labels one (`a` / `b` / `t`, or a digit on the scale), and only then are
//! the trials' verdicts shown. With standard input not a terminal, each line is one answer,
//! so a script can label too.

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use judgelab_core::annotation::queue::Filter;
use judgelab_core::annotation::{parse_label, Key, Labels};
use judgelab_core::{Label, Task};
use judgelab_engine::labels::{self, Queue, QueueEntry};
use judgelab_engine::EngineError;
use judgelab_store::Store;

/// `judgelab label`'s arguments.
#[derive(clap::Args)]
pub struct Args {
    /// An experiment name, or its .toml file
    experiment: String,
    /// Who is labelling [default: the user's login]
    #[arg(long, value_name = "NAME")]
    annotator: Option<String>,
    /// Only items without a label in the dataset
    #[arg(long)]
    unlabelled: bool,
    /// Print the queue and label nothing
    #[arg(long, conflicts_with_all = ["item", "undo", "export"])]
    list: bool,
    /// Label one item (with --give) instead of going through the queue
    #[arg(long, value_name = "ID", requires = "give")]
    item: Option<String>,
    /// The label for --item: a key (a, b, t, a digit) or the label (A, B, tie, 4)
    #[arg(long, value_name = "LABEL", requires = "item")]
    give: Option<String>,
    /// Take back the annotator's label of one item
    #[arg(long, value_name = "ID", conflicts_with_all = ["item", "export"])]
    undo: Option<String>,
    /// Write every item of the dataset as JSONL in the dataset schema, with the labels
    /// --labels names (--labels-of: whose; default everyone's, combined)
    #[arg(long, value_name = "FILE")]
    export: Option<PathBuf>,
    /// The labels to export: annotations, both (an item's annotation, else its
    /// dataset label) or original
    #[arg(long, default_value = "both", value_parser = ["original", "annotations", "both"], requires = "export")]
    labels: String,
    /// Whose annotations to export [default: everyone's, combined]
    #[arg(long, value_name = "NAME", requires = "export")]
    labels_of: Option<String>,
    /// With --list, print JSON
    #[arg(long, requires = "list")]
    json: bool,
}

/// Turns `args` into a request and serves it.
pub async fn command(store: &Store, args: Args) -> Result<ExitCode> {
    let Args {
        experiment,
        annotator,
        unlabelled,
        list,
        item,
        give,
        undo,
        export,
        labels,
        labels_of,
        json,
    } = args;
    let action = match (item.zip(give), undo, export) {
        (Some((item, label)), _, _) => LabelAction::Give { item, label },
        (None, Some(item), _) => LabelAction::Undo { item },
        (None, None, Some(path)) => LabelAction::Export {
            path,
            labels: Labels::parse(&labels, labels_of).map_err(EngineError::from)?,
        },
        (None, None, None) if list => LabelAction::List { json },
        (None, None, None) => LabelAction::Queue,
    };
    let request = LabelRequest {
        experiment: crate::args::experiment_name(&experiment)?,
        annotator: annotator.unwrap_or_else(judgelab_engine::labels::default_annotator),
        filter: Filter {
            unlabelled_only: unlabelled,
        },
        action,
    };
    label(store, request).await
}

/// What `judgelab label` was asked to do.
pub struct LabelRequest {
    pub experiment: String,
    pub annotator: String,
    pub filter: Filter,
    pub action: LabelAction,
}

pub enum LabelAction {
    /// Go through the queue, reading answers from standard input.
    Queue,
    /// Print the queue and label nothing.
    List { json: bool },
    /// Give one item one label.
    Give { item: String, label: String },
    /// Take one item's label back.
    Undo { item: String },
    /// Write the dataset with the chosen labels as JSONL.
    Export { path: PathBuf, labels: Labels },
}

pub async fn label(store: &Store, request: LabelRequest) -> Result<ExitCode> {
    let name = &request.experiment;
    let annotator = &request.annotator;
    match request.action {
        LabelAction::Give { item, label } => {
            let given = labels::annotate(store, name, annotator, &item, &label).await?;
            println!("{annotator} labelled {item:?} {}", given.to_text());
        }
        LabelAction::Undo { item } => {
            if labels::unannotate(store, name, annotator, &item).await? {
                println!("took back {annotator}'s label of {item:?}");
            } else {
                println!("{annotator} had not labelled {item:?}");
            }
        }
        LabelAction::Export { path, labels } => {
            let done = labels::export(store, name, &labels, &path)
                .await
                .with_context(|| format!("while exporting the labels of {name:?}"))?;
            println!(
                "wrote {} items ({} with {}) to {}",
                done.n_items,
                done.n_labelled,
                labels.describe(),
                path.display()
            );
            let scale = match done.task {
                Task::Single {
                    scale_min,
                    scale_max,
                } if (scale_min, scale_max) != (1, 5) => {
                    format!(" --scale {scale_min}-{scale_max}")
                }
                _ => String::new(),
            };
            println!(
                "import it as a dataset: judgelab import {}{scale}",
                path.display()
            );
        }
        LabelAction::List { json } => {
            let queue = labels::queue(store, name, annotator, request.filter).await?;
            if json {
                let items: Vec<serde_json::Value> = queue
                    .items
                    .iter()
                    .map(|e| {
                        let mut v = serde_json::to_value(&e.queued).expect("a queue serialises");
                        v["original_label"] = e.original.map(|l| l.to_text()).into();
                        v
                    })
                    .collect();
                println!("{}", serde_json::Value::Array(items));
            } else {
                println!(
                    "{} items to label for {annotator} in {:?} ({} labelled of {}), the most disputed first",
                    queue.items.len(),
                    queue.dataset,
                    queue.n_done,
                    queue.n_items
                );
                for e in &queue.items {
                    println!(
                        "{:<24} {:>12}  {:>3} votes  {}",
                        e.item.id,
                        disagreement(queue.task, e),
                        e.queued.n_votes,
                        e.original
                            .map_or("no label".to_string(), |l| format!("dataset: {l}"))
                    );
                }
            }
        }
        LabelAction::Queue => return go_through(store, name, annotator, request.filter).await,
    }
    Ok(ExitCode::SUCCESS)
}

fn disagreement(task: Task, e: &QueueEntry) -> String {
    match (e.queued.disagreement, task) {
        (None, _) => "—".to_string(),
        (Some(d), Task::Pairwise) => format!("{d:.2} bits"),
        (Some(d), Task::Single { .. }) => format!("sd {d:.2}"),
    }
}

/// One answer: a key, or a line where standard input is not a terminal (or the scale has
/// numbers of two digits).
fn answer(task: Task, term: &console::Term, interactive: bool) -> Result<Option<String>> {
    let one_key = match task {
        Task::Pairwise => true,
        Task::Single {
            scale_min,
            scale_max,
        } => scale_min >= 0 && scale_max <= 9,
    };
    if interactive && one_key {
        return Ok(match term.read_key().context("while reading a key")? {
            console::Key::Char(c) => Some(c.to_string()),
            console::Key::Escape => Some("q".to_string()),
            _ => Some(String::new()),
        });
    }
    let mut line = String::new();
    if std::io::stdin().lock().read_line(&mut line)? == 0 {
        return Ok(None);
    }
    Ok(Some(line.trim().to_string()))
}

fn show_item(queue: &Queue, position: usize, e: &QueueEntry) {
    let item = &e.item;
    println!();
    println!(
        "[{}/{}] {} · {} over {} votes · {}",
        position + 1,
        queue.items.len(),
        item.id,
        disagreement(queue.task, e),
        e.queued.n_votes,
        if e.original.is_some() {
            "has a label in the dataset"
        } else {
            "no label in the dataset"
        }
    );
    println!("── question\n{}", item.question);
    for (title, text) in [
        ("answer A", &item.answer_a),
        ("answer B", &item.answer_b),
        ("answer", &item.answer),
        ("reference", &item.reference),
    ] {
        if let Some(t) = text {
            println!("── {title}\n{t}");
        }
    }
}

fn verdicts(e: &QueueEntry) -> String {
    if e.queued.votes.is_empty() {
        return "no trial has judged it".to_string();
    }
    let shown: Vec<String> = e
        .queued
        .votes
        .iter()
        .map(|v| {
            let said: Vec<String> = v
                .verdicts
                .iter()
                .map(|l| l.map_or("failed".to_string(), |l| l.to_text()))
                .collect();
            format!("#{} {}", v.trial_id, said.join(" "))
        })
        .collect();
    format!("the trials said: {}", shown.join(" · "))
}

/// Goes through the queue until it is empty or the person stops.
async fn go_through(
    store: &Store,
    name: &str,
    annotator: &str,
    filter: Filter,
) -> Result<ExitCode> {
    let queue = labels::queue(store, name, annotator, filter).await?;
    let task = queue.task;
    let interactive = std::io::stdin().is_terminal();
    let term = console::Term::stdout();
    println!(
        "{} items to label for {annotator} in {:?}, the most disputed first; keys: {} · s skip · u undo · q quit",
        queue.items.len(),
        queue.dataset,
        Key::help(task)
    );
    let mut given: Vec<(String, Label)> = Vec::new();
    let mut position = 0;
    while position < queue.items.len() {
        let e = &queue.items[position];
        show_item(&queue, position, e);
        print!("label ({}, s, u, q) > ", Key::help(task));
        std::io::stdout().flush()?;
        let Some(text) = answer(task, &term, interactive)? else {
            break;
        };
        if interactive {
            println!("{text}");
        }
        match text.as_str() {
            "q" | "Q" => break,
            "s" | "S" => {
                position += 1;
                continue;
            }
            "u" | "U" => {
                match given.pop() {
                    Some((item, _)) => {
                        labels::unannotate(store, name, annotator, &item).await?;
                        println!("took back the label of {item:?}");
                        position = queue
                            .items
                            .iter()
                            .position(|q| q.item.id == item)
                            .unwrap_or(position);
                    }
                    None => println!("nothing to take back"),
                }
                continue;
            }
            _ => {}
        }
        match parse_label(task, &text) {
            Ok(_) => {
                let label = labels::annotate(store, name, annotator, &e.item.id, &text).await?;
                let original = e
                    .original
                    .map_or(String::new(), |l| format!(" (the dataset says {l})"));
                println!("labelled {}{original}; {}", label.to_text(), verdicts(e));
                given.push((e.item.id.clone(), label));
                position += 1;
            }
            Err(err) => println!("{err}; try again"),
        }
    }
    let left = queue.items.len().saturating_sub(position);
    println!(
        "\n{annotator} labelled {} items this time ({} in all); {left} left in the queue",
        given.len(),
        queue.n_done + given.len()
    );
    println!(
        "metrics against them: judgelab show {name} --labels annotations --annotator {annotator}"
    );
    Ok(ExitCode::SUCCESS)
}
