// Hand-written types for the public API (the wasm-bindgen types of the core
// are internal). Field names of sessions follow Agent Memory Server's JSON.

// <generated ErrorCode: tests/registry.rs writes this block; do not edit>
/** Stable error codes; `EdgememError.code` is one of these. */
export type ErrorCode =
  | "invalid_json"
  | "invalid_query"
  | "invalid_input"
  | "payload_too_large"
  | "limit_exceeded"
  | "not_found"
  | "unknown_kind"
  | "consent_required"
  | "secret_detected"
  | "hook_failed"
  | "migration_failed"
  | "unauthorized"
  | "namespace_forbidden"
  | "scope_forbidden"
  | "auth_not_configured"
  | "rate_limited"
  | "unsupported_media_type"
  | "overloaded"
  | "upstream_error"
  | "upstream_timeout"
  | "method_not_allowed"
  | "snapshot_corrupt"
  | "schema_version_unsupported"
  | "log_corrupt"
  | "storage_error"
  | "store_unsuitable"
  | "key_required"
  | "decryption_failed"
  | "shard_moved"
  | "not_sharded"
  | "encoding_not_loaded"
  | "internal"
  | "asset_exists_with_different_scale"
  | "account_exists_with_different_fields"
  | "intent_completed_with_different_outcome"
  | "intent_open"
  | "compaction_stale"
  | "schema_version_too_new"
  | "schema_version_changed"
  | "extraction_stale"
  | "import_target_not_empty"
  | "dimension_mismatch"
  | "non_finite"
  | "zero_vector"
  | "embedder_mismatch"
  | "records_quota_exceeded"
  | "bytes_quota_exceeded"
  | "ledger_accounts_quota_exceeded"
  | "tool_not_allowed"
  | "prompt_rejected"
  | "guardrail_violated"
  | Exclude<TransferResultCode, "created" | "exists">;
// </generated ErrorCode>

// <generated TransferResultCode: tests/registry.rs writes this block; do not edit>
/** Per-transfer results (TigerBeetle's names where one exists). */
export type TransferResultCode =
  | "created"
  | "exists"
  | "exists_with_different_debit_account"
  | "exists_with_different_credit_account"
  | "exists_with_different_amount"
  | "exists_with_different_flags"
  | "exists_with_different_timeout"
  | "exists_with_different_metadata"
  | "linked_event_failed"
  | "linked_event_chain_open"
  | "accounts_must_be_different"
  | "debit_account_not_found"
  | "credit_account_not_found"
  | "accounts_must_have_the_same_asset"
  | "timeout_reserved_for_pending_transfer"
  | "exceeds_credits"
  | "exceeds_debits"
  | "exceeds_max_transfer"
  | "overflows_debits"
  | "overflows_credits"
  | "ledger_full"
  | "pending_transfer_not_found"
  | "pending_transfer_not_pending"
  | "pending_transfer_already_posted"
  | "pending_transfer_already_voided"
  | "pending_transfer_expired"
  | "exceeds_pending_transfer_amount";
// </generated TransferResultCode>

