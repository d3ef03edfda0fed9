//! The error every command returns: a code the UI reacts to, and a message it shows.

use serde::Serialize;
use specta::Type;

use judgelab_engine::EngineError;

/// What kind of failure, for the UI to react to; it never matches on message text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The user's input is at fault: a bad dataset line, experiment key, template or value.
    InvalidInput,
    /// A name that does not exist (dataset, experiment, trial, verdict).
    NotFound,
    /// The experiment exists with different content: rename it or replace it.
    ExperimentChanged,
    /// A run of this experiment is already going.
    AlreadyRunning,
    /// The default model file is missing: `fetch_default_model` fetches it.
    ModelMissing,
    /// This CPU lacks instructions the local judge's kernels need; remote judges work.
    UnsupportedCpu,
    /// Anything else: the machine, the model, the database.
    Internal,
}

/// A failed command.
#[derive(Debug, Clone, Serialize, Type)]
pub struct AppError {
    pub code: ErrorCode,
    /// One line for a heading.
    pub message: String,
    /// Further lines, each a problem with its place (`file:line: field: problem`).
    pub details: Vec<String>,
}

pub type AppResult<T> = Result<T, AppError>;

impl AppError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> AppError {
        AppError {
            code,
            message: message.into(),
            details: Vec::new(),
        }
    }

    pub fn invalid(message: impl Into<String>) -> AppError {
        AppError::new(ErrorCode::InvalidInput, message)
    }

    pub fn not_found(message: impl Into<String>) -> AppError {
        AppError::new(ErrorCode::NotFound, message)
    }

    pub fn internal(message: impl Into<String>) -> AppError {
        AppError::new(ErrorCode::Internal, message)
    }
}

/// The error and its causes, `: `-separated, leaving out a cause the text before it already
/// says (as the CLI prints errors).
pub fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = String::new();
    let mut next = Some(e);
    while let Some(cause) = next {
        let text = cause.to_string();
        if !out.contains(&text) {
            if !out.is_empty() {
                out.push_str(": ");
            }
            out.push_str(&text);
        }
        next = cause.source();
    }
    out
}

impl From<EngineError> for AppError {
    fn from(e: EngineError) -> AppError {
        let code = match &e {
            EngineError::Changed { .. } => ErrorCode::ExperimentChanged,
            EngineError::UnknownExperiment(_) => ErrorCode::NotFound,
            e if e.is_already_running() => ErrorCode::AlreadyRunning,
            e if e.is_missing_model() => ErrorCode::ModelMissing,
            e if e.is_unsupported_cpu() => ErrorCode::UnsupportedCpu,
            e if e.is_invalid_input() => ErrorCode::InvalidInput,
            _ => ErrorCode::Internal,
        };
        let text = chain(&e);
        // Validation errors list their problems one per line; the first is the heading.
        let mut lines = text.lines().map(str::to_string);
        AppError {
            code,
            message: lines.next().unwrap_or_default(),
            details: lines.filter(|l| !l.trim().is_empty()).collect(),
        }
    }
}

/// A trial that is not there is not found; a metric the task lacks is the user's to fix.
impl From<judgelab_core::results::ResultsError> for AppError {
    fn from(e: judgelab_core::results::ResultsError) -> AppError {
        match e {
            judgelab_core::results::ResultsError::NoTrial { .. } => {
                AppError::not_found(e.to_string())
            }
            _ => AppError::invalid(e.to_string()),
        }
    }
}

impl From<judgelab_store::StoreError> for AppError {
    fn from(e: judgelab_store::StoreError) -> AppError {
        EngineError::from(e).into()
    }
}

impl From<judgelab_report::ReportError> for AppError {
    fn from(e: judgelab_report::ReportError) -> AppError {
        let code = if e.is_invalid_input() {
            ErrorCode::InvalidInput
        } else {
            ErrorCode::Internal
        };
        AppError::new(code, chain(&e))
    }
}

impl From<judgelab_report::ChartError> for AppError {
    fn from(e: judgelab_report::ChartError) -> AppError {
        AppError::internal(chain(&e))
    }
}
