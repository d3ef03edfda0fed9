//! The names of the domain's enums, one way to and from them: an enum's variants and their
//! names are declared once with [`names!`](crate::names!), which gives it `ALL`, `name()`,
//! [`FromStr`](std::str::FromStr) and [`Display`](std::fmt::Display). Experiment files, the
//! command line, the store, exports and the app read and write those names; each enum's
//! serde name is held to the same one by a test.

/// A name that is none of an enum's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{given:?} is not one of {expected}")]
pub struct UnknownName {
    pub given: String,
    /// The names it could be, `, `-separated.
    pub expected: String,
}

impl UnknownName {
    pub fn new(given: &str, names: &[&str]) -> UnknownName {
        UnknownName {
            given: given.to_string(),
            expected: names.join(", "),
        }
    }
}

/// Declares the names of a fieldless enum's variants: `names!(Order { Ab => "ab", … })`
/// gives `Order::ALL` (in the order written), `Order::name(self)`, `FromStr` (an
/// [`UnknownName`] error names the choices) and `Display`. `names!(T, ignore_case { … })`
/// parses a name whatever its case.
#[macro_export]
macro_rules! names {
    ($ty:ident { $($variant:ident => $name:literal),+ $(,)? }) => {
        $crate::names!(@impl $ty, |a: &str, b: &str| a == b, $($variant => $name),+);
    };
    ($ty:ident, ignore_case { $($variant:ident => $name:literal),+ $(,)? }) => {
        $crate::names!(@impl $ty, |a: &str, b: &str| a.eq_ignore_ascii_case(b), $($variant => $name),+);
    };
    (@impl $ty:ident, $same:expr, $($variant:ident => $name:literal),+) => {
        impl $ty {
            /// Every variant, in the order its names are declared.
            pub const ALL: [$ty; [$($name),+].len()] = [$($ty::$variant),+];

            /// Its name: as written in experiment files and on the command line, and as
            /// stored and exported.
            pub const fn name(self) -> &'static str {
                match self {
                    $($ty::$variant => $name),+
                }
            }
        }

        impl ::std::str::FromStr for $ty {
            type Err = $crate::names::UnknownName;

            fn from_str(text: &str) -> Result<Self, Self::Err> {
                let same = $same;
                $ty::ALL
                    .into_iter()
                    .find(|v| same(v.name(), text))
                    .ok_or_else(|| $crate::names::UnknownName::new(text, &$ty::ALL.map($ty::name)))
            }
        }

        impl ::std::fmt::Display for $ty {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use std::fmt::Display;
    use std::str::FromStr;

    use serde::Serialize;

    use crate::dataset::Choice;
    use crate::experiment::{PanelRule, Style, Ties};
    use crate::metrics::Quality;
    use crate::pareto::{Cost, FrontStatus};
    use crate::quantization::Quantization;
    use crate::trust::belief::ConfidenceKind;
    use crate::{Constraint, FailureKind, Order, OutputKind};

    /// Each name parses back to its variant, serde writes the same name, and a name that is
    /// none of them says which they are.
    fn check<T>(all: &[T])
    where
        T: Copy + PartialEq + std::fmt::Debug + Display + FromStr<Err = super::UnknownName>,
        T: Serialize,
    {
        for &v in all {
            let name = v.to_string();
            assert_eq!(name.parse::<T>(), Ok(v), "{name}");
            assert_eq!(
                serde_json::to_value(v).unwrap(),
                serde_json::Value::String(name.clone()),
                "serde's name of {v:?}"
            );
        }
        let err = "no such name".parse::<T>().unwrap_err();
        assert!(err.to_string().contains(&all[0].to_string()), "{err}");
    }

    #[test]
    fn every_enum_reads_and_writes_one_name() {
        check(&Order::ALL);
        check(&Constraint::ALL);
        check(&Style::ALL);
        check(&OutputKind::ALL);
        check(&FailureKind::ALL);
        check(&PanelRule::ALL);
        check(&Ties::ALL);
        check(&Quality::ALL);
        check(&Cost::ALL);
        check(&FrontStatus::ALL);
        check(&ConfidenceKind::ALL);
        check(&Choice::ALL);
        check(&Quantization::ALL);
        assert_eq!("q4_k_m".parse(), Ok(Quantization::Q4KM));
    }
}