// <generated LIMITS: tests/registry.rs writes this block; do not edit>
/** Every bound edgemem enforces, by its Rust name (units last); see `src/core/limits.rs`. */
export const LIMITS: {
  readonly REQUEST_BODY_BYTES_DEFAULT: 1048576;
  readonly REQUEST_BODY_BYTES_CEILING: 1900000;
  readonly ID_BYTES_MAX: 256;
  readonly ROLE_BYTES_MAX: 32;
  readonly MESSAGE_CONTENT_BYTES_MAX: 262144;
  readonly CONTEXT_BYTES_MAX: 262144;
  readonly SESSION_DATA_BYTES_MAX: 262144;
  readonly JSON_DEPTH_MAX: 32;
  readonly SESSION_MESSAGES_MAX: 10000;
  readonly SESSION_MEMORIES_MAX: 1000;
  readonly APPEND_MESSAGES_MAX: 1000;
  readonly SESSIONS_MAX: 100000;
  readonly SESSION_LIST_LIMIT_MAX: 100;
  readonly SESSION_LIST_LIMIT_DEFAULT: 20;
  readonly TTL_SECONDS_MAX: 315360000;
  readonly LOG_RECORD_BYTES_MAX: 1950000;
  readonly SNAPSHOT_CHUNK_BYTES_DEFAULT: 1048576;
  readonly SNAPSHOT_CHUNK_BYTES_MAX: 2000000;
  readonly SNAPSHOT_CHUNK_BYTES_MIN: 64;
  readonly SNAPSHOT_BYTES_MAX: 100663296;
  readonly SNAPSHOT_CHUNKS_MAX: 1572865;
  readonly REPLICA_EXPORT_BYTES_MAX: 1073741824;
  readonly REPLICA_EXPORT_CHUNKS_MAX: 16777217;
  readonly SNAPSHOT_EVERY_OPS_DEFAULT: 1000;
  readonly SNAPSHOT_EVERY_OPS_MAX: 100000;
  readonly RECOVERY_LOG_RECORDS_MAX: 200000;
  readonly RECOVERY_LOG_PAGE_RECORDS: 16;
  readonly STORE_REPAIR_PAGE_KEYS: 16;
  readonly STORE_REPAIR_KEYS_MAX: 16384;
  readonly SHARD_BUCKETS: 4096;
  readonly SHARDS_MAX: 1024;
  readonly SHARD_FANOUT_BRANCHING_MAX: 6;
  readonly SHARD_FANOUT_DEADLINE_MS_DEFAULT: 2000;
  readonly SHARD_FANOUT_DEADLINE_MS_MIN: 50;
  readonly SHARD_FANOUT_DEADLINE_MS_MAX: 30000;
  readonly SHARD_FANOUT_HOP_MARGIN_MS: 25;
  readonly SHARD_FANOUT_ROOT_GRACE_MS: 250;
  readonly SHARD_MOVED_RETRIES_MAX: 6;
  readonly SHARD_MOVED_BACKOFF_MS: 10;
  readonly SHARD_MOVE_BATCH_ITEMS_MAX: 200;
  readonly SHARD_HAND_OVER_ROUNDS_MAX: 4;
  readonly SHARD_MOVE_SYNC_ROUNDS_MAX: 4;
  readonly SHARD_MOVE_FENCE_LAG_ITEMS: 64;
  readonly SHARD_FENCE_DRAIN_MS: 5000;
  readonly SHARD_FENCE_DRAIN_POLL_MS: 2;
  readonly SHARD_SPLIT_RECORDS: 20000;
  readonly SHARD_SPLIT_RECORDS_F32: 8000;
  readonly ID_DIRECTORY_SHARDS: 64;
  readonly KEY_DIRECTORY_SHARDS: 16;
  readonly SHARD_ADMIN_IDS_MAX: 10000;
  readonly SHARD_MAP_CACHE_TTL_MS: 60000;
  readonly SHARD_MAP_CACHE_ENTRIES_MAX: 1024;
  readonly SHARD_SESSION_LIST_DEPTH_MAX: 1000;
  readonly SHARD_PART_BYTES_MAX: 16777216;
  readonly SHARD_SUMMARY_PART_BYTES_MAX: 8388608;
  readonly SHARD_EXPORT_BYTES_MAX: 33554432;
  readonly SHARD_IMPORT_BYTES_MAX: 2147483647;
  readonly SHARD_IMPORT_CHUNK_BYTES: 262144;
  readonly SHARD_EXPORT_PAGE_BYTES: 1048576;
  readonly SHARD_EXPORT_PAGE_ITEMS_MAX: 4096;
  readonly SHARD_VIEWS_NONE_TRUST_MS: 60000;
  readonly CRYPT_KEY_ID_BYTES_MAX: 32;
  readonly CRYPT_ENVELOPE_BYTES_MAX: 65;
  readonly CRYPT_HEADER_BYTES_MAX: 4096;
  readonly CRYPT_PBKDF2_ITERATIONS: 600000;
  readonly CRYPT_PBKDF2_ITERATIONS_MIN: 100000;
  readonly CRYPT_PBKDF2_ITERATIONS_MAX: 10000000;
  readonly CRYPT_SALT_BYTES: 16;
  readonly CRYPT_PASSPHRASE_BYTES_MIN: 8;
  readonly CRYPT_PASSPHRASE_BYTES_MAX: 1024;
  readonly KV_LIST_PAGES_MAX: 1000;
  readonly DELETE_BATCH_KEYS_MAX: 128;
  readonly SQL_BINDINGS_MAX: 100;
  readonly EXTERNAL_ID_BYTES_MAX: 64;
  readonly EXTERNAL_TOP_K_MAX: 100;
  readonly EXTERNAL_UPSERT_BATCH_MAX: 1000;
  readonly STASH_BYTES_MAX: 101711872;
  readonly AMOUNT_DIGITS_MAX: 28;
  readonly ASSET_SCALE_MAX: 18;
  readonly LEDGER_ID_BYTES_MAX: 128;
  readonly ASSETS_MAX: 1000;
  readonly ACCOUNTS_MAX: 1000000;
  readonly TRANSFERS_MAX: 5000000;
  readonly TRANSFER_BATCH_MAX: 8000;
  readonly ACCOUNT_INDICES_MAX: 8000;
  readonly TRANSFER_METADATA_BYTES_MAX: 4096;
  readonly PENDING_TIMEOUT_SECONDS_MAX: 2592000;
  readonly ACCOUNT_HISTORY_LIMIT_MAX: 1000;
  readonly STATEMENT_LINES_MAX: 10000;
  readonly INTENTS_MAX: 100000;
  readonly INTENT_JSON_BYTES_MAX: 65536;
  readonly TOKENIZER_INPUT_BYTES_MAX: 16777216;
  readonly WINDOW_TOKENS_MAX: 10000000;
  readonly SLOT_PRIORITY_MAX: 10;
  readonly SLOTS_MAX: 1000;
  readonly MESSAGE_OVERHEAD_TOKENS_MAX: 64;
  readonly MESSAGE_OVERHEAD_TOKENS_DEFAULT: 3;
  readonly SUMMARIZE_AT_PERCENT_DEFAULT: 70;
  readonly KEEP_RECENT_PERCENT_DEFAULT: 40;
  readonly SUMMARY_PERCENT_DEFAULT: 10;
  readonly HISTORY_WINDOW_TOKENS_MIN: 64;
  readonly SUMMARY_TOKENS_DEFAULT_MAX: 2048;
  readonly SUMMARY_SENTENCES_MAX: 4096;
  readonly SUMMARY_TURN_BYTES_MAX: 4096;
  readonly ARCHIVED_MESSAGES_MAX: 100000;
  readonly ARCHIVE_PAGE_LIMIT_MAX: 1000;
  readonly SUMMARIZER_TIMEOUT_MS_DEFAULT: 30000;
  readonly SUMMARIZER_TIMEOUT_MS_MAX: 300000;
  readonly TOOL_CACHE_ENTRIES_MAX: 1000;
  readonly TOOL_RESULT_BYTES_MAX: 65536;
  readonly TOOL_ARGS_BYTES_MAX: 16384;
  readonly TOOL_NAME_BYTES_MAX: 64;
  readonly TOOL_CALL_ARGS_BYTES_MAX: 262144;
  readonly TOOL_RESULT_TOKENS_DEFAULT: 4000;
  readonly TOOL_RESULT_TOKENS_MAX: 100000;
  readonly TOOL_RESULT_TOKENS_MIN: 64;
  readonly MCP_SESSIONS_MAX: 256;
  readonly MCP_SESSION_IDLE_SECONDS: 86400;
  readonly MCP_RESOURCES_PAGE_MAX: 50;
  readonly MCP_MESSAGE_BYTES_MAX: 1048576;
  readonly TOOL_CACHE_TTL_SECONDS_MAX: 86400;
  readonly TOOL_CACHE_TTL_SECONDS_DEFAULT: 300;
  readonly TOOL_TTLS_MAX: 256;
  readonly AGENTS_MAX: 10000;
  readonly PROMPT_BYTES_MAX: 65536;
  readonly PROMPT_NOTE_BYTES_MAX: 1024;
  readonly PROMPT_VERSIONS_MAX: 100;
  readonly PATCH_BYTES_MAX: 16384;
  readonly PATCHES_MAX: 100;
  readonly GLOB_BYTES_MAX: 1024;
  readonly TOOLS_ALLOWED_MAX: 256;
  readonly PROMPT_MEMORIES_MAX: 100;
  readonly COUNT_CACHE_TEXT_BYTES_MIN: 32;
  readonly COUNT_CACHE_ENTRIES_MAX: 200000;
  readonly VECTOR_DIM_MAX: 4096;
  readonly VECTOR_POINTS_MAX: 1000000;
  readonly VECTOR_ROWS_MAX: 2000000;
  readonly VECTOR_BATCH_POINTS_MAX: 100000;
  readonly VECTOR_COMPONENT_ABS_MAX: 999999986991104;
  readonly VECTOR_K_MAX: 100;
  readonly VECTOR_EF_MAX: 1000;
  readonly VECTOR_EF_SEARCH_DEFAULT: 64;
  readonly VECTOR_EF_CONSTRUCTION_DEFAULT: 100;
  readonly VECTOR_LINKS_MAX: 64;
  readonly VECTOR_LINKS_DEFAULT: 32;
  readonly VECTOR_SEAL_POINTS_DEFAULT: 4096;
  readonly VECTOR_SEAL_POINTS_MIN: 64;
  readonly VECTOR_SEGMENT_POINTS_MAX: 65536;
  readonly VECTOR_FILTER_EXACT_KEYS_MAX: 8192;
  readonly VECTOR_FILTER_VISITS_PER_EF: 64;
  readonly VECTOR_RERANK_OVERSAMPLE: 4;
  readonly VECTOR_TOMBSTONE_PERCENT_MAX: 30;
  readonly LTM_RECORDS_MAX: 200000;
  readonly LTM_CREATE_BATCH_MAX: 500;
  readonly LTM_DELETE_BATCH_MAX: 1000;
  readonly LTM_SEARCH_OFFSET_MAX: 99;
  readonly LTM_HYBRID_DEPTH_FACTOR: 5;
  readonly LTM_HYBRID_DEPTH_MIN: 50;
  readonly LTM_COMPACT_WORK_POINTS_PER_WRITE: 4096;
  readonly LTM_COMPACT_WORK_POINTS_PER_PASS: 32768;
  readonly LTM_COMPACT_DELAY_MS: 5000;
  readonly MEMORY_TEXT_BYTES_MAX: 262144;
  readonly MEMORY_TAGS_MAX: 64;
  readonly MEMORY_TAG_BYTES_MAX: 256;
  readonly MEMORY_EXTRACTED_FROM_MAX: 1000;
  readonly MEMORY_METADATA_BYTES_MAX: 16384;
  readonly MEMORY_STRATEGY_BYTES_MAX: 64;
  readonly IMPORT_BYTES_MAX: 33554432;
  readonly LTM_FACT_KEY_BYTES_MAX: 256;
  readonly LTM_VERSIONS_PER_MEMORY_MAX: 32;
  readonly LTM_VERSION_BODIES_PER_MEMORY_MAX: 8;
  readonly LTM_VERSION_BODY_BYTES_MAX: 16777216;
  readonly LTM_VERSION_OVERHEAD_BYTES: 256;
  readonly LTM_GONE_HISTORIES_MAX: 10000;
  readonly QUERY_TEXT_BYTES_MAX: 16384;
  readonly QUERY_TERMS_MAX: 256;
  readonly BM25_DOCS_MAX: 10000000;
  readonly KEYWORD_RESULTS_MAX: 10000;
  readonly BM25_K1_DEFAULT: 0.8999999761581421;
  readonly BM25_B_DEFAULT: 0.5;
  readonly BM25_K1_MAX: 10;
  readonly FILTER_VALUES_MAX: 256;
  readonly FILTER_VALUE_BYTES_MAX: 256;
  readonly RRF_K_DEFAULT: 60;
  readonly HYBRID_ALPHA_DEFAULT: 0.7;
  readonly FUSION_Z_CLIP: 3;
  readonly FUSION_CONFIDENCE_TOP: 10;
  readonly FUSION_COVERAGE_POWER: 2;
  readonly HYBRID_ALPHA_PRIOR: 0.5;
  readonly TIME_BOOST: 0.5;
  readonly LTM_EXPAND_MAX: 5;
  readonly EMBED_DIM_DEFAULT: 384;
  readonly EMBED_DIM_MIN: 16;
  readonly EMBED_MIX_STATIC_WEIGHT: 0.6000000238418579;
  readonly STATIC_EMBED_ASSET_BYTES_MAX: 67108864;
  readonly STATIC_EMBED_VOCAB_MAX: 262144;
  readonly STATIC_EMBED_TOKENS_MAX: 8192;
  readonly STATIC_EMBED_WORD_CHARS_MAX: 1000;
  readonly EMBEDDER_NAME_BYTES_MAX: 128;
  readonly LTM_REEMBED_BATCH_MAX: 256;
  readonly LTM_REEMBED_RECORDS_PER_CALL_MAX: 4096;
  readonly FEED_EVENT_IDS_MAX: 32;
  readonly FEED_EVENTS_KEPT: 4096;
  readonly FEED_FILTER_ITEMS_MAX: 64;
  readonly FEED_PAGE_EVENTS_MAX: 1000;
  readonly FEED_PAGE_EVENTS_DEFAULT: 100;
  readonly FEED_SUBSCRIBERS_MAX: 1000;
  readonly FEED_SUBSCRIBER_BUFFER_BYTES_MAX: 1048576;
  readonly FEED_ACK_MARKS_MAX: 32;
  readonly FEED_CLIENT_MESSAGE_BYTES_MAX: 256;
  readonly FEED_RELAY_EVENTS_MAX: 1000;
  readonly FEED_RELAY_ROUNDS_MAX: 8;
  readonly FEED_RELAY_QUIET_TRUST_MS: 60000;
  readonly SERVICES_MAX: 64;
  readonly SERVICE_NAME_BYTES_MAX: 64;
  readonly SERVICE_TTL_SECONDS_MAX: 604800;
  readonly SERVICE_STATE_BYTES_MAX: 262144;
  readonly SERVICE_CACHE_ENTRIES_MAX: 10000;
  readonly SERVICE_FETCH_TIMEOUT_MS_DEFAULT: 10000;
  readonly SERVICE_FETCH_TIMEOUT_MS_MAX: 120000;
  readonly SERVICE_SNAPSHOT_SERVICES_MAX: 64;
  readonly PROFILES_MAX: 10000;
  readonly PROFILE_BYTES_MAX: 65536;
  readonly USER_SCHEMA_VERSION_MAX: 1000;
  readonly USER_SCHEMA_STEPS_MAX: 64;
  readonly USER_SCHEMA_PATH_DEPTH_MAX: 16;
  readonly USER_SCHEMA_BYTES_MAX: 262144;
  readonly EPISODE_KIND_BYTES_MAX: 64;
  readonly EPISODE_PAYLOAD_BYTES_MAX: 278528;
  readonly EPISODE_OUTCOME_BYTES_MAX: 16384;
  readonly EPISODES_PER_AGENT_DEFAULT: 1000;
  readonly EPISODES_PER_AGENT_MAX: 1000000;
  readonly EPISODES_MAX: 1000000;
  readonly EPISODES_BYTES_MAX: 33554432;
  readonly EPISODES_RECENT_MAX: 1000;
  readonly API_KEYS_MAX: 10000;
  readonly BEARER_TOKEN_BYTES_MAX: 256;
  readonly API_KEYS_LIST_MAX: 1000;
  readonly KEY_ROTATE_GRACE_SECONDS_MAX: 604800;
  readonly RATE_PER_SECOND_DEFAULT: 100;
  readonly RATE_PER_SECOND_CEILING: 10000;
  readonly RATE_BURST_DEFAULT: 200;
  readonly RATE_BURST_CEILING: 20000;
  readonly TENANT_RECORDS_DEFAULT: 100000;
  readonly TENANT_BYTES_DEFAULT: 67108864;
  readonly TENANT_LEDGER_ACCOUNTS_DEFAULT: 100000;
  readonly REQUEST_JSON_DEPTH_MAX: 40;
  readonly DIRECTORY_ENTRY_GRACE_MS: 60000;
  readonly DIRECTORY_NAMESPACES_PER_ID_MAX: 64;
  readonly CORS_ORIGINS_MAX: 32;
  readonly DECISION_TEXT_BYTES_MAX: 16384;
  readonly DECISION_DATA_BYTES_MAX: 65536;
  readonly DECISION_REFS_MAX: 100;
  readonly DECISIONS_PER_SESSION_MAX: 100000;
  readonly DECISION_LOG_BYTES_MAX: 16777216;
  readonly DECISION_PAGE_LIMIT_MAX: 1000;
  readonly DECISION_PAGE_LIMIT_DEFAULT: 100;
  readonly EXTRACT_TURNS_PER_PASS_MAX: 64;
  readonly EXTRACT_RECORDS_PER_PASS_MAX: 256;
  readonly EXTRACT_SESSIONS_PER_PASS_MAX: 8;
  readonly EXTRACT_DEBOUNCE_MS: 2000;
  readonly EXTRACT_ATTEMPTS_MAX: 5;
  readonly EXTRACT_RETRY_BASE_MS: 1000;
  readonly EXTRACT_SUMMARY_TOKENS_MAX: 400;
  readonly EXTRACT_DEDUP_SIMILARITY_MIN: 0.92;
  readonly EXTRACT_ERROR_CHARS_MAX: 500;
  readonly EXTRACT_HOOK_TIMEOUT_MS_DEFAULT: 30000;
  readonly EXTRACT_HOOK_TIMEOUT_MS_MAX: 300000;
  readonly EXTRACT_HOOK_ANSWER_BYTES_MAX: 1048576;
  readonly EXTRACT_HOOK_ANSWER_TOKENS_MAX: 1024;
  readonly EXTRACT_FLUSH_ROUNDS_MAX: 1000;
  readonly TIME_WINDOWS_MAX: 4;
  readonly TIME_QUERY_BYTES_MAX: 4096;
  readonly SUMMARY_VIEWS_MAX: 100;
  readonly SUMMARY_VIEW_PARTITIONS_PER_RUN_MAX: 32;
  readonly SUMMARY_VIEW_PARTITIONS_KEPT_MAX: 256;
  readonly SUMMARY_VIEW_MEMORIES_PER_PARTITION_MAX: 200;
  readonly SUMMARY_VIEW_SUMMARY_TOKENS_MAX: 400;
  readonly SUMMARY_VIEW_SUMMARY_BYTES_MAX: 16384;
  readonly SUMMARY_VIEW_NAME_BYTES_MAX: 256;
  readonly SUMMARY_VIEW_PROMPT_BYTES_MAX: 8192;
  readonly SUMMARY_VIEW_WINDOW_DAYS_MAX: 36500;
  readonly SUMMARY_VIEWS_PER_WAKE_MAX: 4;
  readonly SUMMARY_VIEW_REFRESH_DELAY_MS: 5000;
  readonly TASKS_KEPT_MAX: 1000;
  readonly TASK_ERROR_CHARS_MAX: 500;
  readonly CONSENTS_MAX: 1000000;
  readonly GUARDRAIL_REQUIRED_MAX: 32;
  readonly GUARDRAIL_FORBIDDEN_MAX: 32;
  readonly GUARDRAIL_RULE_BYTES_MAX: 1024;
  readonly GUARDRAIL_TOKENS_MAX_CEILING: 1000000;
  readonly PRIVACY_KEY_BYTES_MAX: 1024;
  readonly SEALED_USER_ID_PREFIX_BYTES: 4;
  readonly PSEUDONYM_SECRET_BYTES_MIN: 16;
  readonly PSEUDONYM_TOKEN_HEX_LEN: 10;
  readonly SEALED_USER_ID_IV_BYTES: 16;
  readonly SEALED_USER_ID_BYTES_MAX: 368;
  readonly SECRET_ASSIGNMENT_VALUE_CHARS_MIN: 8;
  readonly SECRET_ASSIGNMENT_VALUE_BYTES_MAX: 512;
  readonly SECRET_FIELD_VALUE_CHARS_MIN: 4;
  readonly SECRET_TOKEN_BODY_CHARS_MIN: 16;
  readonly OPENAI_KEY_BODY_CHARS_MIN: 20;
  readonly ANTHROPIC_KEY_BODY_CHARS_MIN: 32;
  readonly JWT_SEGMENT_CHARS_MIN: 10;
  readonly JWT_SIGNATURE_CHARS_MIN: 16;
  readonly PEM_BLOCK_BYTES_MAX: 65536;
  readonly EMAIL_LOCAL_BYTES_MAX: 64;
  readonly EMAIL_DOMAIN_BYTES_MAX: 253;
  readonly PHONE_DIGITS_MIN: 8;
  readonly PHONE_DIGITS_MAX: 15;
  readonly PHONE_NATIONAL_DIGITS_MIN: 9;
  readonly PHONE_NATIONAL_DIGITS_MAX: 12;
  readonly CARD_DIGITS_MIN: 13;
  readonly CARD_DIGITS_MAX: 19;
  readonly IBAN_CHARS_MIN: 15;
  readonly IBAN_CHARS_MAX: 34;
  readonly IPV6_TEXT_BYTES_MAX: 45;
  readonly SCRUB_STRINGS_MAX: 1000000;
  readonly EXTRACT_TURN_BYTES_MAX: 4096;
  readonly EXTRACT_CANDIDATES_MAX: 64;
  readonly EXTRACT_CANDIDATE_BYTES_MAX: 256;
  readonly EXTRACT_ENTITIES_MAX: 8;
  readonly EXTRACT_TOPICS_MAX: 4;
};
/** The transfer result named by each integer of `createTransferBatch`'s `results`. */
export const TRANSFER_RESULT_CODES: readonly TransferResultCode[];
// </generated LIMITS>

