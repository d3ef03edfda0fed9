//! The sweep's axes, each declared once: its key in the experiment file and in every export,
//! its short and long titles, how its values are read from an experiment and printed, its
//! default, whether it changes the prompt (which decides exact groups and shared prefixes)
//! and whether it is part of the experiment's identity. [`Sweep::trials`] is the product
//! over [`Axis::ALL`]; the report's parameters, the CLI's table, `show --json`, the
//! app's builder and its results view all read this registry.
//!
//! The sweep's values ([`Sweep`]) and one point of it ([`TrialParams`]) live here too.
//! Adding an axis is one entry here, its fields in [`TrialParams`] and [`Sweep`] (with its
//! parsing in `experiment`), and the code that uses its value.

use serde::{Deserialize, Serialize};

use crate::quantization::Quantization;
use crate::rng::SplitMix64;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sweep {
    /// The judges' names (the `judge` axis); the experiment holds what each one is. In the
    /// identity through the judges themselves.
    #[serde(skip)]
    pub judges: Vec<String>,
    /// Built-in template names or `.jinja` paths; in the identity through the judge table.
    #[serde(skip)]
    pub templates: Vec<String>,
    pub temperature: Vec<f64>,
    pub top_p: Vec<f64>,
    pub max_tokens: Vec<u32>,
    pub few_shot: Vec<u32>,
    /// Longest few-shot example allowed, in prompt tokens; `None` means no limit.
    pub few_shot_max_tokens: Vec<Option<u32>>,
    /// Which examples of the pool a trial shows (`crate::split::examples`); left out while
    /// it is only 0 (the pool's first), like `order`.
    #[serde(skip_serializing_if = "only_first_set")]
    pub few_shot_set: Vec<u32>,
    /// Answer orders (pairwise); left out of the serialised form while it is the default,
    /// so that experiments written before it existed keep their identity.
    #[serde(skip_serializing_if = "Order::only_ab")]
    pub order: Vec<Order>,
    /// Output constraints; left out while it is only `none`, like `order`.
    #[serde(skip_serializing_if = "Constraint::only_none")]
    pub constraint: Vec<Constraint>,
    /// Requests in flight while a remote judge's latency is measured; `None`: the judge's
    /// own `concurrency`, with its latency read from its calls. Left out while it is only
    /// `None`, like `order`.
    #[serde(skip_serializing_if = "only_unset")]
    pub concurrency: Vec<Option<u32>>,
    /// How a rubric's criteria are asked (experiments with `[rubric]`); left out while it
    /// is only `rubric`, like `order`.
    #[serde(skip_serializing_if = "only_unset")]
    pub style: Vec<Option<Style>>,
    /// The local judges' model files as they are or made in other types (`source`,
    /// `Q8_0`, …); left out while unset (the files as they are), like `order`.
    #[serde(skip_serializing_if = "only_unset")]
    pub quantization: Vec<Option<Quantization>>,
    /// The longest input the judge is shown, in its tokens (`crate::cut`); `None`: the
    /// inputs whole. Left out while only `None`, like `order`.
    #[serde(skip_serializing_if = "only_unset")]
    pub input_max_tokens: Vec<Option<u32>>,
    /// How an input over its budget is shortened; left out while it is only `head_tail`,
    /// like `order`.
    #[serde(skip_serializing_if = "Shortening::only_head_tail")]
    pub input_strategy: Vec<Shortening>,
    pub repeats: u32,
    pub seed: u64,
    /// Judge a seeded random subset of this many of the grid's trials (`sample = 24`), for
    /// grids too large to enumerate; left out while unset, like `order`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sample: Option<usize>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Order {
    /// As in the dataset: answer A first.
    #[default]
    Ab,
    /// Swapped: answer B first (the verdict is mapped back to the dataset's labels).
    Ba,
    /// Both orders, two calls per item; the verdict is kept when they agree and is a tie
    /// when they do not (as MT-Bench does).
    Both,
    /// Both orders, two calls per item, combined by probability: the two calls' beliefs in
    /// A, B and tie averaged, the most likely one the verdict
    /// ([`crate::metrics::position::debias`]). A call without a belief is certain of its
    /// verdict, so that two such calls combine as `Both` does.
    Debiased,
}

