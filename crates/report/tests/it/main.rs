//! Integration tests of judgelab-report: every chart kind in both formats, at two sizes.
//!
//! Each rendered PNG is also written to `$JUDGELAB_CHARTS_DIR` when that variable is set, so
//! that a person can look at the charts after changing the layout.

mod alignment;
mod analysis;
mod charts;
mod findings;
mod fixture;
mod renderers;
mod sections;