export class EdgememError extends Error {
  readonly name: "EdgememError";
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string);
}

/**
 * A JSON number kept as its exact decimal text (`1234.567890123456789`), for
 * values a double cannot hold. Stored anywhere in session data, tool results
 * or episode payloads, it is written as the literal number; a `bigint` is
 * written as its digits too.
 */
export class ExactNumber {
  /** A JSON number literal; anything else throws `invalid_input`. */
  constructor(text: string);
  readonly text: string;
  toString(): string;
  /** The nearest double. */
  valueOf(): number;
}

/** JSON text to a value, with numbers a double cannot hold as {@link ExactNumber}s. */
export function parseExact(text: string): unknown;

/** The byte-moving protocol every store follows. `put` resolves once durable. */
/**
 * A key range within a prefix: keys at or after `start`, before `end` (when
 * given), the `limit` smallest. A store may ignore it (edgemem applies it
 * again); honouring it makes a listing cost what it returns.
 */
export interface KeyRange {
  start?: string;
  end?: string;
  limit?: number;
}

export interface Store {
  get(key: string): Promise<Uint8Array | ArrayBuffer | undefined | null>;
  put(key: string, bytes: Uint8Array): Promise<unknown>;
  delete(key: string): Promise<unknown>;
  /** Keys under `prefix`, ascending; see {@link KeyRange}. */
  list(prefix: string, range?: KeyRange): Promise<string[]>;
  /** Optional: keys with their values, so recovery reads each log record once. */
  getRange?(prefix: string, range?: KeyRange): Promise<Array<[string, Uint8Array | ArrayBuffer]>>;
  /** Eventually consistent stores (KV) say so; they may hold published snapshots only. */
  readonly durability?: "strong" | "snapshots-only";
}

export interface MessageInput {
  role: string;
  content: string;
  id?: string;
  /** RFC 3339; defaults to now. */
  created_at?: string;
  persisted_at?: string | null;
}

export interface Message {
  id: string;
  role: string;
  content: string;
  created_at: string;
  persisted_at: string | null;
  discrete_memory_extracted: "t" | "f";
}

/**
 * A JSON value as edgemem stores it. An {@link ExactNumber} or a `bigint` is
 * written as its literal digits; `{ exactNumbers: true }` reads numbers a
 * double cannot hold back as `ExactNumber`s.
 */
export type JsonValue = string | number | boolean | null | ExactNumber | bigint | JsonValue[] | { [key: string]: JsonValue };

/** What `appendMessages` (and `POST /v1/working-memory/{id}/messages`) answers. */
export interface AppendResult {
  session_id: string;
  /** The appended turns as stored, ids and times filled. */
  appended: Message[];
  /** Turns in the session after the append. */
  message_count: number;
  updated_at: string;
  expires_at: string | null;
  /** With `model`: each appended turn's tokens (content only, no per-message overhead); the turns keep these counts for later prompts. */
  tokens?: number[];
  /** With `model`: how they were counted, `exact:<encoding>` or `estimate`. */
  counting?: string;
}

export interface SessionInput {
  messages?: MessageInput[];
  memories?: Array<{ id: string; [key: string]: JsonValue }>;
  data?: { [key: string]: JsonValue } | null;
  context?: string | null;
  user_id?: string | null;
  tokens?: number;
  namespace?: string | null;
  long_term_memory_strategy?: { [key: string]: JsonValue } | null;
  /** Absent or null: the session is durable. */
  ttl_seconds?: number | null;
  /** The user schema version `data` is in; default the newest registered (see `memory.schemas`). */
  data_schema_version?: number | null;
}

/** AMS's WorkingMemoryResponse, plus `expires_at`. */
export interface Session {
  session_id: string;
  namespace: string | null;
  user_id: string | null;
  messages: Message[];
  memories: Array<{ id: string; [key: string]: JsonValue }>;
  data: { [key: string]: JsonValue };
  context: string | null;
  tokens: number;
  ttl_seconds: number | null;
  long_term_memory_strategy: { [key: string]: JsonValue };
  last_accessed: string;
  created_at: string;
  updated_at: string;
  expires_at: string | null;
  context_percentage_total_used: number | null;
  context_percentage_until_summarization: number | null;
  /** The user schema version `data` is in (null: version 1, none registered). */
  data_schema_version: number | null;
}

export interface StoreStats {
  last_seq: number;
  log_records_since_snapshot: number;
  snapshot_gen: number;
  snapshot_bytes: number;
}

/**
 * A WebCrypto `CryptoKey`, by its shape, so these types need no DOM lib
 * (every host's `CryptoKey` matches it).
 */
export interface CryptoKeyLike {
  readonly type: string;
  readonly algorithm: object;
  readonly extractable: boolean;
  readonly usages: readonly string[];
}

/** A key for encryption at rest: an AES-256-GCM `CryptoKey`, or a passphrase. */
export type EncryptionKey = CryptoKeyLike | { passphrase: string };

/** What `rotateKey` reports. */
export interface KeyRotation {
  /** The key every live value is now sealed under. */
  key_id: string;
  /** Whether values under the old key may remain as unread garbage (the sweep's bound); later snapshots delete them. */
  leftovers: boolean;
}

