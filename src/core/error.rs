//! The one error type of edgemem.
//!
//! Every fallible call in the core, the store, the JS API and the Worker returns
//! [`Error`]. Each variant has a stable machine-readable [`Error::code`] that
//! surfaces as `err.code` on a JS `Error` and as `{"detail", "code"}` over HTTP.
//! Codes are part of the public API: never rename one, only add new ones.

use std::fmt;

use crate::core::ledger::TransferResult;

/// Declares a closed set of error codes: an enum whose variants each have one
/// stable snake_case code, with `as_str` and `ALL` (for the registry that
/// `index.d.ts` is generated from).
macro_rules! codes {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident => $code:literal,)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name { $($(#[$vmeta])* $variant,)* }

        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];

            /// The stable snake_case code.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $code,)* }
            }
        }
    };
}
pub(crate) use codes;

codes! {
    /// Why an [`Error::Conflict`]: the id exists with other fields, or a
    /// state change conflicts with an earlier one. HTTP 409.
    ConflictCode {
        /// An asset code exists with another scale.
        AssetExistsWithDifferentScale => "asset_exists_with_different_scale",
        /// An account id exists with other fields.
        AccountExistsWithDifferentFields => "account_exists_with_different_fields",
        /// An execute-once intent was completed with another outcome.
        IntentCompletedWithDifferentOutcome => "intent_completed_with_different_outcome",
        /// An execute-once intent began and has no outcome yet (the process
        /// may have died mid-call): verify it, then complete it. Raised by
        /// the JS `executeOnce`.
        IntentOpen => "intent_open",
        /// A session changed between a compaction's plan and its apply.
        CompactionStale => "compaction_stale",
        /// Stored user state is at a schema version newer than the newest
        /// registered migration reaches: upgrade the reader.
        SchemaVersionTooNew => "schema_version_too_new",
        /// A migration's write-back found the state at another version than
        /// it migrated from (someone else wrote or migrated it): read again.
        SchemaVersionChanged => "schema_version_changed",
        /// A session's extraction watermark moved between a pass's read and
        /// its commit (another pass committed first): nothing was applied,
        /// and the next pass starts from the new watermark.
        ExtractionStale => "extraction_stale",
        /// An import into a namespace that already holds other state: it
        /// only fills an empty one (importing the same file again is a
        /// no-op, not this error).
        ImportTargetNotEmpty => "import_target_not_empty",
    }
}

codes! {
    /// Why an [`Error::InvalidVector`]. HTTP 422.
    VectorCode {
        /// Wrong length for the namespace or index, or rows that do not split.
        DimensionMismatch => "dimension_mismatch",
        /// A NaN, an infinity, or a component so large a dot product overflows.
        NonFinite => "non_finite",
        /// All zeros under the cosine metric.
        ZeroVector => "zero_vector",
        /// From another embedder than the namespace's stored vectors (see
        /// `core::longterm::reembed`); re-embedding moves the namespace.
        EmbedderMismatch => "embedder_mismatch",
    }
}

codes! {
    /// Which per-tenant quota an [`Error::QuotaExceeded`] names. HTTP 403.
    QuotaCode {
        /// Long-term records held by the tenant.
        Records => "records_quota_exceeded",
        /// Bytes the tenant's state takes in storage (snapshot and log).
        Bytes => "bytes_quota_exceeded",
        /// Ledger accounts held by the tenant.
        LedgerAccounts => "ledger_accounts_quota_exceeded",
    }
}

codes! {
    /// Why an [`Error::Rejected`] that is not a transfer result. HTTP 422.
    RuleCode {
        /// The agent's tool allow-list does not name the tool.
        ToolNotAllowed => "tool_not_allowed",
        /// A prompt validator refused a new system prompt. Raised by the JS
        /// `AgentConfig.setPrompt`.
        PromptRejected => "prompt_rejected",
        /// A prompt or patch breaks one of the agent's guardrails (a
        /// required clause missing, a forbidden pattern present, the token
        /// ceiling passed); the error's id names the rule. Nothing changed.
        GuardrailViolated => "guardrail_violated",
    }
}

/// What refused an operation: a ledger rule (a transfer result) or another rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rejection {
    /// A transfer result other than `created`/`exists`.
    Transfer(TransferResult),
    /// Any other rule.
    Rule(RuleCode),
}

