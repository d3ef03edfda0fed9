//! `[[panels]]`: judges that vote, composed from trials already run (see [`crate::panel`]).
//!
//! ```toml
//! [[panels]]
//! name = "vote3"
//! members = [1, 2, 3]   # trial ids, as `judgelab show` lists them
//! rule = "majority"     # or "mean" (ratings), or "distribution" (exact trials)
//! ties = "tie"          # a split vote: "tie" (pairwise, the default there), or "first"
//!                       # (the first listed member among the tied decides; ratings' default)
//! ```
//!
//! Outside the experiment's identity: a panel makes no call, so adding one to a finished
//! experiment resumes it judging nothing.

use serde::{Deserialize, Serialize};

use super::{checked_name, ExperimentError, Invalid};
use crate::dataset::Task;

/// How a panel combines its members' verdicts on an item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    /// The verdict most members gave; a split vote as `ties` says.
    #[default]
    Majority,
    /// Ratings: the mean of the members' scores (categorical metrics read it rounded, as
    /// they read every rating; correlations read it as it is).
    Mean,
    /// Exact trials: the most probable outcome of the mean of the members' distributions.
    Distribution,
}

crate::names!(Rule {
    Majority => "majority",
    Mean => "mean",
    Distribution => "distribution",
});

/// What a split vote gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ties {
    /// Pairwise: the panel says the answers tie.
    Tie,
    /// The first member, in the panel's order, whose verdict is among the most given.
    First,
}

crate::names!(Ties {
    Tie => "tie",
    First => "first",
});

impl Ties {
    /// The default for `task`: a tie for pairwise data, the first member for ratings.
    pub fn default_for(task: Task) -> Ties {
        match task {
            Task::Pairwise => Ties::Tie,
            Task::Single { .. } => Ties::First,
        }
    }
}

/// A panel as declared: a name, its members (trial ids), and how they vote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PanelSpec {
    pub name: String,
    pub members: Vec<i64>,
    #[serde(default)]
    pub rule: Rule,
    /// None: [`Ties::default_for`] the dataset's task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ties: Option<Ties>,
}

impl PanelSpec {
    /// Checks what can be checked without the experiment's trials: a name, two or more
    /// distinct members. The error names the field (`name`, `members`) and what is wrong.
    pub fn checked(self) -> Result<PanelSpec, (&'static str, String)> {
        let name = checked_name("name", &self.name, "._-", &|_, message| {
            ExperimentError::Parse {
                path: String::new(),
                message,
            }
        })
        .map_err(|e| match e {
            ExperimentError::Parse { message, .. } | ExperimentError::Invalid { message, .. } => {
                ("name", message)
            }
        })?;
        if self.members.len() < 2 {
            return Err((
                "members",
                format!(
                    "{:?} names {} trial{}: a panel needs two or more",
                    self.members,
                    self.members.len(),
                    if self.members.len() == 1 { "" } else { "s" }
                ),
            ));
        }
        for (i, m) in self.members.iter().enumerate() {
            if self.members[..i].contains(m) {
                return Err(("members", format!("trial {m} is listed twice")));
            }
        }
        Ok(PanelSpec { name, ..self })
    }

    /// The rule's and the ties' fit to `task`, as a message: a mean of choices, or a tie of
    /// ratings, means nothing.
    pub fn check_task(&self, task: Task) -> Result<(), String> {
        match (self.rule, task) {
            (Rule::Mean, Task::Pairwise) => {
                return Err(
                    "rule \"mean\" averages scores, and pairwise verdicts are choices: use \"majority\" or \"distribution\"".into(),
                )
            }
            (Rule::Distribution, _) if self.ties.is_some() => {
                return Err("ties: a mean distribution's most probable verdict is never split by a vote; remove ties".into())
            }
            (Rule::Mean, _) if self.ties.is_some() => {
                return Err("ties: a mean is never split by a vote; remove ties".into())
            }
            _ => {}
        }
        if let (Some(Ties::Tie), Task::Single { .. }) = (self.ties, task) {
            return Err(
                "ties = \"tie\" needs pairwise data: a rating has no tie; use \"first\"".into(),
            );
        }
        Ok(())
    }

    /// What a split vote gives on `task`.
    pub fn ties_for(&self, task: Task) -> Ties {
        self.ties.unwrap_or(Ties::default_for(task))
    }

    /// The `[[panels]]` entry that declares it, for an experiment file.
    pub fn to_toml(&self) -> String {
        let members: Vec<String> = self.members.iter().map(i64::to_string).collect();
        let mut out = format!(
            "[[panels]]\nname = {:?}\nmembers = [{}]\nrule = {:?}\n",
            self.name,
            members.join(", "),
            self.rule.name()
        );
        if let Some(t) = self.ties {
            out.push_str(&format!("ties = {:?}\n", t.name()));
        }
        out
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPanel {
    name: String,
    members: Vec<i64>,
    rule: Option<Rule>,
    ties: Option<Ties>,
}

pub(super) fn panels(
    raw: Vec<RawPanel>,
    invalid: &Invalid<'_>,
) -> Result<Vec<PanelSpec>, ExperimentError> {
    let mut out: Vec<PanelSpec> = Vec::with_capacity(raw.len());
    for (i, p) in raw.into_iter().enumerate() {
        let key = format!("panels[{i}]");
        let spec = PanelSpec {
            name: p.name,
            members: p.members,
            rule: p.rule.unwrap_or_default(),
            ties: p.ties,
        }
        .checked()
        .map_err(|(field, message)| invalid(&format!("{key}.{field}"), message))?;
        if out.iter().any(|o| o.name == spec.name) {
            return Err(invalid(
                &format!("{key}.name"),
                format!("{:?} names another panel too", spec.name),
            ));
        }
        out.push(spec);
    }
    Ok(out)
}