crate::names!(Order {
    Ab => "ab",
    Ba => "ba",
    Both => "both",
    Debiased => "debiased",
});

impl Order {
    /// The calls of one verdict: whether each shows the answers swapped.
    pub fn calls(self) -> &'static [bool] {
        match self {
            Order::Ab => &[false],
            Order::Ba => &[true],
            Order::Both | Order::Debiased => &[false, true],
        }
    }

    fn is_ab(&self) -> bool {
        *self == Order::Ab
    }

    fn only_ab(orders: &[Order]) -> bool {
        orders == [Order::Ab]
    }
}

/// What restricts the judge's output.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Constraint {
    /// The judge writes what it likes; the parser finds the verdict or a failure.
    #[default]
    None,
    /// A GBNF grammar admits only the valid verdicts (`verdict::grammar`), so that parse
    /// failures cannot happen (local judges).
    Grammar,
}

crate::names!(Constraint {
    None => "none",
    Grammar => "grammar",
});

impl Constraint {
    fn is_none(&self) -> bool {
        *self == Constraint::None
    }

    fn only_none(constraints: &[Constraint]) -> bool {
        constraints == [Constraint::None]
    }
}

/// How an input longer than its budget (`input_max_tokens`) is shortened ([`crate::cut`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Shortening {
    /// Its start and its end, with a marker of what was cut between them.
    #[default]
    HeadTail,
    /// A summary of it written first by the summariser (`[summary] judge`, or the trial's
    /// own judge), stored and reused.
    Summary,
}

crate::names!(Shortening {
    HeadTail => "head_tail",
    Summary => "summary",
});

impl Shortening {
    fn is_head_tail(&self) -> bool {
        *self == Shortening::HeadTail
    }

    fn only_head_tail(strategies: &[Shortening]) -> bool {
        strategies == [Shortening::HeadTail]
    }
}

/// How a rubric's criteria are asked ([`crate::rubric`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Style {
    /// Every criterion in one call, answered with a value per criterion.
    #[default]
    Rubric,
    /// Each criterion in a call of its own, answered with one value.
    Checklist,
}

crate::names!(Style {
    Rubric => "rubric",
    Checklist => "checklist",
});

/// The parameters of one trial: one point of the grid (its axes: `crate::sweep`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TrialParams {
    /// The judge's name. Stored (and exported) as `model`: before named judges, a judge
    /// was its model as written, and stored trials keep their parameters.
    #[serde(rename = "model")]
    pub judge: String,
    pub template: String,
    pub temperature: f64,
    pub top_p: f64,
    pub max_tokens: u32,
    pub few_shot: u32,
    pub few_shot_max_tokens: Option<u32>,
    /// Absent from trials stored before example sets existed, which showed set 0.
    #[serde(default, skip_serializing_if = "is_first_set")]
    pub few_shot_set: u32,
    /// Absent from trials stored before the order axis existed, which were all `ab`.
    #[serde(default, skip_serializing_if = "Order::is_ab")]
    pub order: Order,
    /// Absent from trials stored before constraints existed, which had none.
    #[serde(default, skip_serializing_if = "Constraint::is_none")]
    pub constraint: Constraint,
    /// The load this trial's latency is measured at (remote judges): requests in flight.
    /// Absent where the sweep does not set it: the judge's calls are timed as they are made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<u32>,
    /// Its verdicts are read from the exact distribution of the first output token
    /// ([`crate::Experiment::exact`]), as the experiment decided when it created the trial.
    /// Absent from trials stored before exact verdicts were the default, which follow
    /// their judge's written `exact`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub exact: bool,
    /// Absent from trials stored before rubrics existed, and from trials without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub style: Option<Style>,
    /// The local judge's model file as it is (`source`, or unset) or made in another type
    /// by llama.cpp's quantiser. Absent where the sweep does not set it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quantization: Option<Quantization>,
    /// The question and each answer cut to at most this many of the judge's tokens
    /// ([`crate::cut`]). Absent where the sweep does not set it: the inputs whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_max_tokens: Option<u32>,
    /// How an input over `input_max_tokens` is shortened. Absent where it is `head_tail`,
    /// as every trial stored before summaries was.
    #[serde(default, skip_serializing_if = "Shortening::is_head_tail")]
    pub input_strategy: Shortening,
}