export interface OpenOptions {
  /** Default: a volatile in-memory store. */
  store?: Store;
  namespace?: string;
  /** Log records between snapshots; default 1000. */
  snapshotEveryOps?: number;
  /** Snapshot chunk size; default 1 MiB, at most 2,000,000. */
  chunkBytes?: number;
  /** Prefix of every key in the store; default "". */
  keyPrefix?: string;
  /** Milliseconds since the epoch; default Date.now. */
  clock?: () => number;
  /** Embeds long-term memory texts; default the offline hashed n-gram embedder. */
  embedder?: Embedder;
  /** The embedder hook's identity, stored with the namespace's vectors so another model's are refused (`embedder_mismatch`); default "js-hook". */
  embedderName?: string;
  /** Without a hook: "static" (default), the distilled MiniLM embedder loaded on first need (the hashed one if its asset is missing), or "hash", the hashed n-gram embedder. */
  offlineEmbedder?: "static" | "hash";
  /** The service-state cache's upstream (see {@link ServiceCache.setFetcher}). */
  serviceFetcher?: ServiceFetcher;
  /** Its deadline in ms; default 10,000, at most 120,000. */
  serviceTimeoutMs?: number;
  /**
   * The BroadcastChannel through which memories on the same storage (tabs on
   * one IndexedDB database) hear of each other's writes: each catches up
   * with storage and its subscribers get the other's events. Default: the
   * `IndexedDBStore`'s channel; none for other stores; `false` for none.
   */
  broadcast?: string | false;
  /**
   * A secret of `LIMITS.PSEUDONYM_SECRET_BYTES_MIN` to `LIMITS.PRIVACY_KEY_BYTES_MAX` bytes. With it,
   * personal data in long-term memory and episodes becomes keyed pseudonyms
   * (`[EMAIL:1a2b3c4d5e]`: the same value, the same token in a namespace)
   * and user ids are sealed in storage (answers show them as written).
   * Held in memory only. Without it: typed placeholders (`[EMAIL]`).
   */
  privacyKey?: string;
  /**
   * Encryption at rest: every op-log record and snapshot chunk is sealed
   * with AES-256-GCM through WebCrypto before it reaches the store. A
   * `CryptoKey` must be AES-GCM, 256 bits, with `encrypt` and `decrypt`
   * (non-extractable is best); a passphrase (`LIMITS.CRYPT_PASSPHRASE_BYTES_MIN`
   * to `_MAX` bytes) goes through PBKDF2-HMAC-SHA256 with
   * `LIMITS.CRYPT_PBKDF2_ITERATIONS` iterations and a random salt stored in
   * the store's header. The key is never stored; the header records only
   * `keyId`. Opening an encrypted store without it rejects with
   * `key_required`, with a wrong one `decryption_failed` (nothing written).
   * Given to a store that holds plaintext data, it encrypts that data.
   */
  encryptionKey?: EncryptionKey;
  /** The key's id (`[A-Za-z0-9._-]`, at most `LIMITS.CRYPT_KEY_ID_BYTES_MAX`); default `"default"`. */
  keyId?: string;
  /** The old key, to finish a rotation a crash interrupted (open with the new key and this). */
  previousKey?: EncryptionKey;
  /** The old key's id; default `"default"`. */
  previousKeyId?: string;
  /**
   * An extra personal-data detector (person names from a model, say): run on
   * each long-term text (create and edit) before it leaves for the store;
   * each span it reports (UTF-16 offsets, not overlapping, `kind` in
   * snake_case) becomes `[KIND]` and is counted in the answer's
   * `anonymized`. A detector that throws or reports a bad span fails the
   * write with `hook_failed`; nothing is stored.
   */
  detector?: (text: string) => Promise<Array<{ start: number; end: number; kind: string }>> | Array<{ start: number; end: number; kind: string }>;
  /**
   * Background extraction's model (an LLM call): the memories worth keeping
   * from a session's new turns. A throw or a bad answer fails the pass
   * (`hook_failed`), which is retried with backoff; nothing half-read is
   * stored. Default: the offline rules.
   */
  extractor?: (request: ExtractionRequest) => Promise<ExtractedMemory[]>;
}

/**
 * Reads one service's state for an agent: an object, or its JSON text. A
 * throw is `upstream_error` (with the thrown error's `status`, if any).
 */
export type ServiceFetcher = (agentId: string, service: string) => Promise<object | string>;

/** One service's state as the cache answers it. */
export interface ServiceState {
  agent_id: string;
  service: string;
  /** The state exactly as the upstream (or the writer) sent it. */
  state: Record<string, unknown>;
  /** Milliseconds since it was read (or written). */
  age_ms: number;
  /** True only when `allowStale` asked for state past its TTL. */
  stale: boolean;
  source: "cache" | "upstream" | "written";
  fetched_at: string;
  expires_at: string;
  /** With `allowStale`, why fresh state could not be had. */
  upstream_error?: { code: ErrorCode; detail: string };
}

/** Every service's state or error, read concurrently. */
export interface PortfolioSnapshot {
  agent_id: string;
  taken_at: string;
  services: Record<string, { state: Record<string, unknown>; age_ms: number; source: "cache" | "upstream" | "written" } | { error: { code: ErrorCode; detail: string } }>;
  ok: number;
  failed: number;
  /** Exact sums by asset of `balances`, `portfolio` and `balance`+`asset|currency`. */
  totals: Record<string, DecimalString>;
  /** Services whose amounts could not be read, and why. */
  totals_skipped: { service: string; reason: string }[];
}

/** The service-state cache (`memory.services`). */
export class ServiceCache {
  private constructor();
  /** Sets (or with `null` clears) the upstream. */
  setFetcher(fetcher: ServiceFetcher | null, options?: { timeoutMs?: number }): void;
  /** The TTL table (the seed's six services by default). */
  list(): Promise<{ service: string; ttl_seconds: number }[]>;
  /** Registers a service, or sets its TTL (1 s to a week). */
  register(service: string, ttlSeconds: number): Promise<{ service: string; ttl_seconds: number }>;
  /** Fresh from the cache, else read through the fetcher (one call per key). */
  get(agentId: string, service: string, options?: { allowStale?: boolean; forceRefresh?: boolean; exactNumbers?: boolean }): Promise<ServiceState>;
  forceRefresh(agentId: string, service: string, options?: { allowStale?: boolean; exactNumbers?: boolean }): Promise<ServiceState>;
  /** Write-through after the agent's own mutation. */
  put(agentId: string, service: string, state: object): Promise<ServiceState>;
  /** Drops one service's cached state, or every service's of the agent; resolves to how many. */
  invalidate(agentId: string, service?: string): Promise<number>;
  portfolioSnapshot(agentId: string, services?: string[], options?: { exactNumbers?: boolean }): Promise<PortfolioSnapshot>;
}

/** The kinds of user state that carry a schema version. */
export type SchemaKind = "session_data" | "profile";

/** One step of a declarative migration; paths are lists of object keys. */
export type MigrationStep =
  | { rename: { from: string; to: string } }
  | { move: { from: string[]; to: string[] } }
  | { set_default: { path: string[]; value: JsonValue } }
  | { remove: { path: string[] } };

/** A declarative chain: one migration from each version 1 to `version - 1`. */
export interface Schema {
  version: number;
  migrations?: { from: number; steps: MigrationStep[] }[];
}

/** User schemas (`memory.schemas`). */
export class Schemas {
  private constructor();
  /** Registers a declarative chain; it runs inside the store (the Worker runs the same). */
  set(kind: SchemaKind, schema: Schema): Promise<{ kind: SchemaKind; version: number }>;
  get(kind: SchemaKind): Promise<Schema | null>;
  /** Registers JS functions: `migrations[v]` turns version `v` into `v + 1`. npm only; runs on read, written back once. */
  register(kind: SchemaKind, chain: { version: number; migrations?: Record<number, (state: Record<string, JsonValue>) => Record<string, JsonValue> | Promise<Record<string, JsonValue>>> }): void;
  /** The newest version the JS chain of `kind` reaches, if one is registered. */
  newest(kind: SchemaKind): number | undefined;
  /** Runs the JS chain on `state` at version `from`; `undefined` when none applies. */
  run(kind: SchemaKind, state: Record<string, JsonValue> | null | undefined, from: number): Promise<{ state: Record<string, JsonValue>; to: number } | undefined>;
}

/** One agent's profile. */
export interface Profile {
  agent_id: string;
  fields: { [key: string]: JsonValue };
  schema_version: number;
  created_at: string;
  updated_at: string;
}

/** Per-agent profiles (`memory.profiles`). */
export class Profiles {
  private constructor();
  /** The profile migrated to the newest version, or `null`. */
  get(agentId: string): Promise<Profile | null>;
  /** A deep-frozen copy of the profile, or `null`. */
  snapshot(agentId: string): Promise<Readonly<Profile> | null>;
  /** Merges `fields` (a `null` removes one), or replaces them all. */
  set(agentId: string, fields: { [key: string]: JsonValue }, options?: { replace?: boolean; schemaVersion?: number }): Promise<Profile>;
  /** Adds `by` atomically: decimal strings exactly, integers (number or bigint) as integers; resolves to the new value. Default `by`: 1. */
  increment(agentId: string, field: string, by?: DecimalString | number | bigint): Promise<DecimalString | number>;
  delete(agentId: string): Promise<boolean>;
}

/** A decimal string such as "12.50": never a JS number. */
export type DecimalString = string;

export type AccountFlag = "debits_must_not_exceed_credits" | "credits_must_not_exceed_debits";

export interface Account {
  id: string;
  /** The interned index typed batches address the account by: its position in creation order, never reused. */
  index: number;
  asset: string;
  flags: AccountFlag[];
  max_transfer: DecimalString | null;
  debits_posted: DecimalString;
  credits_posted: DecimalString;
  debits_pending: DecimalString;
  credits_pending: DecimalString;
  /** credits_posted - debits_posted; may be negative. */
  balance: DecimalString;
  created_at: string;
}

/** A transfer batch as columns, one entry per transfer (see `Ledger.createTransferBatch`). */
export interface TransferBatch {
  /** 128-bit ids: [low, high] 64-bit word pairs, or one bigint each (1 to 2^128 - 1). The id's string form is its decimal digits. */
  ids: BigUint64Array | bigint[];
  /** Debit account indices (`Ledger.accountIndices`). */
  debit: Uint32Array | number[];
  credit: Uint32Array | number[];
  /** Positive minor units at the asset's scale (12.50 USDC is 12500000n), or decimal strings. */
  amounts: BigInt64Array | bigint[] | DecimalString[];
  /** Bit 0: pending (two-phase); bit 1: linked to the next transfer. Default all 0. */
  flags?: Uint8Array | number[];
  /** A pending transfer's timeout in seconds; 0 for none. Default all 0. */
  timeoutSeconds?: Uint32Array | number[];
}