impl Rejection {
    /// The stable snake_case code.
    pub fn as_str(self) -> &'static str {
        match self {
            Rejection::Transfer(r) => r.as_str(),
            Rejection::Rule(r) => r.as_str(),
        }
    }
}

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
    /// A query parameter is malformed: not a number, negative, or out of
    /// range (for example a feed `since` past the last committed change).
    /// HTTP 400.
    InvalidQuery { param: String, reason: String },
    /// A field is present but has the wrong type or an unacceptable value
    /// (empty id, unknown role, NaN, wrong shape). HTTP 422.
    InvalidInput { field: String, reason: String },
    /// An input is larger than its named limit in [`crate::core::limits`].
    /// HTTP 413.
    PayloadTooLarge { what: String, bytes: u64, bytes_max: u64 },
    /// A count limit would be exceeded (sessions, messages, page size). HTTP 422.
    LimitExceeded { what: String, limit: u64 },
    /// A value outside a closed set that the request names itself (a
    /// decision's `kind`): a malformed request, not a bad value of a well-formed
    /// one. HTTP 400.
    UnknownKind { field: String, value: String, allowed: String },
    /// The namespace requires consent for long-term memory and the user has
    /// not given it. Nothing was stored. HTTP 403.
    ConsentRequired { user_id: String },
    /// A secret (an API key, a token, a private key, a password) was found
    /// in a write and the namespace's policy is `reject`. Nothing was
    /// stored; the detail names the field and the kind, never the secret.
    /// HTTP 422.
    SecretDetected { field: String, kind: String },
    /// The addressed object does not exist (or has expired). HTTP 404.
    NotFound { kind: String, id: String },
    /// The id exists with different fields, or a state change conflicts with
    /// an earlier one (`code` says which). HTTP 409.
    Conflict { code: ConflictCode, id: String },
    /// A rule refused the operation: a ledger rule (`code` is a transfer
    /// result such as `exceeds_credits`) or another ([`RuleCode`]). HTTP 422.
    Rejected { code: Rejection, id: String },
    /// A vector was refused ([`VectorCode`] says why). HTTP 422.
    InvalidVector { code: VectorCode, detail: String },
    /// A caller-supplied hook (summarizer, embedder, validator) threw, timed
    /// out, or returned something unusable. Nothing was changed. HTTP 502.
    HookFailed { hook: String, reason: String },
    /// A user-state migration could not apply (a declarative step met a
    /// shape it cannot change, or a JS migration threw). Nothing was
    /// written. HTTP 422.
    MigrationFailed { what: String, reason: String },
    /// Missing or wrong bearer token, or a key that is revoked or expired
    /// (the answer never says which). HTTP 401.
    Unauthorized,
    /// The key is valid but does not cover the namespace the request names.
    /// A memory id of another tenant is 404 instead, so ids cannot be
    /// probed. HTTP 403.
    NamespaceForbidden { namespace: String },
    /// The key lacks the scope (`read`, `write`, `admin`) the route needs.
    /// HTTP 403.
    ScopeForbidden { scope: String },
    /// A deployed Worker has neither an admin token nor a key to check
    /// requests against: it refuses everything rather than run open.
    /// HTTP 503.
    AuthNotConfigured,
    /// The key's token bucket is empty; retry after the given time (also
    /// sent as `Retry-After`). Nothing was changed. HTTP 429.
    RateLimited { retry_after_ms: u64 },
    /// The write would take the tenant past a quota ([`QuotaCode`] says
    /// which). Nothing was changed. HTTP 403.
    QuotaExceeded { quota: QuotaCode, used: u64, limit: u64 },
    /// A request body that is not JSON (`Content-Type` other than
    /// `application/json`). HTTP 415.
    UnsupportedMediaType { content_type: String },
    /// A shared capacity is full (live subscribers of one tenant). Nothing
    /// was changed; retry later. HTTP 503.
    Overloaded { what: String, limit: u64 },
    /// A service's upstream answered with an error status or an unreadable
    /// body. Nothing was cached. HTTP 502.
    Upstream { service: String, status: u16, detail: String },
    /// A service's upstream did not answer within its deadline. Nothing was
    /// cached. HTTP 504.
    UpstreamTimeout { service: String, timeout_ms: u64 },
    /// The route exists but not with this HTTP method. HTTP 405.
    MethodNotAllowed { method: String },
    /// A snapshot failed its magic, length or checksum checks, or did not
    /// decode. Nothing was loaded from it.
    SnapshotCorrupt { reason: String },
    /// A snapshot or log record was written by a newer edgemem whose schema
    /// this build does not know. Nothing was loaded; upgrade edgemem.
    /// `input`: the version came in a request (an import), HTTP 422; else
    /// from storage, HTTP 500.
    SchemaVersionUnsupported { found: u32, supported_max: u32, input: bool },
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
    /// The store is encrypted at rest and the key it names was not given
    /// (`key_id`: the key the header or a stored value names). Nothing was
    /// read or written. HTTP 401.
    KeyRequired { key_id: Option<String> },
    /// A key failed its check against the store's encryption header, or a
    /// stored value failed authentication: a wrong key, or bytes altered in
    /// storage. Nothing was written. HTTP 403.
    DecryptionFailed { key_id: String, detail: String },
    /// A request reached a shard under a stale map: the tenant's buckets
    /// moved (`epoch`: the shard's current epoch). Nothing was done; the
    /// front refreshes its map and retries. HTTP 409.
    ShardMoved { epoch: u64 },
    /// A route that must span a sharded tenant's objects in a way not built
    /// yet (`route`: its method and path pattern). Nothing was done; an
    /// unsharded tenant serves it. HTTP 501.
    NotSharded { route: String },
    /// A token encoding's ranks are not loaded on this host (load them with
    /// `Tokenizer.load`, or serve the rank assets). Where a count may be
    /// estimated instead, edgemem estimates rather than answer this. HTTP 503.
    EncodingNotLoaded { encoding: String },
    /// An invariant of edgemem itself was broken. This is a bug; please
    /// report it. HTTP 500.
    Internal { detail: String },
}