fn only_unset<T>(levels: &[Option<T>]) -> bool {
    matches!(levels, [None])
}

fn is_first_set(set: &u32) -> bool {
    *set == 0
}

fn only_first_set(sets: &[u32]) -> bool {
    sets == [0]
}

/// One axis of the sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Axis {
    Judge,
    Template,
    FewShot,
    FewShotMaxTokens,
    FewShotSet,
    MaxTokens,
    Temperature,
    TopP,
    Order,
    Constraint,
    Concurrency,
    Style,
    Quantization,
    InputMaxTokens,
    InputStrategy,
}

/// Where an axis is written in the experiment file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Section {
    Judge,
    Sweep,
}

/// What values an axis takes, and how they are checked where an experiment is read.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Kind {
    /// Real numbers from `min` (excluded when `above_min`) to `max`.
    Real { min: f64, max: f64, above_min: bool },
    /// Whole numbers from `min` to `max`.
    Count { min: u32, max: u32 },
    /// One of the axis's `choices`.
    Choice,
    /// A name: a file, a built-in, a model.
    Name,
}

/// Which experiments an axis applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Applies {
    All,
    /// Pairwise data only (answer order).
    Pairwise,
    /// Local judges only (a grammar needs llama.cpp's sampler).
    Local,
    /// Remote judges only (requests in flight at an endpoint).
    Remote,
    /// Rubric templates only (how their criteria are asked).
    Rubric,
}

/// What is declared of an axis.
pub struct AxisInfo {
    pub axis: Axis,
    /// The key in the experiment file, in `params` of `show --json` and in `trials.csv`.
    pub key: &'static str,
    /// Its name in exports (`params` of `show --json`, `trials.csv`) and in stored trials,
    /// where it differs from `key` for axes renamed since.
    pub export: &'static str,
    pub section: Section,
    /// The short form of chart point labels and the CLI's table header.
    pub short: &'static str,
    /// An axis title, with units where there are any.
    pub title: &'static str,
    /// What one value means, for the app's builder.
    pub help: &'static str,
    /// The value an experiment that does not name the axis sweeps, as written.
    pub default: &'static str,
    pub kind: Kind,
    pub applies: Applies,
    /// The values it may take, where they are a fixed set.
    pub choices: &'static [&'static str],
    /// Trials that differ in it show the judge other prompts: they cannot share an exact
    /// first-token pass or a decoded prefix.
    pub changes_prompt: bool,
    /// Part of each trial's stored parameters and of the experiment's content hash. An axis
    /// added after experiments were stored is written only away from its default (serde's
    /// `skip_serializing_if` on its field), so that they keep their identity.
    pub identity: bool,
    /// Values are numbers, plotted on a numeric axis.
    pub numeric: bool,
    /// A column of every trials table, even where no trial leaves the default; the other
    /// axes are shown only where some trial does.
    pub always_shown: bool,
    /// How many values the experiment sweeps.
    count: fn(&Sweep) -> usize,
    /// Sets the `i`-th of them in a trial's parameters.
    set: fn(&Sweep, usize, &mut TrialParams),
    /// A trial's value, exactly (as exported).
    text: fn(&TrialParams) -> String,
    /// A trial's value on a numeric axis.
    number: fn(&TrialParams) -> Option<f64>,
}

fn none(_: &TrialParams) -> Option<f64> {
    None
}