export interface TransferInput {
  id: string;
  debit_account: string;
  credit_account: string;
  amount: DecimalString;
  pending?: boolean;
  timeout_seconds?: number;
  linked?: boolean;
  metadata?: { [key: string]: JsonValue };
}

export interface Transfer {
  id: string;
  debit_account: string;
  credit_account: string;
  amount: DecimalString;
  pending: boolean;
  timeout_seconds: number | null;
  linked: boolean;
  metadata: { [key: string]: JsonValue } | null;
  state: "posted" | "pending" | "pending_posted" | "pending_voided" | "pending_expired";
  posted_amount: DecimalString | null;
  created_at: string;
  expires_at: string | null;
  resolved_at: string | null;
}

export interface HistoryEntry {
  seq: number;
  kind: "created" | "posted" | "voided" | "expired";
  transfer_id: string;
  debit_account: string;
  credit_account: string;
  amount: DecimalString;
  at: string;
}

export interface Difference {
  account: string;
  field: string;
  expected: DecimalString;
  found: DecimalString;
}

export interface Intent {
  key: string;
  status: "started" | "done" | "open";
  op: string;
  params: JsonValue;
  outcome: JsonValue | null;
  begun_at: string;
  completed_at: string | null;
}

export class Ledger {
  private constructor();
  createAsset(code: string, scale: number): Promise<{ code: string; scale: number }>;
  createAccount(account: { id: string; asset: string; flags?: AccountFlag[]; max_transfer?: DecimalString }): Promise<Account>;
  account(id: string): Promise<Account | null>;
  transfer(id: string): Promise<Transfer | null>;
  createTransfers(transfers: TransferInput[]): Promise<Array<{ id: string; result: TransferResultCode }>>;
  /** The interned index of each account id (rejects with `not_found` for an unknown one). */
  accountIndices(ids: string[]): Promise<Uint32Array>;
  /**
   * A batch as typed arrays, with no JSON on the way. Resolves to one index
   * into `TRANSFER_RESULT_CODES` per transfer, and the failed ones by position.
   * A bad batch (mismatched lengths, an unknown account index, an amount past
   * the asset's scale, a repeated id) rejects with `invalid_input`, nothing applied.
   */
  createTransferBatch(batch: TransferBatch): Promise<{ results: Int32Array; errors: Array<{ index: number; code: TransferResultCode }> }>;
  post(id: string, options?: { amount?: DecimalString }): Promise<{ id: string; result: "created"; transfer: Transfer }>;
  void(id: string): Promise<{ id: string; result: "created"; transfer: Transfer }>;
  history(accountId: string, options?: { limit?: number; cursor?: number; since?: string; until?: string }): Promise<{ entries: HistoryEntry[]; next_cursor: number | null }>;
  reconcile(options?: { statement?: Array<{ account: string; balance: DecimalString }> }): Promise<{
    ok: boolean;
    differences: Difference[];
    statement_differences: Difference[];
    transfers: number;
    journal_entries: number;
    journal_head: string;
  }>;
  executeOnce<P extends JsonValue, R extends JsonValue>(op: string, params: P, fn: (params: P) => Promise<R> | R): Promise<R>;
  completeIntent(key: string, outcome: JsonValue): Promise<Intent>;
  openIntents(): Promise<Intent[]>;
}

// <generated FeedKind: tests/registry.rs writes this block; do not edit>
/** A change-feed event kind: `area.verb`. */
export type FeedKind =
  | "working_memory.updated"
  | "working_memory.created"
  | "working_memory.appended"
  | "working_memory.deleted"
  | "working_memory.expired"
  | "working_memory.compacted"
  | "tool_cache.put"
  | "tool_cache.invalidated"
  | "tool_cache.ttls_set"
  | "prompt.version_set"
  | "prompt.rolled_back"
  | "prompt.patch_appended"
  | "prompt.patch_removed"
  | "prompt.tools_set"
  | "ledger.asset_created"
  | "ledger.account_created"
  | "ledger.transfers_created"
  | "ledger.transfer_posted"
  | "ledger.transfer_voided"
  | "ledger.transfers_expired"
  | "ledger.intent_begun"
  | "ledger.intent_completed"
  | "long_term_memory.created"
  | "long_term_memory.extracted"
  | "long_term_memory.updated"
  | "long_term_memory.deleted"
  | "long_term_memory.reembedded"
  | "episode.recorded"
  | "episode.configured"
  | "episode.expired"
  | "service_cache.registered"
  | "service_cache.refreshed"
  | "service_cache.written"
  | "service_cache.invalidated"
  | "service_cache.expired"
  | "profile.updated"
  | "profile.deleted"
  | "profile.migrated"
  | "schema.set"
  | "working_memory.migrated"
  | "prompt.guardrails_set"
  | "decision.appended"
  | "privacy.policy_set"
  | "consent.granted"
  | "consent.revoked"
  | "summary_view.created"
  | "summary_view.deleted"
  | "summary_view.refreshed"
  | "summary_view.source_changed"
  | "task.updated"
  | "shard.moved_in"
  | "shard.moved_out"
  | "shard.events_lost";
// </generated FeedKind>

/** One committed change: ids and counts, never bodies. */
export interface FeedEvent {
  /** Per-namespace, strictly increasing, without gaps. */
  seq: number;
  /** When the write was applied (ms since the epoch). */
  ts: number;
  /** A `FeedKind`; or `"resync_required"` when `since` is older than what is kept (then `last_seq` says where to resume), or `"error"` when a replay failed (`code`, `detail`). */
  kind: FeedKind | "resync_required" | "error";
  /** The session, agent, account, transfer or memory changed; `""` for a change to many. */
  key: string;
  /** How many things changed, when several can. */
  count?: number;
  /** Up to `LIMITS.FEED_EVENT_IDS_MAX` of their ids. */
  ids?: string[];
  last_seq?: number;
  code?: ErrorCode;
  detail?: string;
}

export interface FeedOptions {
  /** Exact kinds or `"area.*"`; default all. */
  kinds?: Array<FeedKind | `${string}.*`> | string;
  /** Keys or ids to follow; default all. */
  keys?: string[] | string;
  /** Replay the kept events after this seq first. */
  since?: number;
}

export class Memory {
  private constructor();
  /** The tenant's exact Decimal ledger. */
  readonly ledger: Ledger;
  /** Long-term memory: records found by meaning, keyword or both. */
  readonly longTerm: LongTermMemory;
  /** The episodic log: events with a per-agent cap and a TTL. */
  readonly episodes: Episodes;
  /** The service-state cache: per-service TTLs, read-through, portfolio snapshots. */
  readonly services: ServiceCache;
  /** User schema versions and their migration chains. */
  readonly schemas: Schemas;
  /** Per-agent profiles with exact increments. */
  readonly profiles: Profiles;
  /** Each session's decision log. */
  readonly decisions: Decisions;
  /** Users' consent to long-term memory. */
  readonly consent: Consent;
  /** The namespace's privacy policy. */
  readonly privacy: Privacy;
  static open(options?: OpenOptions): Promise<Memory>;
  /** Runs any `/v1/...` route in process, as the Worker serves it. */
  request(method: string, path: string, options?: { query?: string | Record<string, string>; body?: unknown }): Promise<any>;
  /**
   * The namespace's whole state in edgemem's open NDJSON format: a header
   * `{format: "edgemem-export", schema_version, embedder, exported_at,
   * last_seq, vectors, dim}`, then sessions, long-term records and their
   * versions, episodes, ledgers with journals, prompts, profiles, and an
   * `{type: "end", lines}` line. Lines come without newlines.
   */
  export(options?: { vectors?: boolean }): AsyncIterableIterator<string>;
  /**
   * Imports an export into this namespace, which must be empty (the same
   * file again is a no-op; other state: `import_target_not_empty`). A future
   * format is refused with `schema_version_unsupported`; a refused import
   * writes nothing.
   */
  import(lines: string | Iterable<string> | AsyncIterable<string>): Promise<{ status: "ok"; imported: boolean; sessions: number; memories: number; last_seq: number }>;
  /**
   * Opens a volatile read replica from `source` (a `KVStore`, typically):
   * a snapshot published with `publishSnapshot`, or a sharded Worker
   * tenant's replica, its export with vectors, read a chunk at a time
   * (`LIMITS.REPLICA_EXPORT_BYTES_MAX`). A damaged replica rejects with
   * `snapshot_corrupt`; a sealed one without its key with `key_required`.
   */
  static openPublished(source: Store, options?: { keyPrefix?: string; namespace?: string; clock?: () => number; encryptionKey?: EncryptionKey; keyId?: string }): Promise<Memory>;
  /**
   * Re-encrypts every stored value under a new key (its id new to the
   * store), or encrypts a plaintext store, in crash-safe steps. After a
   * crash, `Memory.open({ encryptionKey: newKey, keyId, previousKey,
   * previousKeyId })` finishes it.
   */
  rotateKey(encryptionKey: EncryptionKey, keyId?: string): Promise<KeyRotation>;
  /** The id of the key the store is sealed under; undefined for a plaintext store. */
  keyId(): Promise<string | undefined>;
  /** Calls `handler` once per committed write that `options` admits, after it is durable. Returns a function that unsubscribes. */
  subscribe(options: FeedOptions, handler: (event: FeedEvent) => void): () => void;
  /** `subscribe` as an async iterator; leaving the `for await` loop unsubscribes. */
  events(options?: FeedOptions): AsyncIterableIterator<FeedEvent>;
  getOrCreateSession(sessionId: string, init?: SessionInput): Promise<{ created: boolean; session: Session }>;
  /** Resolves to what the append added, not the session: its cost follows the append, not the conversation. */
  appendMessages(sessionId: string, messages: MessageInput[], options?: { model?: string }): Promise<AppendResult>;
  /** `exactNumbers`: numbers a double cannot hold come back as {@link ExactNumber}s. */
  getSession(sessionId: string, options?: { userId?: string; recentMessagesLimit?: number; model?: string; contextWindowMax?: number; exactNumbers?: boolean }): Promise<Session | null>;
  deleteSession(sessionId: string): Promise<boolean>;
  listSessions(options?: { offset?: number; limit?: number; userId?: string }): Promise<{ sessions: string[]; total: number }>;
  expire(): Promise<number | null>;
  snapshot(): Promise<StoreStats>;
  publishSnapshot(target: Store, options?: { keyPrefix?: string }): Promise<StoreStats>;
  stats(): Promise<StoreStats>;
  /** PUT with a window: compacts past 70 % of it and fills the context gauges. */
  putSession(sessionId: string, session?: SessionInput, options?: WindowOptions & SummarizerOptions): Promise<Session & { compaction_error?: { detail: string; code: string } }>;
  compact(sessionId: string, options: CompactOptions): Promise<CompactResult>;
  /**
   * `as` (default `"object"`): `"plan"` answers what to send by reference
   * (no messages built); `"bytes"` the UTF-8 JSON answer as written by Rust,
   * never parsed in JS (hand it to a `Response` or a socket).
   */
  prompt(request: PromptRequest & { as?: "object" }): Promise<PromptResult>;
  prompt(request: PromptRequest & { as: "plan" }): Promise<PromptPlanResult>;
  prompt(request: PromptRequest & { as: "bytes" }): Promise<Uint8Array>;
  toMessages(sessionId: string, options?: { format?: "openai" | "anthropic" | "neutral" }): Promise<{ messages: ChatMessage[]; system?: string }>;
  archivedMessages(sessionId: string, options?: { offset?: number; limit?: number }): Promise<{ messages: Message[]; total: number }>;
  agent(agentId: string): AgentConfig;
  toolCache(sessionId: string): ToolCache;
  setToolTtls(ttls: Record<string, number>): Promise<Record<string, number>>;
  /** The memory tools' schemas: OpenAI `tools`, Anthropic `tools`, or MCP `tools/list` entries (`{name, title, description, inputSchema, annotations}`). */
  toolSchemas(options?: { format?: "openai" | "anthropic" | "mcp"; agentId?: string }): Promise<unknown[]>;
  /** Runs a model's tool call under a bound context the arguments cannot contradict. */
  resolveFunctionCall(name: string, args: object | string | undefined, options?: ToolContext): Promise<unknown>;
  /** Answers one MCP JSON-RPC message under a bound context; `undefined` for a notification. */
  mcp(message: object | string, options?: ToolContext): Promise<McpResponse | undefined>;
  /**
   * Runs every waiting background extraction pass now (sessions with a
   * `long_term_memory_strategy` and turns not yet extracted) and resolves
   * when they are committed.
   */
  flushExtraction(): Promise<ExtractionReport>;
  free(): void;
}

