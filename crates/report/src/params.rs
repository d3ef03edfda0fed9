//! The sweep parameters as a report names, labels and plots them.

use judgelab_core::TrialParams;

/// A sweep parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Param {
    Model,
    Template,
    FewShot,
    FewShotMaxTokens,
    MaxTokens,
    Temperature,
    TopP,
    Order,
}

impl Param {
    pub const ALL: [Param; 8] = [
        Param::Model,
        Param::Template,
        Param::FewShot,
        Param::FewShotMaxTokens,
        Param::MaxTokens,
        Param::Temperature,
        Param::TopP,
        Param::Order,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Param::Model => "model",
            Param::Template => "template",
            Param::FewShot => "few_shot",
            Param::FewShotMaxTokens => "few_shot_max_tokens",
            Param::MaxTokens => "max_tokens",
            Param::Temperature => "temperature",
            Param::TopP => "top_p",
            Param::Order => "order",
        }
    }

    /// The short form used in point labels.
    pub fn short(self) -> &'static str {
        match self {
            Param::Model => "model",
            Param::Template => "tpl",
            Param::FewShot => "shots",
            Param::FewShotMaxTokens => "shot_len",
            Param::MaxTokens => "max_tok",
            Param::Temperature => "temp",
            Param::TopP => "top_p",
            Param::Order => "order",
        }
    }

    /// An axis title, with units where there are any.
    pub fn title(self) -> &'static str {
        match self {
            Param::Model => "model",
            Param::Template => "template",
            Param::FewShot => "few-shot examples",
            Param::FewShotMaxTokens => "longest few-shot example (tokens)",
            Param::MaxTokens => "max_tokens (tokens)",
            Param::Temperature => "temperature",
            Param::TopP => "top_p",
            Param::Order => "answer order",
        }
    }

    pub fn text(self, p: &TrialParams) -> String {
        match self {
            Param::Model => std::path::Path::new(&p.model)
                .file_stem()
                .map_or(p.model.clone(), |f| f.to_string_lossy().into_owned()),
            Param::Template => p.template.clone(),
            Param::FewShot => p.few_shot.to_string(),
            Param::FewShotMaxTokens => p
                .few_shot_max_tokens
                .map_or("any".into(), |n| n.to_string()),
            Param::MaxTokens => p.max_tokens.to_string(),
            Param::Temperature => p.temperature.to_string(),
            Param::TopP => p.top_p.to_string(),
            Param::Order => p.order.as_str().to_string(),
        }
    }

    /// The value on a numeric axis; `None` for categories.
    pub fn number(self, p: &TrialParams) -> Option<f64> {
        match self {
            Param::FewShot => Some(p.few_shot as f64),
            Param::FewShotMaxTokens => p.few_shot_max_tokens.map(f64::from),
            Param::MaxTokens => Some(p.max_tokens as f64),
            Param::Temperature => Some(p.temperature),
            Param::TopP => Some(p.top_p),
            Param::Model | Param::Template | Param::Order => None,
        }
    }
}