static AXES: [AxisInfo; 15] = [
    AxisInfo {
        axis: Axis::Judge,
        key: "judge",
        // A judge was its model before named judges.
        export: "model",
        section: Section::Sweep,
        short: "judge",
        title: "judge",
        help: "the judges of [[judges]] by name; with one [judge] table, its models",
        default: "",
        kind: Kind::Name,
        applies: Applies::All,
        choices: &[],
        changes_prompt: true,
        identity: true,
        numeric: false,
        always_shown: true,
        count: |s| s.judges.len(),
        set: |s, i, p| p.judge = s.judges[i].clone(),
        text: |p| p.judge.clone(),
        number: none,
    },
    AxisInfo {
        axis: Axis::Template,
        key: "template",
        export: "template",
        section: Section::Judge,
        short: "tpl",
        title: "template",
        help: "a built-in template name or a .jinja file",
        default: "",
        kind: Kind::Name,
        applies: Applies::All,
        choices: &[],
        changes_prompt: true,
        identity: true,
        numeric: false,
        always_shown: true,
        count: |s| s.templates.len(),
        set: |s, i, p| p.template = s.templates[i].clone(),
        text: |p| p.template.clone(),
        number: none,
    },
    AxisInfo {
        axis: Axis::FewShot,
        key: "few_shot",
        export: "few_shot",
        section: Section::Sweep,
        short: "shots",
        title: "few-shot examples",
        help: "examples shown before the item, from the reserved pool (0 to 64)",
        default: "0",
        kind: Kind::Count { min: 0, max: 64 },
        applies: Applies::All,
        choices: &[],
        changes_prompt: true,
        identity: true,
        numeric: true,
        always_shown: true,
        count: |s| s.few_shot.len(),
        set: |s, i, p| p.few_shot = s.few_shot[i],
        text: |p| p.few_shot.to_string(),
        number: |p| Some(f64::from(p.few_shot)),
    },
    AxisInfo {
        axis: Axis::FewShotMaxTokens,
        key: "few_shot_max_tokens",
        export: "few_shot_max_tokens",
        section: Section::Sweep,
        short: "shot_len",
        title: "longest few-shot example (tokens)",
        help: "the longest example allowed, in the judge's tokens; none: any",
        default: "",
        kind: Kind::Count {
            min: 1,
            max: 1 << 20,
        },
        applies: Applies::All,
        choices: &[],
        changes_prompt: true,
        identity: true,
        numeric: true,
        always_shown: false,
        count: |s| s.few_shot_max_tokens.len(),
        set: |s, i, p| p.few_shot_max_tokens = s.few_shot_max_tokens[i],
        text: |p| {
            p.few_shot_max_tokens
                .map_or(String::new(), |n| n.to_string())
        },
        number: |p| p.few_shot_max_tokens.map(f64::from),
    },
    AxisInfo {
        axis: Axis::FewShotSet,
        key: "few_shot_set",
        export: "few_shot_set",
        section: Section::Sweep,
        short: "shot_set",
        title: "few-shot example set",
        help: "which examples: 0 shows the pool's first, another number a seeded draw from the pool ([limits] pool sets its size)",
        default: "0",
        kind: Kind::Count {
            min: 0,
            max: 1_000_000,
        },
        applies: Applies::All,
        choices: &[],
        changes_prompt: true,
        identity: true,
        // A seed names a draw: its number orders nothing.
        numeric: false,
        always_shown: false,
        count: |s| s.few_shot_set.len(),
        set: |s, i, p| p.few_shot_set = s.few_shot_set[i],
        text: |p| p.few_shot_set.to_string(),
        number: none,
    },
    AxisInfo {
        axis: Axis::MaxTokens,
        key: "max_tokens",
        export: "max_tokens",
        section: Section::Sweep,
        short: "max_tok",
        title: "max_tokens (tokens)",
        help: "the most tokens a verdict may take (1 to 65536)",
        default: "8",
        kind: Kind::Count { min: 1, max: 65536 },
        applies: Applies::All,
        choices: &[],
        changes_prompt: false,
        identity: true,
        numeric: true,
        always_shown: true,
        count: |s| s.max_tokens.len(),
        set: |s, i, p| p.max_tokens = s.max_tokens[i],
        text: |p| p.max_tokens.to_string(),
        number: |p| Some(f64::from(p.max_tokens)),
    },
    AxisInfo {
        axis: Axis::Temperature,
        key: "temperature",
        export: "temperature",
        section: Section::Sweep,
        short: "temp",
        title: "temperature",
        help: "sampling temperature (0 to 10; 0 is greedy)",
        default: "0",
        kind: Kind::Real {
            min: 0.0,
            max: 10.0,
            above_min: false,
        },
        applies: Applies::All,
        choices: &[],
        changes_prompt: false,
        identity: true,
        numeric: true,
        always_shown: true,
        count: |s| s.temperature.len(),
        set: |s, i, p| p.temperature = s.temperature[i],
        text: |p| p.temperature.to_string(),
        number: |p| Some(p.temperature),
    },
    AxisInfo {
        axis: Axis::TopP,
        key: "top_p",
        export: "top_p",
        section: Section::Sweep,
        short: "top_p",
        title: "top_p",
        help: "nucleus sampling: the smallest set of tokens this likely (above 0, at most 1)",
        default: "1",
        kind: Kind::Real {
            min: 0.0,
            max: 1.0,
            above_min: true,
        },
        applies: Applies::All,
        choices: &[],
        changes_prompt: false,
        identity: true,
        numeric: true,
        always_shown: true,
        count: |s| s.top_p.len(),
        set: |s, i, p| p.top_p = s.top_p[i],
        text: |p| p.top_p.to_string(),
        number: |p| Some(p.top_p),
    },
    AxisInfo {
        axis: Axis::Order,
        key: "order",
        export: "order",
        section: Section::Sweep,
        short: "order",
        title: "answer order",
        help: "pairwise answer order: ab, ba, both (each item judged twice, a tie where the orders disagree) or debiased (judged twice, the two orders' probabilities averaged)",
        default: "ab",
        kind: Kind::Choice,
        applies: Applies::Pairwise,
        choices: &["ab", "ba", "both", "debiased"],
        changes_prompt: true,
        identity: true,
        numeric: false,
        always_shown: false,
        count: |s| s.order.len(),
        set: |s, i, p| p.order = s.order[i],
        text: |p| p.order.name().to_string(),
        number: none,
    },
    AxisInfo {
        axis: Axis::Constraint,
        key: "constraint",
        export: "constraint",
        section: Section::Sweep,
        short: "constraint",
        title: "output constraint",
        help: "local judges: none, or grammar (a GBNF that admits only valid verdicts)",
        default: "none",
        kind: Kind::Choice,
        applies: Applies::Local,
        choices: &["none", "grammar"],
        // A grammar leaves the prompt as it is: trials that differ only in it could share a
        // decoded prefix, but a grammar changes every generated token, so they are never
        // one exact group.
        changes_prompt: true,
        identity: true,
        numeric: false,
        always_shown: false,
        count: |s| s.constraint.len(),
        set: |s, i, p| p.constraint = s.constraint[i],
        text: |p| p.constraint.name().to_string(),
        number: none,
    },
    AxisInfo {
        axis: Axis::Concurrency,
        key: "concurrency",
        export: "concurrency",
        section: Section::Sweep,
        short: "conc",
        title: "requests in flight",
        help: "remote judges: the load each trial's latency is measured at, in requests in flight; its verdicts are shared, not asked again",
        default: "",
        kind: Kind::Count { min: 1, max: 1024 },
        applies: Applies::Remote,
        choices: &[],
        // The same request at another load. A call's response cache key is what the judge
        // is sent, and a group makes the calls of one key once: the levels share verdicts.
        changes_prompt: false,
        // A level is a trial of its own, stored with its parameters.
        identity: true,
        numeric: true,
        always_shown: false,
        count: |s| s.concurrency.len(),
        set: |s, i, p| p.concurrency = s.concurrency[i],
        text: |p| p.concurrency.map_or(String::new(), |n| n.to_string()),
        number: |p| p.concurrency.map(f64::from),
    },
    AxisInfo {
        axis: Axis::Style,
        key: "style",
        export: "style",
        section: Section::Sweep,
        short: "style",
        title: "rubric style",
        help: "rubric templates: rubric (every criterion in one call, the default) or checklist (a call per criterion)",
        default: "",
        kind: Kind::Choice,
        applies: Applies::Rubric,
        choices: &["rubric", "checklist"],
        changes_prompt: true,
        identity: true,
        numeric: false,
        always_shown: false,
        count: |s| s.style.len(),
        set: |s, i, p| p.style = s.style[i],
        text: |p| p.style.map_or(String::new(), |s| s.name().to_string()),
        number: none,
    },
    AxisInfo {
        axis: Axis::Quantization,
        key: "quantization",
        export: "quantization",
        section: Section::Sweep,
        short: "quant",
        title: "quantisation",
        help: "local judges: the model file as it is (source) or made in another type by llama.cpp's quantiser, once, into the model cache",
        default: "source",
        kind: Kind::Choice,
        applies: Applies::Local,
        choices: &[
            "source", "F16", "Q8_0", "Q6_K", "Q5_K_M", "Q5_1", "Q5_0", "Q4_K_M", "Q4_1", "Q4_0",
            "Q3_K_M", "Q2_K",
        ],
        // Another model file: no pass or prefix is shared with another level.
        changes_prompt: true,
        identity: true,
        numeric: false,
        always_shown: false,
        count: |s| s.quantization.len(),
        set: |s, i, p| p.quantization = s.quantization[i],
        text: |p| p.quantization.unwrap_or(Quantization::Source).name().to_string(),
        number: none,
    },
    AxisInfo {
        axis: Axis::InputMaxTokens,
        key: "input_max_tokens",
        export: "input_max_tokens",
        section: Section::Sweep,
        short: "in_len",
        title: "longest input (tokens)",
        help: "the question and each answer cut to at most this many of the judge's tokens, keeping their start and end with a marker of what was cut; none: whole",
        default: "",
        // An input cut shorter than this shows the judge little more than the marker of
        // what was cut.
        kind: Kind::Count {
            min: 16,
            max: 1 << 20,
        },
        applies: Applies::All,
        choices: &[],
        changes_prompt: true,
        // Written only where set, like `order`.
        identity: true,
        numeric: true,
        always_shown: false,
        count: |s| s.input_max_tokens.len(),
        set: |s, i, p| p.input_max_tokens = s.input_max_tokens[i],
        text: |p| p.input_max_tokens.map_or(String::new(), |n| n.to_string()),
        number: |p| p.input_max_tokens.map(f64::from),
    },
    AxisInfo {
        axis: Axis::InputStrategy,
        key: "input_strategy",
        export: "input_strategy",
        section: Section::Sweep,
        short: "in_by",
        title: "inputs shortened by",
        help: "how an input over input_max_tokens is shortened: head_tail (its start and end, with a marker of what was cut) or summary (a summary of at most that many tokens, written first by [summary] judge or the trial's own judge)",
        default: "head_tail",
        kind: Kind::Choice,
        applies: Applies::All,
        choices: &["head_tail", "summary"],
        changes_prompt: true,
        // Written only where set, like `order`.
        identity: true,
        numeric: false,
        always_shown: false,
        count: |s| s.input_strategy.len(),
        set: |s, i, p| p.input_strategy = s.input_strategy[i],
        text: |p| p.input_strategy.name().to_string(),
        number: none,
    },
];