/** What a run of background extraction passes did. */
export interface ExtractionReport {
  /** Sessions whose pass committed. */
  sessions: number;
  created: number;
  /** Memories skipped because a live memory has the same hash. */
  duplicates: number;
  /**
   * Older memories that a new one about the same subject (the same user)
   * contradicted: kept, with `metadata.superseded_by`, and no longer found
   * by search.
   */
  superseded: number;
  /** Passes that failed; they are retried with backoff. */
  failed: number;
  /** Passes over a user without consent (under `require_consent`): nothing stored. */
  without_consent: number;
}

/** What an extractor hook is asked. */
export interface ExtractionRequest {
  strategy: "discrete" | "summary" | "preferences" | "custom";
  /** The custom strategy's prompt. */
  prompt?: string;
  /** The session's new turns, oldest first. */
  turns: Message[];
}

/** A memory an extractor hook proposes. */
export interface ExtractedMemory {
  text: string;
  /** Default `"fact"`; events are stored as episodic memories. */
  kind?: "fact" | "preference" | "event" | "summary";
  topics?: string[];
  entities?: string[];
  /** RFC 3339. */
  event_date?: string;
  /** Message ids; default every turn of the request. */
  extracted_from?: string[];
  /** What it is about ("units", "seat"). */
  subject?: string;
}

export class MemoryStore implements Store {
  constructor(map?: Map<string, Uint8Array>);
  readonly map: Map<string, Uint8Array>;
  get(key: string): Promise<Uint8Array | undefined>;
  put(key: string, bytes: Uint8Array): Promise<void>;
  delete(key: string): Promise<void>;
  list(prefix: string, range?: KeyRange): Promise<string[]>;
  getRange(prefix: string, range?: KeyRange): Promise<Array<[string, Uint8Array]>>;
}

/**
 * Structural type of an IndexedDB factory (`globalThis.indexedDB`, or
 * fake-indexeddb's), so these types need no DOM lib.
 */
export interface IDBFactoryLike {
  open(name: string, version?: number): unknown;
}

export class IndexedDBStore implements Store {
  static open(name?: string, options?: { indexedDB?: IDBFactoryLike }): Promise<IndexedDBStore>;
  get(key: string): Promise<Uint8Array | undefined>;
  put(key: string, bytes: Uint8Array): Promise<void>;
  delete(key: string): Promise<void>;
  list(prefix: string, range?: KeyRange): Promise<string[]>;
  getRange(prefix: string, range?: KeyRange): Promise<Array<[string, Uint8Array]>>;
  close(): void;
  /** The BroadcastChannel name memories on this database share (see `OpenOptions.broadcast`). */
  feedChannel(keyPrefix?: string): string;
}

/** Structural type of a Durable Object's `state.storage`, as far as edgemem uses it. */
export interface DurableObjectStorageLike {
  get(key: string): Promise<unknown>;
  put(key: string, value: unknown): Promise<void>;
  delete(key: string): Promise<boolean>;
  list(options: { prefix: string; start?: string; end?: string; limit?: number }): Promise<Map<string, unknown>>;
}

export class DurableObjectStore implements Store {
  constructor(storage: DurableObjectStorageLike);
  get(key: string): Promise<Uint8Array | undefined>;
  put(key: string, bytes: Uint8Array): Promise<void>;
  delete(key: string): Promise<void>;
  list(prefix: string, range?: KeyRange): Promise<string[]>;
  getRange(prefix: string, range?: KeyRange): Promise<Array<[string, Uint8Array]>>;
}

/** Structural type of a Workers KV namespace, as far as edgemem uses it. */
export interface KVNamespaceLike {
  get(key: string, type: "arrayBuffer"): Promise<ArrayBuffer | null>;
  put(key: string, value: Uint8Array): Promise<void>;
  delete(key: string): Promise<void>;
  list(options: { prefix: string; cursor?: string }): Promise<{ keys: { name: string }[]; list_complete: boolean; cursor?: string }>;
}

export class KVStore implements Store {
  readonly durability: "snapshots-only";
  constructor(kv: KVNamespaceLike);
  get(key: string): Promise<Uint8Array | undefined>;
  put(key: string, bytes: Uint8Array): Promise<void>;
  delete(key: string): Promise<void>;
  /** Keys under `prefix` (the range is applied by edgemem: KV lists by prefix only). */
  list(prefix: string, range?: KeyRange): Promise<string[]>;
}

export function version(): string;

/** Bytes of wasm linear memory: its high-water mark, since wasm memory never
 * shrinks. This is what counts against a Worker isolate's 128 MB. */
export function wasmMemoryBytes(): number;

export type EncodingName = "cl100k_base" | "o200k_base";

/** The encodings that have a rank asset. */
export const ENCODINGS: readonly EncodingName[];

/** An exact OpenAI tokenizer: counts and ids equal tiktoken's. */
export class Tokenizer {
  private constructor();
  /** Loads the rank asset shipped next to the package (disk in Node, fetch in browsers, a bundled Data module in workerd). */
  static load(name: EncodingName): Promise<Tokenizer>;
  /** Builds a tokenizer from asset bytes you fetched yourself. */
  static fromAsset(name: EncodingName, bytes: Uint8Array | ArrayBuffer): Tokenizer;
  readonly name: EncodingName;
  count(text: string, options?: { allowSpecial?: boolean }): number;
  encode(text: string, options?: { allowSpecial?: boolean }): Uint32Array;
  decode(tokens: Uint32Array | number[]): string;
  buildContext(request: BudgetRequest): BudgetResult;
  checkFit(requestJson: string): string;
  readonly heapBytes: number;
  free(): void;
}

export interface BudgetRequestFields {
  /** A model from the table (dated variants resolve), or give max_tokens. */
  model?: string;
  max_tokens?: number;
  /** Count with this encoding instead of the model's. */
  encoding?: EncodingName;
  reserve_for_output?: number;
  /** Slots at or above this priority are truncated rather than dropped. Default 7. */
  truncate_at_priority?: number;
  /** Chat-format overhead per slot. Default 3. */
  message_overhead_tokens?: number;
  slots: Array<{ name: string; content: string; priority: number }>;
  /** Tool/function schemas, counted as their JSON. */
  tools?: JsonValue;
}

/** The window: a model from the table, or `max_tokens`, or both (`max_tokens` wins). One of the two is required. */
export type ModelOrMaxTokens = { model: string; max_tokens?: number } | { model?: string; max_tokens: number };

export type BudgetRequest = BudgetRequestFields & ModelOrMaxTokens;

export interface BudgetResult {
  context: string;
  used: number;
  left: number;
  window: number;
  reserve_for_output: number;
  tools: number;
  percent_used: number;
  percent_left: number;
  encoding: EncodingName | "estimate" | "custom";
  slots: Array<{ name: string; status: "kept" | "truncated" | "dropped"; tokens: number }>;
}

export interface ModelInfo {
  name: string;
  /** null: the vendor publishes no tokenizer; the estimator is used. */
  encoding: EncodingName | null;
  context_window_tokens: number;
  output_tokens_max: number;
}

export function model(name: string): ModelInfo | null;
/** A caller-supplied token counter. */
export type CountTokens = (text: string) => number;
export function buildContext(request: BudgetRequest, options?: { counter?: CountTokens }): Promise<BudgetResult>;

export interface FitRequestFields {
  model?: string;
  max_tokens?: number;
  encoding?: EncodingName;
  reserve_for_output?: number;
  messages: Array<{ role: string; content: string }>;
  tools?: JsonValue;
}

export type FitRequest = FitRequestFields & ModelOrMaxTokens;

export function fitsContext(
  request: FitRequest,
  options?: { counter?: CountTokens },
): Promise<{ fits: boolean; tokens: number; limit: number; window: number; encoding: EncodingName | "estimate" | "custom" }>;

/** A summarizer hook: the oldest turns and the previous summary in, one folded summary out. */
export type Summarizer = (turns: Message[], previousSummary: string | null, limits: { tokensMax: number }) => string | Promise<string>;

