//! How far to trust a judge: what a judge believed of each call ([`belief`]), each verdict's
//! confidence ([`confidence`]), how well those confidences are calibrated ([`calibration`]), and the
//! share of items a judge can decide alone at a target agreement, with a guarantee
//! ([`selective`]), cascades that send the rest to a stronger judge ([`cascade`]), and
//! estimates on unlabelled data corrected with the labelled items ([`estimate`]), made from
//! a trial's verdicts on items without a label ([`unlabelled`]).

pub mod belief;
pub mod calibration;
pub mod cascade;
pub mod confidence;
pub mod estimate;
pub mod selective;
pub mod unlabelled;

pub use belief::{Belief, ConfidenceKind};
pub use calibration::Calibration;
pub use confidence::Judged;
pub use selective::{Selective, Target};

#[cfg(test)]
mod reference_tests;