impl Axis {
    /// Every axis, in the order trials expand (the last varies fastest).
    pub const ALL: [Axis; 15] = [
        Axis::Judge,
        Axis::Template,
        Axis::FewShot,
        Axis::FewShotMaxTokens,
        Axis::FewShotSet,
        Axis::MaxTokens,
        Axis::Temperature,
        Axis::TopP,
        Axis::Order,
        Axis::Constraint,
        Axis::Concurrency,
        Axis::Style,
        Axis::Quantization,
        Axis::InputMaxTokens,
        Axis::InputStrategy,
    ];

    pub fn info(self) -> &'static AxisInfo {
        let info = &AXES[self as usize];
        debug_assert_eq!(info.axis, self);
        info
    }

    pub fn key(self) -> &'static str {
        self.info().key
    }

    pub fn short(self) -> &'static str {
        self.info().short
    }

    pub fn export(self) -> &'static str {
        self.info().export
    }

    pub fn title(self) -> &'static str {
        self.info().title
    }

    pub fn from_key(key: &str) -> Option<Axis> {
        Axis::ALL.into_iter().find(|a| a.key() == key)
    }

    /// A trial's value, exactly as exported (an unlimited few-shot length is empty).
    pub fn text(self, p: &TrialParams) -> String {
        (self.info().text)(p)
    }

    /// A trial's value as a label shows it: a judge that is a model file by its stem, an unlimited
    /// few-shot length as `any`.
    pub fn label(self, p: &TrialParams) -> String {
        match self {
            // A judge named by its file (the single form): by the file's stem.
            Axis::Judge if p.judge.ends_with(".gguf") => std::path::Path::new(&p.judge)
                .file_stem()
                .map_or(p.judge.clone(), |f| f.to_string_lossy().into_owned()),
            Axis::FewShotMaxTokens if p.few_shot_max_tokens.is_none() => "any".into(),
            Axis::Concurrency if p.concurrency.is_none() => "judge's".into(),
            Axis::InputMaxTokens if p.input_max_tokens.is_none() => "whole".into(),
            // Whole inputs are not shortened.
            Axis::InputStrategy if p.input_max_tokens.is_none() => "—".into(),
            _ => self.text(p),
        }
    }

    /// A trial's value on a numeric axis; `None` for categories.
    pub fn number(self, p: &TrialParams) -> Option<f64> {
        (self.info().number)(p)
    }

    /// Whether two trials agree on this axis.
    pub fn same(self, p: &TrialParams, q: &TrialParams) -> bool {
        self.text(p) == self.text(q)
    }

    /// How many values `sweep` has on this axis.
    pub fn count(self, sweep: &Sweep) -> usize {
        (self.info().count)(sweep)
    }

    /// Whether the trial's value is the axis's default (an axis left at it is not shown).
    pub fn is_default(self, p: &TrialParams) -> bool {
        self.text(p) == self.info().default
    }
}