export interface WindowOptions {
  /** A model from the table: its window and its tokenizer. */
  model?: string;
  /** Overrides the model's window (AMS's `context_window_max`). */
  contextWindowMax?: number;
}

export interface SummarizerOptions {
  /** Default: the offline extractive summarizer. */
  summarizer?: Summarizer;
  /** Default 30,000; at most 300,000. */
  timeoutMs?: number;
}

export interface CompactOptionsFields extends WindowOptions, SummarizerOptions {
  /** Default 70 % of the window. */
  summarizeAtTokens?: number;
  /** Turns kept verbatim, newest first. Default 40 % of the window. */
  keepRecentTokens?: number;
  /** Default 10 % of the window, at most 2,048. */
  summaryTokensMax?: number;
}

/** A window is required: `model`, or `contextWindowMax`, or both (`contextWindowMax` wins). */
export type ModelOrContextWindowMax = { model: string; contextWindowMax?: number } | { model?: string; contextWindowMax: number };

export type CompactOptions = CompactOptionsFields & ModelOrContextWindowMax;

export interface CompactResult {
  compacted: boolean;
  archived?: number;
  tokens_before?: number;
  tokens_after?: number;
  summarizer?: "hook" | "extractive";
  counting: string;
  session?: Session;
}

export interface ChatMessage {
  role: string;
  content: string;
}

export interface PromptRequestFields {
  query?: string;
  sessionId?: string;
  agentId?: string;
  model?: string;
  windowTokens?: number;
  reserveForOutput?: number;
  toolsTokens?: number;
  /** Recalled memories, best first. */
  memories?: string[];
  format?: "openai" | "anthropic" | "neutral";
}

/** A window is required: `model`, or `windowTokens`, or both (`windowTokens` wins). */
export type ModelOrWindowTokens = { model: string; windowTokens?: number } | { model?: string; windowTokens: number };

export type PromptRequest = PromptRequestFields & ModelOrWindowTokens;

export interface PromptResult {
  messages: ChatMessage[];
  /** Anthropic format only. */
  system?: string;
  used_tokens: number;
  left_tokens: number;
  window_tokens: number;
  reserve_for_output_tokens: number;
  turns_kept: number;
  memories_kept: number;
  dropped: { turns: number; memories: number; truncated: string[]; omitted: string[] };
  counting: string;
}

/** `prompt({ as: "plan" })`: the report, and what to send by reference. */
export interface PromptPlanResult extends Omit<PromptResult, "messages" | "system"> {
  plan: {
    /** Ids of the session turns kept, oldest first (the newest turns). */
    turn_ids: string[];
    /** The running summary as it goes into the prompt (possibly cut), or null. */
    summary: string | null;
    /** How many of the given memories fit, best first. */
    memories_kept: number;
  };
}

export interface AgentConfigState {
  agent_id: string;
  active_version: number | null;
  prompt: string | null;
  versions: { version: number; text: string; note: string | null; created_at: string }[];
  patches: { id: string; text: string; created_at: string }[];
  tools_allowed: string[] | null;
  system_text: string;
  guardrails: Guardrails;
  version?: number | null;
  removed?: string[];
}

/** Rules every later prompt or patch of an agent must keep. */
export interface Guardrails {
  /** Clauses that must appear (case- and whitespace-insensitive). */
  required: string[];
  /** Globs (case-insensitive) that must match nowhere in the text. */
  forbidden: string[];
  /** The most tokens (cl100k_base) the system text may take. */
  tokens_max: number | null;
}

export class AgentConfig {
  private constructor();
  get(): Promise<AgentConfigState | null>;
  /** `validate` must resolve to `true`; anything else rejects with `prompt_rejected`. */
  setPrompt(text: string, options?: { note?: string; validate?: (text: string) => true | string | Promise<true | string> }): Promise<AgentConfigState>;
  rollback(version: number): Promise<AgentConfigState>;
  appendPatch(text: string): Promise<AgentConfigState>;
  removePatches(glob: string): Promise<AgentConfigState>;
  allowTools(tools: string[] | null): Promise<AgentConfigState>;
  /** A later change that breaks a rule rejects with `guardrail_violated`, naming it. */
  setGuardrails(rules: { required?: string[]; forbidden?: string[]; tokensMax?: number | null }): Promise<AgentConfigState>;
}

/**
 * The store's privacy scrub on any text: secrets become `[REDACTED:kind]`;
 * with `anonymize` (default true) personal data becomes placeholders, or
 * keyed pseudonyms with `privacyKey` (derived for `namespace`, default
 * `"default"`). Text over `LIMITS.MESSAGE_CONTENT_BYTES_MAX` is refused.
 */
export declare function scrubText(text: string, options?: { anonymize?: boolean; privacyKey?: string; namespace?: string }): { text: string; redactions: ScrubCounts; anonymized: ScrubCounts };

export type DecisionKind = "observation" | "reasoning" | "decision" | "action" | "offer" | "error";
export declare const DECISION_KINDS: readonly DecisionKind[];

/** What the privacy scrub replaced in a write, by kind (present only when non-empty). */
export type ScrubCounts = Record<string, number>;

export interface DecisionInput {
  kind: DecisionKind;
  text: string;
  data?: Record<string, unknown>;
  refs?: { tool_call_id?: string; transfer_id?: string; memory_ids?: string[] };
}

export interface DecisionEntry extends Omit<DecisionInput, "kind"> {
  seq: number;
  /** RFC 3339. */
  ts: string;
  kind: DecisionKind;
  redactions?: ScrubCounts;
}

/** `kind` (one name or a list, the route's spelling) or `kinds`, not both. */
export type DecisionPageOptions = {
  since?: number;
  limit?: number;
} & ({ kinds?: DecisionKind[]; kind?: never } | { kind?: DecisionKind | DecisionKind[]; kinds?: never });

export class Decisions {
  private constructor();
  append(sessionId: string, entry: DecisionInput): Promise<DecisionEntry>;
  list(sessionId: string, options?: DecisionPageOptions): Promise<{ session_id: string; entries: DecisionEntry[]; last_seq: number }>;
  /** JSON Lines, one entry per line. */
  export(sessionId: string, options?: Omit<DecisionPageOptions, "limit">): Promise<string>;
  follow(sessionId: string, options?: Omit<DecisionPageOptions, "limit">): AsyncIterableIterator<DecisionEntry>;
}

export interface ConsentRecord {
  user_id: string;
  long_term: true;
  granted_at: string;
  granted_by: string;
}

export interface ConsentRevoked {
  user_id: string;
  long_term: false;
  had_consent: boolean;
  revoked_at: string;
  erased: { memories: number; episodes: number };
}

export class Consent {
  private constructor();
  grant(userId: string): Promise<ConsentRecord>;
  get(userId: string): Promise<ConsentRecord | null>;
  revoke(userId: string): Promise<ConsentRevoked>;
}

export interface PrivacyPolicy {
  require_consent: boolean;
  anonymize: boolean;
  secrets: "redact" | "reject";
  /** Whether a privacy key is set (pseudonyms and sealed user ids). */
  readonly pseudonyms: boolean;
}

export class Privacy {
  private constructor();
  policy(): Promise<PrivacyPolicy>;
  setPolicy(policy: Partial<Omit<PrivacyPolicy, "pseudonyms">>): Promise<PrivacyPolicy>;
}

export class ToolCache {
  private constructor();
  get(tool: string, args?: object): Promise<unknown | undefined>;
  put(tool: string, args: object | undefined, result: unknown, options?: { ttlSeconds?: number }): Promise<unknown>;
  getOrCall<A extends object, R>(tool: string, args: A, fn: (args: A) => Promise<R> | R, options?: { ttlSeconds?: number }): Promise<R>;
  invalidate(selector?: { tool?: string; args?: object }): Promise<number>;
  list(): Promise<{ entries: unknown[]; hits: number; misses: number }>;
}

/** `async (texts) => one Float32Array per text`. */
export type Embedder = (texts: string[]) => Promise<Float32Array[]> | Float32Array[];

export interface MemoryRecordInput {
  id?: string;
  text: string;
  user_id?: string;
  session_id?: string;
  namespace?: string;
  topics?: string[];
  entities?: string[];
  memory_type?: "semantic" | "episodic" | "message";
  /** When the event happened; default the first absolute date written in `text`. */
  event_date?: string;
  /** An alias of `event_date` (stored and answered as `event_date`). */
  event_at?: string;
  created_at?: string;
  last_accessed?: string;
  pinned?: boolean;
  metadata?: Record<string, unknown>;
  /**
   * What the record states a value of (`"user.units"`): a record with a later
   * `valid_from` and the same key, namespace and user supersedes it.
   */
  fact_key?: string;
  /** From when the fact holds (only with `fact_key`); default `created_at`. */
  valid_from?: string;
}

export interface MemoryRecord extends Required<Pick<MemoryRecordInput, "id" | "text" | "topics" | "entities" | "memory_type" | "pinned">> {
  user_id: string | null;
  session_id: string | null;
  namespace: string | null;
  created_at: string;
  updated_at: string;
  last_accessed: string;
  event_date: string | null;
  memory_hash: string;
  access_count: number;
  metadata: Record<string, unknown>;
  /** Present only on records with a fact key, with the three fields below. */
  fact_key?: string;
  valid_from?: string;
  /** The successor's `valid_from`; null while current. */
  valid_to?: string | null;
  /** The successor's id; null while current. */
  superseded_by?: string | null;
}

/** One version of a long-term record (`longTerm.versions`). */
export interface MemoryVersion {
  id: string;
  /** 1, 2, ... per record, never reused. */
  version: number;
  ts: string;
  op: "create" | "edit" | "delete" | "forget" | "restore" | "redact";
  /** SHA-256 of the text, hex. */
  text_hash: string;
  /** The API key's id, `local`, or `extraction`. */
  actor: string;
  /** Null once pruned, deleted or redacted. */
  text: string | null;
}

export interface MemoryVersions {
  id: string;
  /** The live record's version; null when it is gone. */
  current: number | null;
  versions: MemoryVersion[];
}

/** One create result (`results` of `longTerm.create`). */
export interface CreateResult {
  id: string;
  /** `superseded`: written, and it replaced the older versions in `superseded`. */
  status: "created" | "superseded" | "duplicate_of";
  /** The stored record that made this one a no-op. */
  duplicate_of?: string;
  superseded?: string[];
  /** A newer version already existed (a back-dated fact). */
  superseded_by?: string;
}

