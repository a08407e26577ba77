//! The one error type of edgemem.
//!
//! Every fallible call in the core, the store, the JS API and the Worker returns
//! [`Error`]. Each variant has a stable machine-readable [`Error::code`] that
//! surfaces as `err.code` on a JS `Error` and as `{"detail", "code"}` over HTTP.
//! Codes are part of the public API: never rename one, only add new ones.

use std::fmt;

/// Result alias used across the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong, as data. No variant carries a backtrace or a
/// foreign error type, so errors are cheap to clone and to send across the
/// JS boundary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// A request body or argument was not well-formed JSON (or not the JSON
    /// type expected at the top level). HTTP 400.
    InvalidJson { detail: String },
    /// A field is present but has the wrong type or an unacceptable value
    /// (empty id, unknown role, NaN, wrong shape). HTTP 422.
    InvalidInput { field: String, reason: String },
    /// An input is larger than its named limit in [`crate::core::limits`].
    /// HTTP 413.
    PayloadTooLarge { what: String, bytes: u64, bytes_max: u64 },
    /// A count limit would be exceeded (sessions, messages, page size). HTTP 422.
    LimitExceeded { what: String, limit: u64 },
    /// The addressed object does not exist (or has expired). HTTP 404.
    NotFound { kind: String, id: String },
    /// The id exists with different fields, or a state change conflicts with
    /// an earlier one (`code` says which, e.g.
    /// `account_exists_with_different_fields`). HTTP 409.
    Conflict { code: &'static str, id: String },
    /// A ledger rule refused the operation (`code` is a transfer result such
    /// as `exceeds_credits` or `pending_transfer_already_posted`). HTTP 422.
    Rejected { code: &'static str, id: String },
    /// A vector was refused: `code` is `dimension_mismatch` (wrong length
    /// for the namespace), `non_finite` (a NaN or infinite component) or
    /// `zero_vector` (all zeros under the cosine metric). HTTP 422.
    InvalidVector { code: &'static str, detail: String },
    /// A caller-supplied hook (summarizer, embedder, validator) threw, timed
    /// out, or returned something unusable. Nothing was changed. HTTP 502.
    HookFailed { hook: String, reason: String },
    /// Missing or wrong bearer token. HTTP 401.
    Unauthorized,
    /// The route exists but not with this HTTP method. HTTP 405.
    MethodNotAllowed { method: String },
    /// A snapshot failed its magic, length or checksum checks, or did not
    /// decode. Nothing was loaded from it.
    SnapshotCorrupt { reason: String },
    /// A snapshot or log record was written by a newer edgemem whose schema
    /// this build does not know. Nothing was loaded; upgrade edgemem.
    SchemaVersionUnsupported { found: u32, supported_max: u32 },
    /// An op-log record failed its checks, or the log has a gap.
    LogCorrupt { seq: u64, reason: String },
    /// The storage adapter failed to read or write. The in-memory state is
    /// reloaded from storage before the next call, so nothing half-written
    /// is ever served.
    Storage { detail: String },
    /// A storage adapter was used for something it must not hold (for
    /// example Workers KV, which is eventually consistent, as the primary
    /// store of an op log).
    StoreUnsuitable { detail: String },
    /// An invariant of edgemem itself was broken. This is a bug; please
    /// report it. HTTP 500.
    Internal { detail: String },
}

impl Error {
    /// The stable machine-readable code of this error.
    pub fn code(&self) -> &'static str {
        match self {
            Error::InvalidJson { .. } => "invalid_json",
            Error::InvalidInput { .. } => "invalid_input",
            Error::PayloadTooLarge { .. } => "payload_too_large",
            Error::LimitExceeded { .. } => "limit_exceeded",
            Error::NotFound { .. } => "not_found",
            Error::Conflict { code, .. } | Error::Rejected { code, .. } => code,
            Error::InvalidVector { code, .. } => code,
            Error::HookFailed { .. } => "hook_failed",
            Error::Unauthorized => "unauthorized",
            Error::MethodNotAllowed { .. } => "method_not_allowed",
            Error::SnapshotCorrupt { .. } => "snapshot_corrupt",
            Error::SchemaVersionUnsupported { .. } => "schema_version_unsupported",
            Error::LogCorrupt { .. } => "log_corrupt",
            Error::Storage { .. } => "storage_error",
            Error::StoreUnsuitable { .. } => "store_unsuitable",
            Error::Internal { .. } => "internal",
        }
    }

    /// Shorthand for [`Error::InvalidInput`].
    pub fn invalid(field: impl Into<String>, reason: impl Into<String>) -> Error {
        Error::InvalidInput { field: field.into(), reason: reason.into() }
    }

    /// Shorthand for [`Error::PayloadTooLarge`].
    pub fn too_large(what: impl Into<String>, bytes: usize, bytes_max: usize) -> Error {
        Error::PayloadTooLarge { what: what.into(), bytes: bytes as u64, bytes_max: bytes_max as u64 }
    }

    /// Shorthand for [`Error::NotFound`].
    pub fn not_found(kind: impl Into<String>, id: impl Into<String>) -> Error {
        Error::NotFound { kind: kind.into(), id: id.into() }
    }

    /// Shorthand for [`Error::Conflict`].
    pub fn conflict(code: &'static str, id: impl Into<String>) -> Error {
        Error::Conflict { code, id: id.into() }
    }

    /// Shorthand for [`Error::Storage`].
    pub fn storage(detail: impl Into<String>) -> Error {
        Error::Storage { detail: detail.into() }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidJson { detail } => write!(f, "invalid JSON: {detail}"),
            Error::InvalidInput { field, reason } => write!(f, "invalid {field}: {reason}"),
            Error::PayloadTooLarge { what, bytes, bytes_max } => {
                write!(f, "{what} is {bytes} bytes, over the limit of {bytes_max} bytes")
            }
            Error::LimitExceeded { what, limit } => write!(f, "{what} would exceed the limit of {limit}"),
            Error::NotFound { kind, id } => write!(f, "{kind} not found: {id}"),
            Error::Conflict { code, id } => write!(f, "{id}: {}", code.replace('_', " ")),
            Error::Rejected { code, id } => write!(f, "{id}: {}", code.replace('_', " ")),
            Error::InvalidVector { code, detail } => write!(f, "invalid vector ({}): {detail}", code.replace('_', " ")),
            Error::HookFailed { hook, reason } => write!(f, "{hook} hook failed: {reason}; nothing was changed"),
            Error::Unauthorized => write!(f, "missing or invalid bearer token"),
            Error::MethodNotAllowed { method } => write!(f, "method {method} is not allowed on this route"),
            Error::SnapshotCorrupt { reason } => write!(f, "snapshot is corrupt: {reason}"),
            Error::SchemaVersionUnsupported { found, supported_max } => write!(
                f,
                "schema version {found} is newer than this edgemem supports ({supported_max}); upgrade edgemem"
            ),
            Error::LogCorrupt { seq, reason } => write!(f, "op log record {seq} is corrupt: {reason}"),
            Error::Storage { detail } => write!(f, "storage failed: {detail}"),
            Error::StoreUnsuitable { detail } => write!(f, "store unsuitable: {detail}"),
            Error::Internal { detail } => write!(f, "internal error (a bug in edgemem): {detail}"),
        }
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_snake_case() {
        let all = [
            Error::InvalidJson { detail: String::new() },
            Error::invalid("f", "r"),
            Error::too_large("body", 2, 1),
            Error::LimitExceeded { what: "x".into(), limit: 1 },
            Error::not_found("session", "s"),
            Error::InvalidVector { code: "dimension_mismatch", detail: String::new() },
            Error::HookFailed { hook: "summarizer".into(), reason: String::new() },
            Error::Unauthorized,
            Error::MethodNotAllowed { method: "PATCH".into() },
            Error::SnapshotCorrupt { reason: String::new() },
            Error::SchemaVersionUnsupported { found: 9, supported_max: 1 },
            Error::LogCorrupt { seq: 1, reason: String::new() },
            Error::storage("x"),
            Error::StoreUnsuitable { detail: String::new() },
            Error::Internal { detail: String::new() },
        ];
        let mut codes: Vec<&str> = all.iter().map(Error::code).collect();
        assert!(codes.iter().all(|c| c.chars().all(|ch| ch.is_ascii_lowercase() || ch == '_')));
        codes.sort_unstable();
        let n = codes.len();
        codes.dedup();
        assert_eq!(codes.len(), n, "duplicate error code");
    }

    #[test]
    fn display_names_the_limit() {
        let e = Error::too_large("request body", 2_000_000, 1_048_576);
        assert_eq!(e.to_string(), "request body is 2000000 bytes, over the limit of 1048576 bytes");
    }
}