/// The axes a table of `trials` shows: those always shown, and the others where some trial
/// leaves the default.
pub fn shown(trials: &[&TrialParams]) -> Vec<Axis> {
    Axis::ALL
        .into_iter()
        .filter(|a| a.info().always_shown || trials.iter().any(|p| !a.is_default(p)))
        .collect()
}

/// A trial's parameters as `axis=value`, those a table of it alone shows.
pub fn describe(p: &TrialParams) -> String {
    shown(&[p])
        .into_iter()
        .map(|a| format!("{}={}", a.short(), a.label(p)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Trials whose prompts are the same: they differ only in axes that do not change it.
pub fn same_prompts(p: &TrialParams, q: &TrialParams) -> bool {
    Axis::ALL
        .into_iter()
        .filter(|a| a.info().changes_prompt)
        .all(|a| a.same(p, q))
}

/// Trials whose timed requests take the same time: the same prompt, max_tokens and
/// constraint, and outputs as long whatever they sample, because they stop after one
/// token or decode greedily (top_p does nothing at temperature 0). A trial that samples
/// a longer output keeps its own temperature and top_p.
pub fn same_request_shape(p: &TrialParams, q: &TrialParams) -> bool {
    let same_output = p.max_tokens <= 1
        || (p.temperature == 0.0 && q.temperature == 0.0)
        || (p.temperature == q.temperature && p.top_p == q.top_p);
    same_prompts(p, q)
        && p.max_tokens == q.max_tokens
        && p.concurrency == q.concurrency
        && same_output
}

impl Sweep {
    /// Every point of the grid: the product over [`Axis::ALL`], in that order (the last
    /// varies fastest); with `sample`, that many of them, drawn by the seed.
    pub fn trials(&self) -> Vec<TrialParams> {
        let out = self.grid();
        match self.sample {
            Some(k) if k < out.len() => {
                // Drawn by the sweep's seed, kept in grid order.
                let mut chosen: Vec<usize> = (0..out.len()).collect();
                SplitMix64::new(self.seed ^ 0x5A3F_1E5E_7B1D_0C4A).shuffle(&mut chosen);
                chosen.truncate(k);
                chosen.sort_unstable();
                chosen.into_iter().map(|i| out[i].clone()).collect()
            }
            _ => out,
        }
    }

    /// Every point of the grid, but one for whole inputs however many strategies of
    /// shortening them the sweep has: they shorten nothing.
    fn grid(&self) -> Vec<TrialParams> {
        let mut out = vec![TrialParams::default()];
        for axis in Axis::ALL {
            let info = axis.info();
            let n = (info.count)(self);
            out = out
                .into_iter()
                .flat_map(|p| {
                    (0..n).map(move |i| {
                        let mut p = p.clone();
                        (info.set)(self, i, &mut p);
                        p
                    })
                })
                .collect();
        }
        let first = self.input_strategy[0];
        out.retain(|p| p.input_max_tokens.is_some() || p.input_strategy == first);
        for p in out.iter_mut().filter(|p| p.input_max_tokens.is_none()) {
            p.input_strategy = Shortening::HeadTail;
        }
        out
    }

    /// The number of points of the full grid, before any `sample`.
    pub fn grid_size(&self) -> usize {
        self.grid().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registry_is_in_the_order_of_its_enum_and_keys_are_unique() {
        for (i, axis) in Axis::ALL.into_iter().enumerate() {
            assert_eq!(AXES[i].axis, axis);
            assert_eq!(axis as usize, i);
            assert_eq!(Axis::from_key(axis.key()), Some(axis));
        }
    }

    #[test]
    fn defaults_are_what_an_experiment_without_the_axis_sweeps() {
        let e = crate::Experiment::from_toml(
            "e.toml",
            "name = \"e\"\ndataset = \"d\"\n[judge]\ntemplate = \"pairwise\"\n",
        )
        .unwrap();
        let trials = e.trials();
        assert_eq!(trials.len(), 1);
        for axis in Axis::ALL {
            if ![Axis::Template, Axis::Judge].contains(&axis) {
                assert!(axis.is_default(&trials[0]), "{axis:?}");
            }
        }
    }

    #[test]
    fn requests_share_a_shape_where_sampling_cannot_change_their_length() {
        let base = TrialParams {
            judge: "m".into(),
            template: "pairwise".into(),
            temperature: 0.7,
            top_p: 0.9,
            max_tokens: 1,
            ..TrialParams::default()
        };
        let with = |f: &dyn Fn(&mut TrialParams)| {
            let mut p = base.clone();
            f(&mut p);
            p
        };
        let shape = |q: &TrialParams| same_request_shape(&base, q) && same_request_shape(q, &base);
        assert!(shape(&with(&|p| (p.temperature, p.top_p) = (1.2, 0.5))));
        assert!(!shape(&with(&|p| p.max_tokens = 4)));
        assert!(!shape(&with(&|p| p.few_shot = 2)));
        assert!(!shape(&with(&|p| p.constraint = Constraint::Grammar)));
        assert!(!shape(&with(&|p| p.order = Order::Both)));
        let long = with(&|p| p.max_tokens = 8);
        let other = |f: &dyn Fn(&mut TrialParams)| {
            let mut p = long.clone();
            f(&mut p);
            same_request_shape(&long, &p)
        };
        assert!(!other(&|p| p.temperature = 1.0));
        assert!(!other(&|p| p.top_p = 1.0));
        assert!(other(&|p| p.exact = true));
        let greedy = with(&|p| (p.max_tokens, p.temperature) = (8, 0.0));
        assert!(same_request_shape(
            &greedy,
            &TrialParams {
                top_p: 0.5,
                ..greedy.clone()
            }
        ));
    }
}