/** Why a hit ranked where it did (`explain: true`): numbers and names only. */
export interface HitExplanation {
  search_mode: "semantic" | "keyword" | "hybrid";
  /** 1-based rank in the whole answer. */
  rank: number;
  bm25: { score: number; rank: number } | null;
  vector: { score: number; rank: number } | null;
  fusion: { kind: "alpha" | "rrf"; formula: string; vector_weight: number; prior: number; coverage: number; confidence: number; rrf_k: number | null } | null;
  /** The factor a time expression in the query lifted the score by (1: outside its windows); null without one. */
  time_boost: number | null;
  recency: { recency_score: number; semantic_weight: number; recency_weight: number; combined: number } | null;
  /** The filters applied, by request name. */
  filters: string[];
  versions: "latest_only" | "include_superseded" | { as_of: string };
}

export interface MemoryHit extends MemoryRecord {
  /** Cosine distance, or `1 - score` for keyword and hybrid. */
  dist: number;
  score: number;
  /** The mode that ranked the hit (`auto` runs as hybrid or keyword). */
  score_type: "semantic" | "keyword" | "hybrid";
  /** The vector segment that answered (0 = the flat one), or null. */
  segment: number | null;
  /** With `expand: n`: up to n turns before and after the hit in its session, in order. */
  context?: MemoryRecord[];
  /** With `explain: true`. */
  explain?: HitExplanation;
}

/** How a time expression in the query was read (`time_query` of a search answer). */
export interface TimeQuery {
  /** The words read, as written in the query. */
  text: string;
  /** Start of the window (inclusive), or null when open. */
  from: string | null;
  /** End of the window (exclusive), or null when open. */
  to: string | null;
  grain: "day" | "week" | "month" | "year" | "open";
  /** What relative expressions were counted from. */
  reference_time: string;
  tz_offset_minutes: number;
}

export type TagFilter = { eq?: string; ne?: string; any?: string[]; all?: string[]; none?: string[]; startswith?: string };
export type TimeFilter = { gt?: string | number; gte?: string | number; lt?: string | number; lte?: string | number; eq?: string | number; ne?: string | number; between?: [string | number, string | number] };

export interface SearchQueryFields {
  text?: string;
  /**
   * Default `"auto"`: hybrid when the namespace's vectors can help (a model's
   * or the bundled offline embedder's), keyword otherwise. The answer's
   * `search_mode` says which ran.
   */
  mode?: "auto" | "semantic" | "keyword" | "hybrid";
  vector?: Float32Array;
  limit?: number;
  offset?: number;
  /** Hybrid: the vector side's prior weight, 0 to 1 (default 0.5), moved per query by keyword coverage. */
  hybridAlpha?: number;
  fusion?: "alpha" | "rrf";
  recencyBoost?: boolean;
  distanceThreshold?: number;
  ef?: number;
  /** Attach up to this many turns (0 to 5) before and after each hit, from its session, as `context`. */
  expand?: number;
  /** What time expressions in `text` ("last May", "two weeks ago") are read against; default now. RFC 3339. */
  referenceTime?: string;
  /** The caller's UTC offset, `"+01:00"` or `"Z"`; default the offset in `referenceTime`, else UTC. */
  tz?: string;
  /** Default true: superseded versions of facts are not found. */
  latestOnly?: boolean;
  /** Find what was current at this time (RFC 3339): `valid_from <= asOf < valid_to`. Not with `includeSuperseded`. */
  asOf?: string;
  /** Find every version of each fact. */
  includeSuperseded?: boolean;
  /** Attach each hit's ranking signals as `explain`. */
  explain?: boolean;
  /** Scan every vector instead of walking the ANN graphs: slower, exact. */
  exact?: boolean;
  embedder?: Embedder;
  user_id?: TagFilter;
  session_id?: TagFilter;
  namespace?: TagFilter;
  topics?: TagFilter;
  entities?: TagFilter;
  memory_type?: { eq?: string; ne?: string; any?: string[] };
  created_at?: TimeFilter;
  last_accessed?: TimeFilter;
  event_date?: TimeFilter;
  /** An alias of `event_date`. */
  event_at?: TimeFilter;
  /** Who said a dialog turn: the record's `metadata.speaker`. */
  speaker?: TagFilter;
  fact_key?: TagFilter;
}

/**
 * A `text`, a query `vector`, both, or neither. Auto (the default), semantic
 * and hybrid search embed the text when no vector is given; keyword search ranks
 * by the text alone. With neither, the search is a filter-only listing,
 * newest first (as AMS answers a search without text).
 */
export type SearchTextOrVector = { text?: string; vector?: Float32Array };

export type SearchQuery = SearchQueryFields & SearchTextOrVector;

export class LongTermMemory {
  private constructor();
  create(memories: MemoryRecordInput[], options?: { vectors?: Float32Array | Float32Array[]; deduplicate?: boolean; embedder?: Embedder }): Promise<{ status: "ok"; created: string[]; duplicates: string[]; results: CreateResult[] }>;
  /**
   * With `fields`, each hit carries only those fields (built only for them):
   * `search({ text, fields: ["id", "score"] })` answers `{id, score}` hits.
   */
  search<F extends keyof MemoryHit = keyof MemoryHit>(
    query: SearchQuery & { fields?: F[] },
  ): Promise<{ memories: Array<Pick<MemoryHit, F>>; total: number; next_offset: number | null; exact_filter: boolean; search_mode: "semantic" | "keyword" | "hybrid"; time_query: TimeQuery[] }>;
  get(id: string): Promise<MemoryRecord | null>;
  edit(id: string, patch: Partial<MemoryRecordInput>, options?: { embedder?: Embedder }): Promise<MemoryRecord>;
  /**
   * Moves the namespace's vectors to the current embedder (repeats
   * `POST /v1/long-term-memory/reembed` until done); searches keep the old
   * vectors until the swap. The fix for `embedder_mismatch`.
   */
  reembed(options?: { embedder?: Embedder }): Promise<{ embedder: string; previous: string | null; reembedded: number; remaining: number; done: boolean }>;
  /** The record's versions, oldest first; null when the id never existed. */
  versions(id: string): Promise<MemoryVersions | null>;
  /** Writes a new version equal to `version` (re-embedded; the record comes back if deleted). */
  restore(id: string, version: number, options?: { embedder?: Embedder }): Promise<MemoryRecord & { version: number; restored_from: number }>;
  /** Removes the record and the text of every version from memory and storage; hashes and a receipt stay. */
  redact(id: string): Promise<{ status: "ok"; id: string; version: number; redacted_versions: number; redacted_by: string; redacted_at: string; erased: { memories: number } }>;
  delete(ids: string[]): Promise<number>;
  forget(policy: { max_age_days?: number; max_inactive_days?: number; budget?: number; memory_type_allowlist?: string[] }, options?: { userId?: string; sessionId?: string; namespace?: string; pinnedIds?: string[]; dryRun?: boolean; limit?: number }): Promise<{ scanned: number; deleted: number; deleted_ids: string[]; dry_run: boolean }>;
}

/** Options of `new VectorIndex(...)`: only `dim` is required. */
export interface VectorIndexOptions {
  /** Dimensions of every vector (1 to 4,096). */
  dim: number;
  /** Default `"cosine"`. */
  metric?: "cosine" | "dot";
  /** Default `"none"` (f32); `"int8"` stores a quarter of the bytes. */
  quantization?: "int8" | "none";
  /** Points in the flat segment before it is sealed into an HNSW segment. Default 4,096. */
  sealPoints?: number;
  /** HNSW build beam width. Default 100. */
  efConstruction?: number;
  /** HNSW search beam width when `search` names none. Default 64. */
  efSearch?: number;
  /** HNSW links per node. Default 32. */
  linksMax?: number;
  /** Seed of the HNSW level draw, for reproducible graphs. Default 0. */
  seed?: number;
}

/** The segmented vector index on its own. */
export class VectorIndex {
  constructor(options: VectorIndexOptions);
  addBatch(keys: Uint32Array, vectors: Float32Array): void;
  add(key: number, vector: Float32Array): boolean;
  remove(key: number): boolean;
  has(key: number): boolean;
  search(query: Float32Array, k: number, ef?: number, filterKeys?: Uint32Array): { keys: Uint32Array; scores: Float32Array; segments: Uint32Array };
  compact(workPointsMax: number): unknown;
  serialize(): Uint8Array;
  static deserialize(bytes: Uint8Array): VectorIndex;
  readonly len: number;
  readonly isEmpty: boolean;
  readonly dim: number;
  stats(): {
    points: number;
    builds: number;
    memoryBytes: number;
    segments: Array<{ id: number; kind: "flat" | "hnsw"; rows: number; tombstones: number; layers: number; memoryBytes: number }>;
    /** The effective options, defaults filled in. */
    config: Required<VectorIndexOptions>;
  };
  memoryBytes(): number;
  free(): void;
}

export interface Episode {
  id: string;
  agent_id: string;
  kind: string;
  at: string;
  payload: Record<string, unknown>;
  outcome: unknown;
  seq: number;
}

export class Episodes {
  private constructor();
  record(event: { agent_id: string; kind: string; at?: string | number; payload?: Record<string, unknown>; outcome?: unknown; id?: string }): Promise<{ id: string; seq: number; evicted: number }>;
  recent(n?: number, options?: { agentId?: string; kind?: string }): Promise<Episode[]>;
  summarizeWindow(since: string | number | Date, options?: { agentId?: string }): Promise<{ total: number; by_kind: Record<string, number>; first_at: string | null; last_at: string | null; span_seconds: number | null }>;
  configure(config: { per_agent_max: number; ttl_seconds?: number; at_cap?: "evict_oldest" | "refuse" }): Promise<{ dropped: number }>;
}

/** What a tool call is bound to: the model's arguments may fill in what this leaves open, never contradict it. */
export interface ToolContext {
  /** Whose tool allow-list applies. */
  agentId?: string;
  /** The session a session tool uses when the model names none; naming another is `invalid_input`. */
  sessionId?: string;
  /** Records are written for, and searches and reads limited to, this user. */
  userId?: string;
  /** The tenant namespace; a call naming another is `namespace_forbidden`. */
  namespace?: string;
  /** The ceiling on a result's tokens (64 to 100,000; default 4,000): past it whole items are dropped and `truncated: {omitted, total}` added. */
  resultTokensMax?: number;
}

/** A JSON-RPC response from the MCP server. */
export interface McpResponse {
  jsonrpc: "2.0";
  id: string | number | null;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
}