impl Error {
    /// The stable machine-readable code of this error.
    pub fn code(&self) -> &'static str {
        match self {
            Error::InvalidJson { .. } => "invalid_json",
            Error::InvalidQuery { .. } => "invalid_query",
            Error::InvalidInput { .. } => "invalid_input",
            Error::PayloadTooLarge { .. } => "payload_too_large",
            Error::LimitExceeded { .. } => "limit_exceeded",
            Error::NotFound { .. } => "not_found",
            Error::UnknownKind { .. } => "unknown_kind",
            Error::ConsentRequired { .. } => "consent_required",
            Error::SecretDetected { .. } => "secret_detected",
            Error::Conflict { code, .. } => code.as_str(),
            Error::Rejected { code, .. } => code.as_str(),
            Error::InvalidVector { code, .. } => code.as_str(),
            Error::HookFailed { .. } => "hook_failed",
            Error::MigrationFailed { .. } => "migration_failed",
            Error::Unauthorized => "unauthorized",
            Error::NamespaceForbidden { .. } => "namespace_forbidden",
            Error::ScopeForbidden { .. } => "scope_forbidden",
            Error::AuthNotConfigured => "auth_not_configured",
            Error::RateLimited { .. } => "rate_limited",
            Error::QuotaExceeded { quota, .. } => quota.as_str(),
            Error::UnsupportedMediaType { .. } => "unsupported_media_type",
            Error::Overloaded { .. } => "overloaded",
            Error::Upstream { .. } => "upstream_error",
            Error::UpstreamTimeout { .. } => "upstream_timeout",
            Error::MethodNotAllowed { .. } => "method_not_allowed",
            Error::SnapshotCorrupt { .. } => "snapshot_corrupt",
            Error::SchemaVersionUnsupported { .. } => "schema_version_unsupported",
            Error::LogCorrupt { .. } => "log_corrupt",
            Error::Storage { .. } => "storage_error",
            Error::StoreUnsuitable { .. } => "store_unsuitable",
            Error::ShardMoved { .. } => "shard_moved",
            Error::NotSharded { .. } => "not_sharded",
            Error::KeyRequired { .. } => "key_required",
            Error::DecryptionFailed { .. } => "decryption_failed",
            Error::EncodingNotLoaded { .. } => "encoding_not_loaded",
            Error::Internal { .. } => "internal",
        }
    }

    /// Shorthand for [`Error::InvalidInput`].
    pub fn invalid(field: impl Into<String>, reason: impl Into<String>) -> Error {
        Error::InvalidInput { field: field.into(), reason: reason.into() }
    }

    /// The same error about another field: checks run with a fixed field
    /// name and the caller names the element (`transfers[7].amount`) only
    /// when one fails, so the hot path formats nothing.
    pub fn renamed(self, field: impl Into<String>) -> Error {
        match self {
            Error::InvalidInput { reason, .. } => Error::InvalidInput { field: field.into(), reason },
            Error::PayloadTooLarge { bytes, bytes_max, .. } => Error::PayloadTooLarge { what: field.into(), bytes, bytes_max },
            other => other,
        }
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
    pub fn conflict(code: ConflictCode, id: impl Into<String>) -> Error {
        Error::Conflict { code, id: id.into() }
    }

    /// Shorthand for [`Error::InvalidVector`].
    pub fn vector(code: VectorCode, detail: impl Into<String>) -> Error {
        Error::InvalidVector { code, detail: detail.into() }
    }

    /// Every code [`Error::code`] can return, and the JS layer may raise, in
    /// a stable order: the closed set `index.d.ts`'s `ErrorCode` is
    /// generated from (`tests/registry.rs`).
    pub fn codes() -> Vec<&'static str> {
        let mut all = vec![
            "invalid_json",
            "invalid_query",
            "invalid_input",
            "payload_too_large",
            "limit_exceeded",
            "not_found",
            "unknown_kind",
            "consent_required",
            "secret_detected",
            "hook_failed",
            "migration_failed",
            "unauthorized",
            "namespace_forbidden",
            "scope_forbidden",
            "auth_not_configured",
            "rate_limited",
            "unsupported_media_type",
            "overloaded",
            "upstream_error",
            "upstream_timeout",
            "method_not_allowed",
            "snapshot_corrupt",
            "schema_version_unsupported",
            "log_corrupt",
            "storage_error",
            "store_unsuitable",
            "key_required",
            "decryption_failed",
            "shard_moved",
            "not_sharded",
            "encoding_not_loaded",
            "internal",
        ];
        all.extend(ConflictCode::ALL.iter().map(|c| c.as_str()));
        all.extend(VectorCode::ALL.iter().map(|c| c.as_str()));
        all.extend(QuotaCode::ALL.iter().map(|c| c.as_str()));
        all.extend(RuleCode::ALL.iter().map(|c| c.as_str()));
        all.extend(TransferResult::ALL.iter().filter(|r| !r.is_ok()).map(|r| r.as_str()));
        all
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
            Error::InvalidQuery { param, reason } => write!(f, "invalid query parameter {param}: {reason}"),
            Error::InvalidInput { field, reason } => write!(f, "invalid {field}: {reason}"),
            Error::PayloadTooLarge { what, bytes, bytes_max } => {
                write!(f, "{what} is {bytes} bytes, over the limit of {bytes_max} bytes")
            }
            Error::LimitExceeded { what, limit } => write!(f, "{what} would exceed the limit of {limit}"),
            Error::NotFound { kind, id } => write!(f, "{kind} not found: {id}"),
            Error::UnknownKind { field, value, allowed } => write!(f, "unknown {field} {value:?}: one of {allowed}"),
            Error::ConsentRequired { .. } => write!(f, "this user has not consented to long-term memory (PUT /v1/consent/{{user_id}} {{\"long_term\": true}}); nothing was stored"),
            Error::SecretDetected { field, kind } => write!(f, "{field} holds a secret ({kind}) and the privacy policy is reject; nothing was stored"),
            Error::Conflict { code, id } => write!(f, "{id}: {}", code.as_str().replace('_', " ")),
            Error::Rejected { code, id } => write!(f, "{id}: {}", code.as_str().replace('_', " ")),
            Error::InvalidVector { code, detail } => write!(f, "invalid vector ({}): {detail}", code.as_str().replace('_', " ")),
            Error::HookFailed { hook, reason } => write!(f, "{hook} hook failed: {reason}; nothing was changed"),
            Error::MigrationFailed { what, reason } => write!(f, "migration of {what} failed, nothing was written: {reason}"),
            Error::Unauthorized => write!(f, "missing or invalid bearer token"),
            Error::NamespaceForbidden { namespace } => write!(f, "this key does not cover namespace {namespace:?}"),
            Error::ScopeForbidden { scope } => write!(f, "this key lacks the {scope} scope"),
            Error::AuthNotConfigured => write!(f, "auth is not configured: set the EDGEMEM_ADMIN_TOKEN secret and create a key (see the README)"),
            Error::RateLimited { retry_after_ms } => write!(f, "rate limit reached; retry after {retry_after_ms} ms"),
            Error::QuotaExceeded { quota, used, limit } => write!(f, "{}: the tenant holds {used} of {limit}", quota.as_str().replace('_', " ")),
            Error::UnsupportedMediaType { content_type } => write!(f, "content type {content_type:?} is not accepted; send application/json"),
            Error::Overloaded { what, limit } => write!(f, "{what} are at their limit of {limit}; retry later"),
            Error::Upstream { service, status, detail } => write!(f, "service {service}: upstream answered {status}{}{detail}", if detail.is_empty() { "" } else { ": " }),
            Error::UpstreamTimeout { service, timeout_ms } => write!(f, "service {service}: upstream did not answer within {timeout_ms} ms"),
            Error::MethodNotAllowed { method } => write!(f, "method {method} is not allowed on this route"),
            Error::SnapshotCorrupt { reason } => write!(f, "snapshot is corrupt: {reason}"),
            Error::SchemaVersionUnsupported { found, supported_max, .. } => write!(
                f,
                "schema version {found} is newer than this edgemem supports ({supported_max}); upgrade edgemem"
            ),
            Error::LogCorrupt { seq, reason } => write!(f, "op log record {seq} is corrupt: {reason}"),
            Error::Storage { detail } => write!(f, "storage failed: {detail}"),
            Error::StoreUnsuitable { detail } => write!(f, "store unsuitable: {detail}"),
            Error::ShardMoved { epoch } => write!(f, "the tenant's shards moved (now at epoch {epoch}); refresh the map and retry"),
            Error::NotSharded { route } => write!(f, "{route} does not span a sharded tenant yet"),
            Error::KeyRequired { key_id: Some(id) } => write!(f, "this store is encrypted under key {id:?}; open it with that key"),
            Error::KeyRequired { key_id: None } => write!(f, "this store is encrypted; open it with its key"),
            Error::DecryptionFailed { key_id, detail } => write!(f, "decryption failed under key {key_id:?}: {detail}; nothing was written"),
            Error::EncodingNotLoaded { encoding } => write!(f, "the {encoding} ranks are not loaded here (Tokenizer.load)"),
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
            Error::InvalidQuery { param: "since".into(), reason: String::new() },
            Error::invalid("f", "r"),
            Error::too_large("body", 2, 1),
            Error::LimitExceeded { what: "x".into(), limit: 1 },
            Error::not_found("session", "s"),
            Error::UnknownKind { field: "kind".into(), value: "x".into(), allowed: "a".into() },
            Error::ConsentRequired { user_id: "u".into() },
            Error::SecretDetected { field: "text".into(), kind: "jwt".into() },
            Error::vector(VectorCode::DimensionMismatch, ""),
            Error::HookFailed { hook: "summarizer".into(), reason: String::new() },
            Error::MigrationFailed { what: "profile".into(), reason: String::new() },
            Error::Unauthorized,
            Error::NamespaceForbidden { namespace: "n".into() },
            Error::ScopeForbidden { scope: "write".into() },
            Error::AuthNotConfigured,
            Error::RateLimited { retry_after_ms: 1 },
            Error::QuotaExceeded { quota: QuotaCode::Records, used: 1, limit: 1 },
            Error::UnsupportedMediaType { content_type: "text/plain".into() },
            Error::Overloaded { what: "subscribers".into(), limit: 1 },
            Error::Upstream { service: "wallet".into(), status: 500, detail: String::new() },
            Error::UpstreamTimeout { service: "wallet".into(), timeout_ms: 1 },
            Error::MethodNotAllowed { method: "PATCH".into() },
            Error::SnapshotCorrupt { reason: String::new() },
            Error::SchemaVersionUnsupported { found: 9, supported_max: 1, input: false },
            Error::LogCorrupt { seq: 1, reason: String::new() },
            Error::storage("x"),
            Error::StoreUnsuitable { detail: String::new() },
            Error::EncodingNotLoaded { encoding: "o200k_base".into() },
            Error::KeyRequired { key_id: None },
            Error::ShardMoved { epoch: 2 },
            Error::NotSharded { route: String::new() },
            Error::DecryptionFailed { key_id: "k".into(), detail: String::new() },
            Error::Internal { detail: String::new() },
        ];
        let registry = Error::codes();
        for e in &all {
            assert!(registry.contains(&e.code()), "{} is missing from Error::codes()", e.code());
        }
        let mut codes = registry.clone();
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
