//! Every bound edgemem enforces, in one place.
//!
//! Each limit is checked where the input enters (the API layer, the JS
//! bindings, the snapshot decoder), so the rest of the code may rely on it.
//! Names put the unit last, TigerBeetle style.
//!
//! The whole file is one `limits!` invocation so that [`ALL`] lists every
//! limit by name: the JS API exports it as `LIMITS`, and `index.d.ts`'s
//! declaration of it is generated from it (`tests/registry.rs`).

/// Declares each limit as a `pub const` and adds [`ALL`], their names and
/// values as numbers (every value is below 2^53, so exact as an f64).
macro_rules! limits {
    ($($(#[$meta:meta])* pub const $name:ident : $ty:ty = $value:expr;)*) => {
        $($(#[$meta])* pub const $name: $ty = $value;)*

        /// Every limit above, by name, in declaration order.
        pub const ALL: &[(&str, f64)] = &[$((stringify!($name), $name as f64),)*];
    };
}

limits! {
    /// Default cap on an HTTP request body. Larger bodies get 413 before they
    /// are parsed. The Worker can lower or raise it with `EDGEMEM_BODY_BYTES_MAX`
    /// up to [`REQUEST_BODY_BYTES_CEILING`].
    pub const REQUEST_BODY_BYTES_DEFAULT: usize = 1024 * 1024;
    /// The most a deployment may configure for [`REQUEST_BODY_BYTES_DEFAULT`]:
    /// one op must still fit a single Durable Object value.
    pub const REQUEST_BODY_BYTES_CEILING: usize = 1_900_000;

    /// Session ids, user ids, namespaces: short printable identifiers.
    pub const ID_BYTES_MAX: usize = 256;
    /// A message role (`user`, `assistant`, `system`, `tool`, `function`, or a
    /// caller-defined one).
    pub const ROLE_BYTES_MAX: usize = 32;
    /// One message's content.
    pub const MESSAGE_CONTENT_BYTES_MAX: usize = 256 * 1024;
    /// The running summary (`context`) of a session.
    pub const CONTEXT_BYTES_MAX: usize = 256 * 1024;
    /// A session's free-form JSON `data` object, serialized.
    pub const SESSION_DATA_BYTES_MAX: usize = 256 * 1024;
    /// Nesting depth of any JSON value we accept (serde_json stops at 128 anyway;
    /// we want a smaller, documented bound).
    pub const JSON_DEPTH_MAX: usize = 32;
    /// Messages held verbatim by one session.
    pub const SESSION_MESSAGES_MAX: usize = 10_000;
    /// Structured memories attached to one session (AMS's `memories`).
    pub const SESSION_MEMORIES_MAX: usize = 1_000;
    /// Messages in one append call.
    pub const APPEND_MESSAGES_MAX: usize = 1_000;
    /// Sessions held by one tenant (one Durable Object or one `Memory`).
    pub const SESSIONS_MAX: usize = 100_000;
    /// Page size of the session list (AMS allows 1 to 100).
    pub const SESSION_LIST_LIMIT_MAX: usize = 100;
    /// Default page size of the session list (AMS's default).
    pub const SESSION_LIST_LIMIT_DEFAULT: usize = 20;
    /// Longest TTL a session may have: ten years.
    pub const TTL_SECONDS_MAX: u64 = 10 * 365 * 24 * 3600;

    /// One encoded op-log record must fit a single Durable Object value (2 MB)
    /// with room to spare.
    pub const LOG_RECORD_BYTES_MAX: usize = 1_950_000;
    /// Snapshot chunk size. Durable Object values are limited to 2 MB; IndexedDB
    /// and KV have no such limit but share the layout.
    pub const SNAPSHOT_CHUNK_BYTES_DEFAULT: usize = 1024 * 1024;
    /// Largest chunk size a caller may choose.
    pub const SNAPSHOT_CHUNK_BYTES_MAX: usize = 2_000_000;
    /// Smallest chunk size a caller may choose (tests use small chunks to
    /// exercise multi-chunk snapshots).
    pub const SNAPSHOT_CHUNK_BYTES_MIN: usize = 64;
    /// A whole snapshot: must fit comfortably in a 128 MB Worker isolate.
    pub const SNAPSHOT_BYTES_MAX: usize = 96 * 1024 * 1024;
    /// Chunks in one snapshot (follows from the two limits above).
    pub const SNAPSHOT_CHUNKS_MAX: usize = SNAPSHOT_BYTES_MAX / SNAPSHOT_CHUNK_BYTES_MIN + 1;
    /// Bytes of a replica in export form: a sharded tenant's, published as
    /// its export streams (no object holds it whole) and read by
    /// `Memory.openPublished` a chunk at a time into one volatile memory,
    /// which then holds the tenant whole (at most [`LTM_RECORDS_MAX`]
    /// records). Past it, the publish is refused (`payload_too_large`).
    pub const REPLICA_EXPORT_BYTES_MAX: usize = 1024 * 1024 * 1024;
    /// Chunks in a replica in export form (follows from its bytes and the
    /// smallest chunk).
    pub const REPLICA_EXPORT_CHUNKS_MAX: usize = REPLICA_EXPORT_BYTES_MAX / SNAPSHOT_CHUNK_BYTES_MIN + 1;
    /// Default number of log records after which a snapshot is taken and the log
    /// is truncated.
    pub const SNAPSHOT_EVERY_OPS_DEFAULT: u64 = 1_000;
    /// Upper bound on the snapshot interval, which bounds recovery replay work.
    pub const SNAPSHOT_EVERY_OPS_MAX: u64 = 100_000;
    /// Log records replayed in one recovery; more means the log was never
    /// truncated, which is a corrupt store.
    pub const RECOVERY_LOG_RECORDS_MAX: u64 = SNAPSHOT_EVERY_OPS_MAX * 2;
    /// Log records one listing reads at recovery. Durable Object storage returns
    /// every listed value at once, so this bounds the log bytes recovery holds at
    /// a time: at most 16 records of [`LOG_RECORD_BYTES_MAX`] (31 MB), and
    /// usually a few KB.
    pub const RECOVERY_LOG_PAGE_RECORDS: usize = 16;
    /// Keys one listing returns while the store repairs leftovers of a crash or
    /// of a failed delete. On Durable Object storage the listing also reads their
    /// values, so this bounds what a repair holds at once: 16 chunks of
    /// [`SNAPSHOT_CHUNK_BYTES_MAX`] (32 MB).
    pub const STORE_REPAIR_PAGE_KEYS: usize = 16;
    /// Keys one repair deletes. A larger backlog is finished by the next
    /// snapshots, so no single op waits on an unbounded cleanup.
    pub const STORE_REPAIR_KEYS_MAX: usize = 16_384;
    /// Buckets of one tenant (issue 21): records, episodes and sessions hash
    /// into them, and a shard owns whole buckets, so a tenant can be split
    /// into at most this many shards without moving one user's records
    /// apart.
    pub const SHARD_BUCKETS: usize = 4096;
    /// Shards of one tenant.
    pub const SHARDS_MAX: usize = 1024;
    /// Calls one node of a tenant-wide fan-out makes at once: Workers allow
    /// six simultaneous open connections per invocation.
    pub const SHARD_FANOUT_BRANCHING_MAX: usize = 6;
    /// Time a tenant-wide fan-out has by default, in milliseconds: past it
    /// the answer is partial and names the shards that did not answer.
    pub const SHARD_FANOUT_DEADLINE_MS_DEFAULT: u64 = 2_000;
    /// Shortest deadline a request may ask for.
    pub const SHARD_FANOUT_DEADLINE_MS_MIN: u64 = 50;
    /// Longest deadline a request may ask for.
    pub const SHARD_FANOUT_DEADLINE_MS_MAX: u64 = 30_000;
    /// Time each hop of the tree keeps for itself: a child's deadline is
    /// its parent's less this, so the parent can still merge and answer.
    pub const SHARD_FANOUT_HOP_MARGIN_MS: u64 = 25;
    /// How long past a fan-out's deadline the front waits for its root
    /// (which stops waiting for shards a hop margin before it) before it
    /// answers `upstream_timeout`: a root too busy to answer at all.
    pub const SHARD_FANOUT_ROOT_GRACE_MS: u64 = 250;
    /// Retries of a request answered `shard_moved`, each after the front
    /// refreshed its map and waited its backoff: a split's fence holds
    /// writes to the buckets it moves for a moment, and they go through
    /// after it.
    pub const SHARD_MOVED_RETRIES_MAX: usize = 6;
    /// The first `shard_moved` retry's wait, in milliseconds; each next
    /// one waits twice as long (10 + 20 + ... + 320: 630 ms in all).
    pub const SHARD_MOVED_BACKOFF_MS: u64 = 10;
    /// Items (sessions, records) one batch of a split carries to the new
    /// shard, and keys one collection drops at the old one.
    pub const SHARD_MOVE_BATCH_ITEMS_MAX: usize = 200;
    /// Times an edit that gives a record a user of another shard hands it
    /// over again because the record changed at its old shard meanwhile
    /// (a concurrent edit): past it, the edit answers `overloaded`.
    pub const SHARD_HAND_OVER_ROUNDS_MAX: usize = 4;
    /// Rounds of catching up a split makes before it fences writes: each
    /// round copies what changed during the last one.
    pub const SHARD_MOVE_SYNC_ROUNDS_MAX: usize = 4;
    /// A split fences writes once a catch-up round finds at most this many
    /// items changed (or after its last round): the fence then lasts one
    /// small round.
    pub const SHARD_MOVE_FENCE_LAG_ITEMS: usize = 64;
    /// How long a fence waits, in milliseconds, for the writes its shard
    /// admitted before it (each still on its way to the state) before it
    /// lifts again and the split is retried: a write that slow (a remote
    /// embedder, a summarizer) must not hold the moving buckets' writes
    /// back for its whole length.
    pub const SHARD_FENCE_DRAIN_MS: u64 = 5_000;
    /// How often a fence looks again whether those writes are answered, in
    /// milliseconds.
    pub const SHARD_FENCE_DRAIN_POLL_MS: u64 = 2;
    /// Records a shard of int8 vectors holds before it asks its directory
    /// to split it (a deployment may set `EDGEMEM_SHARD_SPLIT_RECORDS`).
    /// From the 64 MB budget per shard: measured (benches/shard-scale.mjs),
    /// an object takes 17.7 MB with one record and about 2.1 KB more per
    /// 384-d int8 record, so about 22,000 fit; this leaves a margin.
    pub const SHARD_SPLIT_RECORDS: usize = 20_000;
    /// The same for f32 vectors (the default quantization): about 5.0 KB a
    /// record, so about 9,300 fit in 64 MB.
    pub const SHARD_SPLIT_RECORDS_F32: usize = 8_000;
    /// Objects the id → tenant directory is spread over, by the id's
    /// bucket, so no single object sees every create. Fixed for a
    /// deployment: changing it would strand the entries already written.
    pub const ID_DIRECTORY_SHARDS: usize = 64;
    /// Objects the API-key directory is spread over, by the key id's
    /// bucket, so no single object verifies every request of a
    /// deployment. Fixed for a deployment, like [`ID_DIRECTORY_SHARDS`].
    pub const KEY_DIRECTORY_SHARDS: usize = 16;
    /// Record ids one shard lists in `GET /v1/admin/shards?ids=true`.
    pub const SHARD_ADMIN_IDS_MAX: usize = 10_000;
    /// How long the front Worker trusts a tenant's cached shard map, in
    /// milliseconds, before asking the tenant's directory again (a stale map
    /// costs a `shard_moved` retry, never a wrong answer).
    pub const SHARD_MAP_CACHE_TTL_MS: u64 = 60_000;
    /// Tenants whose maps one isolate caches; past it the cache starts over.
    pub const SHARD_MAP_CACHE_ENTRIES_MAX: usize = 1024;
    /// How deep a sharded tenant's session list pages (`offset + limit`):
    /// each shard lists its first that many ids.
    pub const SHARD_SESSION_LIST_DEPTH_MAX: usize = 1_000;
    /// Bytes of one shard's answer to a fan-out round (its merged part):
    /// at most two lists of `VECTOR_K_MAX` records, far below this.
    pub const SHARD_PART_BYTES_MAX: usize = 16 * 1024 * 1024;
    /// Bytes of the memories one shard sends its home for a summary-view
    /// run (texts, ids, user ids): a run whose groups hold more in one
    /// shard fails with `payload_too_large` (add filters, or run partitions one at
    /// a time) rather than gather an unbounded answer.
    pub const SHARD_SUMMARY_PART_BYTES_MAX: usize = 8 * 1024 * 1024;
    /// Bytes of what a sharded tenant's export holds at the front: every
    /// shard's state lines (merged into one line per part) while the
    /// export streams. Records, sessions and histories stream page by page
    /// and are not counted. Past it, `payload_too_large`.
    pub const SHARD_EXPORT_BYTES_MAX: usize = IMPORT_BYTES_MAX;
    /// Bytes of an import into a sharded tenant, read as it streams in
    /// (each shard's part is at most [`IMPORT_BYTES_MAX`]). An unsharded
    /// deployment's import is at most [`IMPORT_BYTES_MAX`].
    pub const SHARD_IMPORT_BYTES_MAX: usize = 2 * 1024 * 1024 * 1024 - 1;
    /// Bytes of lines the front holds for one shard of an import before it
    /// stages them there (one row of the shard's database each).
    pub const SHARD_IMPORT_CHUNK_BYTES: usize = 256 * 1024;
    /// Bytes of lines in one page of a shard's export (at least one line,
    /// which may pass it alone).
    pub const SHARD_EXPORT_PAGE_BYTES: usize = 1024 * 1024;
    /// Items one page of a shard's export walks (those it skips as another
    /// shard's or made after the export began included), and ids one ask
    /// of which histories and records a shard holds may name.
    pub const SHARD_EXPORT_PAGE_ITEMS_MAX: usize = 4096;
    /// How long a shard trusts its home's answer that the tenant has no
    /// continuous summary view, in milliseconds, before it tells home of
    /// its long-term changes again. Creating a continuous view resets every
    /// shard's trust at once; this bounds a shard the reset missed.
    pub const SHARD_VIEWS_NONE_TRUST_MS: u64 = 60_000;
    /// Longest encryption key id: it is stored in every sealed value's
    /// envelope, in plaintext (`[A-Za-z0-9._-]`, at least one byte).
    pub const CRYPT_KEY_ID_BYTES_MAX: usize = 32;
    /// What sealing adds to a value: magic (4), id length (1), id, nonce
    /// (12) and AES-GCM tag (16). Snapshot chunks shrink by it so a sealed
    /// chunk still fits one Durable Object value.
    pub const CRYPT_ENVELOPE_BYTES_MAX: usize = 4 + 1 + CRYPT_KEY_ID_BYTES_MAX + 12 + 16;
    /// Largest encryption header (`crypt`) read at open: two key entries
    /// and a KDF description are a few hundred bytes.
    pub const CRYPT_HEADER_BYTES_MAX: usize = 4096;
    /// PBKDF2-HMAC-SHA256 iterations for a passphrase on a new store
    /// (OWASP's 2023 recommendation). The count is stored with the salt, so
    /// raising it later leaves older stores readable.
    pub const CRYPT_PBKDF2_ITERATIONS: u32 = 600_000;
    /// Fewest PBKDF2 iterations a stored header may name: fewer is too
    /// weak to accept (and the most production Workers allow per call).
    pub const CRYPT_PBKDF2_ITERATIONS_MIN: u32 = 100_000;
    /// Most PBKDF2 iterations a stored header may name, so a crafted header
    /// cannot stall an open.
    pub const CRYPT_PBKDF2_ITERATIONS_MAX: u32 = 10_000_000;
    /// Random salt bytes of a passphrase's key derivation.
    pub const CRYPT_SALT_BYTES: usize = 16;
    /// Shortest passphrase accepted (UTF-8 bytes).
    pub const CRYPT_PASSPHRASE_BYTES_MIN: usize = 8;
    /// Longest passphrase accepted (UTF-8 bytes).
    pub const CRYPT_PASSPHRASE_BYTES_MAX: usize = 1024;
    /// Pages one Workers KV listing may walk (1,000 keys a page), so a
    /// listing of a runaway prefix ends.
    pub const KV_LIST_PAGES_MAX: usize = 1_000;
    /// Keys one Durable Object storage `delete` call takes (the platform's
    /// limit), so every delete is batched by it.
    pub const DELETE_BATCH_KEYS_MAX: usize = 128;
    /// Bound parameters of one SQL statement on Durable Object storage (the
    /// platform's limit), so deletes by name are batched by it.
    pub const SQL_BINDINGS_MAX: usize = 100;
    /// Bytes of an id an external vector index takes (Vectorize's limit).
    pub const EXTERNAL_ID_BYTES_MAX: usize = 64;
    /// Hits one external index query returns at most (Vectorize's `topK`
    /// without values or metadata).
    pub const EXTERNAL_TOP_K_MAX: usize = 100;
    /// Vectors one external index upsert takes (Vectorize's batch).
    pub const EXTERNAL_UPSERT_BATCH_MAX: usize = 1_000;
    /// Bytes of a replacement stashed before an erasure's `deleteAll()`: a
    /// whole snapshot, its head and the framing of each key and value.
    pub const STASH_BYTES_MAX: usize = SNAPSHOT_BYTES_MAX + (1 << 20);

    /// Significant digits of an amount (integer part plus the asset's scale):
    /// what `rust_decimal` holds exactly.
    pub const AMOUNT_DIGITS_MAX: usize = 28;
    /// Fraction digits an asset may have (18 covers wei).
    pub const ASSET_SCALE_MAX: u32 = 18;
    /// Bytes of an asset code, account id or transfer id.
    pub const LEDGER_ID_BYTES_MAX: usize = 128;
    /// Assets in one ledger.
    pub const ASSETS_MAX: usize = 1_000;
    /// Accounts in one ledger.
    pub const ACCOUNTS_MAX: usize = 1_000_000;
    /// Transfers kept in one ledger (each id's effect is remembered for ever).
    pub const TRANSFERS_MAX: usize = 5_000_000;
    /// Transfers in one create batch (TigerBeetle's batch size is 8,189).
    pub const TRANSFER_BATCH_MAX: usize = 8_000;
    /// Account ids resolved to indices in one `accounts/indices` call.
    pub const ACCOUNT_INDICES_MAX: usize = 8_000;
    /// Serialized bytes of a transfer's free-form metadata.
    pub const TRANSFER_METADATA_BYTES_MAX: usize = 4 * 1024;
    /// Longest pending-transfer timeout: 30 days.
    pub const PENDING_TIMEOUT_SECONDS_MAX: u64 = 30 * 24 * 3600;
    /// Page size of a ledger account's history (`ledger.history`).
    pub const ACCOUNT_HISTORY_LIMIT_MAX: usize = 1_000;
    /// Balances in one statement reconciliation.
    pub const STATEMENT_LINES_MAX: usize = 10_000;
    /// Execute-once intents kept open or done.
    pub const INTENTS_MAX: usize = 100_000;
    /// Serialized bytes of an intent's parameters or outcome.
    pub const INTENT_JSON_BYTES_MAX: usize = 64 * 1024;

    /// Text given to a tokenizer in one call.
    pub const TOKENIZER_INPUT_BYTES_MAX: usize = 16 * 1024 * 1024;

    /// A model window a budget may describe (the largest published is 2M).
    pub const WINDOW_TOKENS_MAX: usize = 10_000_000;
    /// Slot priorities run from 0 to this.
    pub const SLOT_PRIORITY_MAX: u8 = 10;
    /// Slots in one budget.
    pub const SLOTS_MAX: usize = 1_000;
    /// Per-message overhead a caller may configure.
    pub const MESSAGE_OVERHEAD_TOKENS_MAX: usize = 64;
    /// Tokens a chat format adds per message (role and separators) when the
    /// caller names no other figure: OpenAI's documented 3 for its chat models.
    pub const MESSAGE_OVERHEAD_TOKENS_DEFAULT: usize = 3;
    /// History compacts past this share of the window (AMS's rule).
    pub const SUMMARIZE_AT_PERCENT_DEFAULT: usize = 70;
    /// Compaction keeps the newest turns up to this share of the window verbatim.
    pub const KEEP_RECENT_PERCENT_DEFAULT: usize = 40;
    /// A summary may take this share of the window (at most
    /// [`SUMMARY_TOKENS_DEFAULT_MAX`]).
    pub const SUMMARY_PERCENT_DEFAULT: usize = 10;

    // ---- Conversation history, tool cache, agent configuration (history issue) ----
    /// Smallest window a compacting history may be configured for.
    pub const HISTORY_WINDOW_TOKENS_MIN: usize = 64;
    /// Ceiling of the default `summary_tokens_max` (a tenth of the window).
    pub const SUMMARY_TOKENS_DEFAULT_MAX: usize = 2_048;
    /// Sentences the extractive summarizer weighs in one call.
    pub const SUMMARY_SENTENCES_MAX: usize = 4_096;
    /// Bytes of one turn the extractive summarizer reads (its opening).
    pub const SUMMARY_TURN_BYTES_MAX: usize = 4_096;
    /// Compacted turns kept per session for later queries. A compaction that
    /// would pass it is refused, leaving the history intact.
    pub const ARCHIVED_MESSAGES_MAX: usize = 100_000;
    /// Page size when reading archived turns.
    pub const ARCHIVE_PAGE_LIMIT_MAX: usize = 1_000;
    /// How long the summarizer hook may take before the history is left as is.
    pub const SUMMARIZER_TIMEOUT_MS_DEFAULT: u64 = 30_000;
    /// Longest summarizer timeout a caller may set.
    pub const SUMMARIZER_TIMEOUT_MS_MAX: u64 = 300_000;
    /// Entries of one session's tool-result cache.
    pub const TOOL_CACHE_ENTRIES_MAX: usize = 1_000;
    /// Serialized bytes of one cached tool result.
    pub const TOOL_RESULT_BYTES_MAX: usize = 64 * 1024;
    /// Canonical bytes of one tool call's arguments.
    pub const TOOL_ARGS_BYTES_MAX: usize = 16 * 1024;
    /// A tool name (models allow 64).
    pub const TOOL_NAME_BYTES_MAX: usize = 64;
    /// Bytes of one LLM tool call's arguments (JSON text), checked before
    /// parsing: room for a batch of memories or a session's messages.
    pub const TOOL_CALL_ARGS_BYTES_MAX: usize = 256 * 1024;
    /// Tokens of one tool result unless the caller sets a ceiling: about a
    /// page, so one search cannot crowd a model's context.
    pub const TOOL_RESULT_TOKENS_DEFAULT: usize = 4_000;
    /// The largest ceiling a caller may set on a tool result.
    pub const TOOL_RESULT_TOKENS_MAX: usize = 100_000;
    /// The smallest: below it even a truncation marker cannot fit.
    pub const TOOL_RESULT_TOKENS_MIN: usize = 64;
    /// MCP sessions one tenant keeps open; the least recently used goes first.
    pub const MCP_SESSIONS_MAX: usize = 256;
    /// An MCP session unused this long has ended (its id answers 404).
    pub const MCP_SESSION_IDLE_SECONDS: u64 = 24 * 3_600;
    /// Resources in one page of `resources/list`.
    pub const MCP_RESOURCES_PAGE_MAX: usize = 50;
    /// Bytes of one MCP message (an HTTP body, a stdio line).
    pub const MCP_MESSAGE_BYTES_MAX: usize = 1024 * 1024;
    /// Longest life of a cached tool result: one day.
    pub const TOOL_CACHE_TTL_SECONDS_MAX: u64 = 24 * 3600;
    /// TTL of a cached tool result when none is configured for the tool.
    pub const TOOL_CACHE_TTL_SECONDS_DEFAULT: u64 = 300;
    /// Tools with their own TTL.
    pub const TOOL_TTLS_MAX: usize = 256;
    /// Agents with configuration state in one tenant.
    pub const AGENTS_MAX: usize = 10_000;
    /// One system prompt version.
    pub const PROMPT_BYTES_MAX: usize = 64 * 1024;
    /// A prompt version's note.
    pub const PROMPT_NOTE_BYTES_MAX: usize = 1_024;
    /// Prompt versions kept per agent (the oldest inactive one is pruned).
    pub const PROMPT_VERSIONS_MAX: usize = 100;
    /// One context patch.
    pub const PATCH_BYTES_MAX: usize = 16 * 1024;
    /// Patches per agent.
    pub const PATCHES_MAX: usize = 100;
    /// A patch-removal glob.
    pub const GLOB_BYTES_MAX: usize = 1_024;
    /// Names in a tool allow-list.
    pub const TOOLS_ALLOWED_MAX: usize = 256;
    /// Recalled memories given to one prompt assembly.
    pub const PROMPT_MEMORIES_MAX: usize = 100;
    /// Texts shorter than this are counted directly rather than memoized.
    pub const COUNT_CACHE_TEXT_BYTES_MIN: usize = 32;
    /// Counts memoized per encoding before the memo starts over.
    pub const COUNT_CACHE_ENTRIES_MAX: usize = 200_000;

    // ---- Vector index (long-term memory issue) ----

    /// Components of one vector (the widest common embedding is 3,072).
    pub const VECTOR_DIM_MAX: usize = 4096;
    /// Live points in one vector index.
    pub const VECTOR_POINTS_MAX: usize = 1_000_000;
    /// Stored rows, live plus tombstoned, in one index: past this, adds are
    /// refused until a compaction drops tombstones.
    pub const VECTOR_ROWS_MAX: usize = 2 * VECTOR_POINTS_MAX;
    /// Points in one add call.
    pub const VECTOR_BATCH_POINTS_MAX: usize = 100_000;
    /// Largest magnitude of one component: keeps every dot product of two
    /// vectors finite in f32 (4096 × (1e15)² < f32::MAX).
    pub const VECTOR_COMPONENT_ABS_MAX: f32 = 1e15;
    /// Results of one search (Agent Memory Server caps `limit` at 100).
    pub const VECTOR_K_MAX: usize = 100;
    /// Beam width of one HNSW search, and of graph construction.
    pub const VECTOR_EF_MAX: usize = 1000;
    /// Default beam width of an HNSW search: recall@10 ≈ 0.99 on the rustdocs
    /// set (MiniLM-384), see `examples/vector_probe.rs`.
    pub const VECTOR_EF_SEARCH_DEFAULT: usize = 64;
    /// Default beam width while building a graph.
    pub const VECTOR_EF_CONSTRUCTION_DEFAULT: usize = 100;
    /// Links kept per node on layer 0 (instant-distance keeps at most 2·M = 64).
    pub const VECTOR_LINKS_MAX: usize = 64;
    /// Default layer-0 links kept per node.
    pub const VECTOR_LINKS_DEFAULT: usize = 32;
    /// Default size at which the flat segment is sealed into an HNSW segment:
    /// below it an exact SIMD scan is as fast as a graph search (measured).
    pub const VECTOR_SEAL_POINTS_DEFAULT: usize = 4096;
    /// Smallest configurable seal size.
    pub const VECTOR_SEAL_POINTS_MIN: usize = 64;
    /// Rows of one sealed segment: one graph build, the unit of compaction
    /// work, is never larger.
    pub const VECTOR_SEGMENT_POINTS_MAX: usize = 65_536;
    /// A key subset this small is answered exactly by scanning its rows.
    pub const VECTOR_FILTER_EXACT_KEYS_MAX: usize = 8192;
    /// Distance computations one filtered graph search may spend, per unit of
    /// `ef`, before it gives up and the query falls back to an exact scan.
    pub const VECTOR_FILTER_VISITS_PER_EF: usize = 64;
    /// Candidates kept per result when int8 scores are re-ranked.
    pub const VECTOR_RERANK_OVERSAMPLE: usize = 4;
    /// A sealed segment whose tombstones reach this percentage of its rows is
    /// rebuilt by compaction.
    pub const VECTOR_TOMBSTONE_PERCENT_MAX: usize = 30;

    // ---- Long-term memory records, BM25, filters, embedder (long-term memory issue) ----
    /// Long-term memories held by one tenant.
    pub const LTM_RECORDS_MAX: usize = 200_000;
    /// Memories in one create call (one logged op; with 384-d vectors a full
    /// batch stays well under a log record's limit).
    pub const LTM_CREATE_BATCH_MAX: usize = 500;
    /// Ids in one delete call.
    pub const LTM_DELETE_BATCH_MAX: usize = 1_000;
    /// Deepest search offset (results come from the top `offset + limit`, at most 100).
    pub const LTM_SEARCH_OFFSET_MAX: usize = 99;
    /// Hybrid search reads this many times `offset + limit` candidates from
    /// each side before fusing (at least [`LTM_HYBRID_DEPTH_MIN`], at most
    /// [`VECTOR_K_MAX`]).
    pub const LTM_HYBRID_DEPTH_FACTOR: usize = 5;
    /// The fewest candidates hybrid search reads from each side.
    pub const LTM_HYBRID_DEPTH_MIN: usize = 50;
    /// Points one write may spend on segment compaction, so no request pays for
    /// a full rebuild. It must cover one seal of the flat segment: a smaller
    /// bound leaves the flat segment growing without end (it was 2,048 below
    /// a 4,096 seal until issue 16 found every tenant on an exact scan).
    pub const LTM_COMPACT_WORK_POINTS_PER_WRITE: usize = VECTOR_SEAL_POINTS_DEFAULT;
    /// Points one background pass (the Worker's alarm) may spend merging
    /// segments that no write's bound covers: about 4–7 s of workerd CPU,
    /// inside a Durable Object alarm's 30 s. Segments therefore grow to about
    /// this size, and 100k points sit in a handful of graphs, not 25.
    pub const LTM_COMPACT_WORK_POINTS_PER_PASS: usize = 32_768;
    /// Quiet time after the last write before a background pass runs, so a
    /// burst of writes is not interleaved with seconds-long merges.
    pub const LTM_COMPACT_DELAY_MS: u64 = 5_000;

    /// A memory record's text. Equal to a message's content, since AMS promotes
    /// whole messages to `message` memories.
    pub const MEMORY_TEXT_BYTES_MAX: usize = MESSAGE_CONTENT_BYTES_MAX;
    /// Topics, and separately entities, on one memory record.
    pub const MEMORY_TAGS_MAX: usize = 64;
    /// One topic, entity or `extracted_from` message id.
    pub const MEMORY_TAG_BYTES_MAX: usize = 256;
    /// Message ids in a record's `extracted_from`.
    pub const MEMORY_EXTRACTED_FROM_MAX: usize = 1_000;
    /// A record's `metadata` and `extraction_strategy_config` objects, each,
    /// serialized.
    pub const MEMORY_METADATA_BYTES_MAX: usize = 16 * 1024;
    /// A record's `extraction_strategy` name.
    pub const MEMORY_STRATEGY_BYTES_MAX: usize = 64;
    /// Bytes of one NDJSON import (`POST /v1/import`), the one route whose
    /// body may pass [`REQUEST_BODY_BYTES_CEILING`]: it writes a snapshot in
    /// chunks, never one op. Bounded so the text, its parse and the staged
    /// state fit a 128 MB isolate beside the live one.
    pub const IMPORT_BYTES_MAX: usize = 32 * 1024 * 1024;
    /// Bytes in a long-term record's `fact_key` (`user.units`).
    pub const LTM_FACT_KEY_BYTES_MAX: usize = 256;
    /// Versions kept per long-term record; the oldest go first, redaction
    /// receipts last (see `longterm::versions`).
    pub const LTM_VERSIONS_PER_MEMORY_MAX: usize = 32;
    /// Past versions of one record that keep their body (restorable);
    /// older ones keep only their hash.
    pub const LTM_VERSION_BODIES_PER_MEMORY_MAX: usize = 8;
    /// Bytes of version bodies per tenant (text, metadata and
    /// [`LTM_VERSION_OVERHEAD_BYTES`] each); the oldest are stripped first.
    pub const LTM_VERSION_BODY_BYTES_MAX: usize = 16 * 1024 * 1024;
    /// What a version body is counted at beyond its text and metadata.
    pub const LTM_VERSION_OVERHEAD_BYTES: usize = 256;
    /// Records that no longer exist but keep a history (of deletes,
    /// forgets, redactions); the one gone longest is dropped first.
    pub const LTM_GONE_HISTORIES_MAX: usize = 10_000;
    /// A search query's text.
    pub const QUERY_TEXT_BYTES_MAX: usize = 16 * 1024;
    /// Distinct terms of a keyword query that are scored; later ones are ignored.
    pub const QUERY_TERMS_MAX: usize = 256;
    /// Documents in one keyword index (slots are `u32`).
    pub const BM25_DOCS_MAX: usize = 10_000_000;
    /// Results one keyword search may return.
    pub const KEYWORD_RESULTS_MAX: usize = 10_000;
    /// BM25 term-frequency saturation. Tuned with the natural analyzer on a
    /// k1 × b grid (0.6–2.0 × 0.3–0.9) over the public rustdocs queries,
    /// convmem and convbench's dev split: 0.9 with b = 0.5 was best on
    /// rustdocs (0.814 nDCG@10 against 0.812 at Lucene's 1.2 / 0.75) and on
    /// convmem (0.424 against 0.422), and 0.018 better on convbench dev.
    /// Memory texts repeat a word rarely, so term frequency saturates early.
    pub const BM25_K1_DEFAULT: f32 = 0.9;
    /// BM25 length normalization (see [`BM25_K1_DEFAULT`] for the grid).
    /// Lower than Lucene's 0.75 because a chat turn's length says little
    /// about its relevance: a long turn is not a diluted one.
    pub const BM25_B_DEFAULT: f32 = 0.5;
    /// Largest `k1` accepted (past about 3 BM25 is plain TF-IDF).
    pub const BM25_K1_MAX: f32 = 10.0;
    /// Values in one filter's `any`, `all` or `none` list.
    pub const FILTER_VALUES_MAX: usize = 256;
    /// One filter value (ids and tags are at most 256 bytes anyway).
    pub const FILTER_VALUE_BYTES_MAX: usize = 256;
    /// Reciprocal-rank fusion's `k` (Cormack et al.; Elasticsearch and Redis
    /// use it too).
    pub const RRF_K_DEFAULT: f64 = 60.0;
    /// AMS's `hybrid_alpha` default: the weight of vector similarity.
    pub const HYBRID_ALPHA_DEFAULT: f64 = 0.7;
    /// Standardized fusion scores are clipped to ± this many standard
    /// deviations, so one outlier score cannot outweigh the other side
    /// entirely (`core::retrieval::fuse`).
    pub const FUSION_Z_CLIP: f64 = 3.0;
    /// How many of a side's best scores its confidence is read from: the
    /// best against the next nine, the page a caller usually reads.
    pub const FUSION_CONFIDENCE_TOP: usize = 10;
    /// The sharpness of the per-query fusion weight
    /// (`fuse::coverage_weight`). Grid over 1–3 × priors 0.3–0.7 on
    /// rustdocs, convmem and convbench (examples/ltm_quality.rs): 2 with a
    /// prior of 0.5 was the only setting within 0.005 nDCG@10 of the better
    /// input on all three with MiniLM vectors.
    pub const FUSION_COVERAGE_POWER: f64 = 2.0;
    /// The vector side's prior weight when a hybrid search names no
    /// `hybrid_alpha` (see [`FUSION_COVERAGE_POWER`] for how it was chosen).
    pub const HYBRID_ALPHA_PRIOR: f64 = 0.5;
    /// How much a time expression in the query lifts the hits whose event
    /// date (else creation time) falls in its window: the score plus this
    /// share of itself, enough to reorder near-equals, not to lift an
    /// unrelated record over a relevant one.
    pub const TIME_BOOST: f64 = 0.5;
    /// Turns before and after each hit that `expand` may attach: enough for
    /// the exchange around a fact, few enough that a page of hits stays a
    /// page.
    pub const LTM_EXPAND_MAX: usize = 5;
    /// The offline embedder's default dimensions: MiniLM's, so a namespace can
    /// switch between the two without changing shape.
    pub const EMBED_DIM_DEFAULT: usize = 384;
    /// Fewest dimensions the offline embedder accepts (its widest is
    /// [`VECTOR_DIM_MAX`]).
    pub const EMBED_DIM_MIN: usize = 16;
    /// The offline default's weight of the static embedder in its cosine
    /// (the hashed one has the rest). Measured with the trained v3 asset on
    /// the conversational set and rustdocs (`ltm_quality --mix`): 0.5 gives
    /// 0.594 / 0.700 nDCG@10, 0.6 0.613 / 0.679, 0.7 0.619 / 0.652; static
    /// alone 0.616 / 0.531, hashed alone 0.299 / 0.708. 0.6 serves chat
    /// first and keeps documentation above MiniLM's 0.628.
    pub const EMBED_MIX_STATIC_WEIGHT: f32 = 0.6;
    /// Bytes of a static embedder asset (the shipped one is about 8 MB
    /// before gzip).
    pub const STATIC_EMBED_ASSET_BYTES_MAX: usize = 64 * 1024 * 1024;
    /// Tokens in a static embedder's vocabulary (BERT's has 30,522).
    pub const STATIC_EMBED_VOCAB_MAX: usize = 262_144;
    /// Tokens averaged into one vector at the most an asset may ask for
    /// (model2vec's default is 512; a longer text is embedded from its start).
    pub const STATIC_EMBED_TOKENS_MAX: usize = 8_192;
    /// Longest word WordPiece may split at the most an asset may ask for
    /// (BERT's is 100 characters; a longer word is one unknown token).
    pub const STATIC_EMBED_WORD_CHARS_MAX: usize = 1_000;
    /// An embedder's identity, stored with a namespace's vectors.
    pub const EMBEDDER_NAME_BYTES_MAX: usize = 128;
    /// Records one re-embedding op carries (their vectors ride in the op:
    /// 256 × 384 × 4 bytes is 393 KB, well under a log record's limit).
    pub const LTM_REEMBED_BATCH_MAX: usize = 256;
    /// Records one `reembed` call stages before answering (callers repeat
    /// until `done`): with the offline embedders well under a second.
    pub const LTM_REEMBED_RECORDS_PER_CALL_MAX: usize = 4_096;

    // ---- Change feed (issue 11) ----

    /// Ids listed in one event; `count` gives the total.
    pub const FEED_EVENT_IDS_MAX: usize = 32;
    /// Recent events a store keeps in memory for resumes (about 0.5–3 MB at
    /// the most): a `since` older than these gets `resync_required`.
    pub const FEED_EVENTS_KEPT: usize = 4_096;
    /// Kinds, and separately keys, in one subscription filter.
    pub const FEED_FILTER_ITEMS_MAX: usize = 64;
    /// Events in one page of `GET /v1/events`.
    pub const FEED_PAGE_EVENTS_MAX: usize = 1_000;
    /// Events in a page that names no limit.
    pub const FEED_PAGE_EVENTS_DEFAULT: usize = 100;
    /// Live subscribers (WebSocket and event-stream together) of one
    /// tenant's Durable Object; one more gets 503 `overloaded`.
    pub const FEED_SUBSCRIBERS_MAX: usize = 1_000;
    /// Event bytes sent to one subscriber and not yet acknowledged (a
    /// WebSocket client's `{"ack": seq}`, an event stream's read). Past it
    /// the subscriber is closed as a slow consumer and resumes with `since`.
    pub const FEED_SUBSCRIBER_BUFFER_BYTES_MAX: usize = 1024 * 1024;
    /// Checkpoints a subscription keeps to credit partial acks (each covers
    /// at least 1/16 of the buffer, so at most 17 are ever live).
    pub const FEED_ACK_MARKS_MAX: usize = 32;
    /// One message a subscriber sends (an ack).
    pub const FEED_CLIENT_MESSAGE_BYTES_MAX: usize = 256;
    /// Events of one shard in one relay to its tenant's home (issue 21):
    /// a shard with more sends them in rounds.
    pub const FEED_RELAY_EVENTS_MAX: usize = 1_000;
    /// Relay rounds one shard runs, or home runs with one shard, in one
    /// request: what is left waits for the next write or read.
    pub const FEED_RELAY_ROUNDS_MAX: usize = 8;
    /// How long a shard, told by home that nobody follows the feed live,
    /// stops relaying after its writes (home pulls when a page is read or a
    /// subscriber arrives, and a subscriber's arrival tells every shard).
    pub const FEED_RELAY_QUIET_TRUST_MS: u64 = 60_000;

    // ---- Service-state cache (issue 11, point 3) ----

    /// Services one tenant may register (the seed's six are there by default).
    pub const SERVICES_MAX: usize = 64;
    /// A service name.
    pub const SERVICE_NAME_BYTES_MAX: usize = 64;
    /// Longest TTL a service may have: a week.
    pub const SERVICE_TTL_SECONDS_MAX: u64 = 7 * 24 * 3600;
    /// One cached state, as JSON text.
    pub const SERVICE_STATE_BYTES_MAX: usize = 256 * 1024;
    /// Cached states of one tenant, all agents and services together.
    pub const SERVICE_CACHE_ENTRIES_MAX: usize = 10_000;
    /// How long an upstream may take before `upstream_timeout`, unless the
    /// host sets another deadline.
    pub const SERVICE_FETCH_TIMEOUT_MS_DEFAULT: u64 = 10_000;
    /// Longest deadline a host may set for one upstream call.
    pub const SERVICE_FETCH_TIMEOUT_MS_MAX: u64 = 120_000;
    /// Services in one portfolio snapshot.
    pub const SERVICE_SNAPSHOT_SERVICES_MAX: usize = SERVICES_MAX;

    // ---- Agent profiles and user schema versions (issue 11, point 5) ----

    /// Agent profiles of one tenant.
    pub const PROFILES_MAX: usize = 10_000;
    /// One profile's fields, as JSON.
    pub const PROFILE_BYTES_MAX: usize = 64 * 1024;
    /// Newest user schema version a kind may declare.
    pub const USER_SCHEMA_VERSION_MAX: u32 = 1_000;
    /// Steps in one declarative migration.
    pub const USER_SCHEMA_STEPS_MAX: usize = 64;
    /// Keys in one step's path.
    pub const USER_SCHEMA_PATH_DEPTH_MAX: usize = 16;
    /// One schema with its whole chain, as JSON.
    pub const USER_SCHEMA_BYTES_MAX: usize = 256 * 1024;

    // ---- Episodic log (long-term memory issue) ----

    /// An event type (`tool_call`, `turn_archived`, ...).
    pub const EPISODE_KIND_BYTES_MAX: usize = 64;
    /// An event's JSON payload, serialized: room for one archived message of
    /// [`MESSAGE_CONTENT_BYTES_MAX`] plus its envelope.
    pub const EPISODE_PAYLOAD_BYTES_MAX: usize = MESSAGE_CONTENT_BYTES_MAX + 16 * 1024;
    /// An event's outcome (a string or JSON), serialized.
    pub const EPISODE_OUTCOME_BYTES_MAX: usize = 16 * 1024;
    /// Default number of events kept per agent (the newest).
    pub const EPISODES_PER_AGENT_DEFAULT: usize = 1_000;
    /// Largest per-agent cap a caller may configure (enough for a long
    /// conversation history archived turn by turn).
    pub const EPISODES_PER_AGENT_MAX: usize = 1_000_000;
    /// Events held by one log, all agents together.
    pub const EPISODES_MAX: usize = 1_000_000;
    /// Serialized payload and outcome bytes held by one log: it lives in the
    /// same snapshot as everything else (see [`SNAPSHOT_BYTES_MAX`]).
    pub const EPISODES_BYTES_MAX: usize = 32 * 1024 * 1024;
    /// Events one `recent` call returns.
    pub const EPISODES_RECENT_MAX: usize = 1_000;

    // ---- Tenancy and trust (issue 12) ----

    /// API keys one deployment's key directory holds.
    pub const API_KEYS_MAX: usize = 10_000;
    /// A presented bearer token; longer ones are refused unread.
    pub const BEARER_TOKEN_BYTES_MAX: usize = 256;
    /// Keys one listing returns.
    pub const API_KEYS_LIST_MAX: usize = 1_000;
    /// How long a rotated key's old secret may keep working.
    pub const KEY_ROTATE_GRACE_SECONDS_MAX: u64 = 7 * 86_400;
    /// Requests per second a key's token bucket refills by default
    /// (`EDGEMEM_RATE_PER_SECOND` overrides it up to the ceiling).
    pub const RATE_PER_SECOND_DEFAULT: u64 = 100;
    /// The most any key may be given.
    pub const RATE_PER_SECOND_CEILING: u64 = 10_000;
    /// A key's burst (bucket size) by default (`EDGEMEM_RATE_BURST`).
    pub const RATE_BURST_DEFAULT: u64 = 200;
    /// The largest burst any key may be given.
    pub const RATE_BURST_CEILING: u64 = 20_000;
    /// Long-term records one tenant may hold by default
    /// (`EDGEMEM_QUOTA_RECORDS`, at most [`LTM_RECORDS_MAX`]).
    pub const TENANT_RECORDS_DEFAULT: u64 = 100_000;
    /// Bytes one tenant's state may take in storage (snapshot plus log) by
    /// default (`EDGEMEM_QUOTA_BYTES`, at most [`SNAPSHOT_BYTES_MAX`]).
    pub const TENANT_BYTES_DEFAULT: u64 = 64 * 1024 * 1024;
    /// Ledger accounts one tenant may hold by default
    /// (`EDGEMEM_QUOTA_LEDGER_ACCOUNTS`, at most [`ACCOUNTS_MAX`]).
    pub const TENANT_LEDGER_ACCOUNTS_DEFAULT: u64 = 100_000;
    /// Nesting depth of a request body, checked on the raw bytes before
    /// parsing (room for session data of [`JSON_DEPTH_MAX`] in its envelope).
    pub const REQUEST_JSON_DEPTH_MAX: usize = JSON_DEPTH_MAX + 8;
    /// A by-id directory entry younger than this is kept even when its
    /// tenant does not (yet) hold the record: its create may be in flight.
    pub const DIRECTORY_ENTRY_GRACE_MS: u64 = 60_000;
    /// Tenants one id is looked up in by the by-id directory.
    pub const DIRECTORY_NAMESPACES_PER_ID_MAX: usize = 64;
    /// Origins in the CORS allow-list (`EDGEMEM_CORS_ORIGINS`).
    pub const CORS_ORIGINS_MAX: usize = 32;

    // Agent operations: the decision log, privacy and guardrails.

    /// One decision entry's text.
    pub const DECISION_TEXT_BYTES_MAX: usize = 16 * 1024;
    /// One decision entry's `data`, serialized.
    pub const DECISION_DATA_BYTES_MAX: usize = 64 * 1024;
    /// Memory ids one decision entry may name.
    pub const DECISION_REFS_MAX: usize = 100;
    /// Entries in one session's decision log. Past it an append is refused
    /// (the log is an audit trail: nothing is dropped to make room).
    pub const DECISIONS_PER_SESSION_MAX: usize = 100_000;
    /// Bytes of one session's decision log (text, data and refs).
    pub const DECISION_LOG_BYTES_MAX: usize = 16 * 1024 * 1024;
    /// Entries in one page of the decision log.
    pub const DECISION_PAGE_LIMIT_MAX: usize = 1_000;
    /// Default page size of the decision log.
    pub const DECISION_PAGE_LIMIT_DEFAULT: usize = 100;

    // Background extraction (issue 14).

    /// New turns one extraction pass reads from a session; a longer backlog
    /// takes several passes.
    pub const EXTRACT_TURNS_PER_PASS_MAX: usize = 64;
    /// Records one extraction pass may commit.
    pub const EXTRACT_RECORDS_PER_PASS_MAX: usize = 256;
    /// Sessions one wake-up extracts; the rest wait for the next wake-up.
    pub const EXTRACT_SESSIONS_PER_PASS_MAX: usize = 8;
    /// Quiet time after a session's last write before its new turns are
    /// extracted, so a burst of appends makes one pass.
    pub const EXTRACT_DEBOUNCE_MS: u64 = 2_000;
    /// Attempts of a failing extractor (or embedder) hook on one session before
    /// the failure is surfaced as an episode and an event; the pass is tried
    /// again after the session's next write.
    pub const EXTRACT_ATTEMPTS_MAX: u32 = 5;
    /// The first retry delay of a failing extraction pass; it doubles with each
    /// attempt.
    pub const EXTRACT_RETRY_BASE_MS: u64 = 1_000;
    /// Tokens of the rolling summary the summary strategy keeps per session.
    pub const EXTRACT_SUMMARY_TOKENS_MAX: usize = 400;
    /// Cosine similarity at or above which an extracted memory is a
    /// duplicate of a current memory of the same user (or of one made
    /// earlier in the same pass) and is not stored.
    pub const EXTRACT_DEDUP_SIMILARITY_MIN: f64 = 0.92;
    /// Characters of a failed pass's error kept in the episode that reports it.
    pub const EXTRACT_ERROR_CHARS_MAX: usize = 500;
    /// The Worker's extractor endpoint (`EDGEMEM_EXTRACTOR=http`): its
    /// deadline unless `EDGEMEM_EXTRACTOR_TIMEOUT_MS` says otherwise.
    pub const EXTRACT_HOOK_TIMEOUT_MS_DEFAULT: u64 = 30_000;
    /// The longest `EDGEMEM_EXTRACTOR_TIMEOUT_MS` (an alarm runs at most 15 minutes).
    pub const EXTRACT_HOOK_TIMEOUT_MS_MAX: u64 = 300_000;
    /// An extractor endpoint's or model's answer, read whole.
    pub const EXTRACT_HOOK_ANSWER_BYTES_MAX: usize = 1024 * 1024;
    /// Tokens a Workers AI extractor may answer with.
    pub const EXTRACT_HOOK_ANSWER_TOKENS_MAX: usize = 1_024;
    /// Rounds of passes one `flushExtraction` runs (each round up to
    /// [`EXTRACT_SESSIONS_PER_PASS_MAX`] sessions).
    pub const EXTRACT_FLUSH_ROUNDS_MAX: usize = 1_000;

    // Time expressions in search queries and record texts (src/core/timeexpr).

    /// Time windows read from one query: a query names one or two periods,
    /// and each window costs a pass over the candidates.
    pub const TIME_WINDOWS_MAX: usize = 4;
    /// Bytes of a query (or of a record's text) scanned for time
    /// expressions, so a pasted document costs no more than a question.
    pub const TIME_QUERY_BYTES_MAX: usize = 4 * 1024;

    // Summary views and tasks (issue 14, point 6).

    /// Summary views one tenant keeps.
    pub const SUMMARY_VIEWS_MAX: usize = 100;
    /// Partitions one run of a view summarizes; a view whose memories fall
    /// in more groups is refused (add filters, or run partitions one by one).
    pub const SUMMARY_VIEW_PARTITIONS_PER_RUN_MAX: usize = 32;
    /// Partition results one view keeps (single-partition runs add to them).
    pub const SUMMARY_VIEW_PARTITIONS_KEPT_MAX: usize = 256;
    /// Memories of one partition given to the summarizer, newest first.
    pub const SUMMARY_VIEW_MEMORIES_PER_PARTITION_MAX: usize = 200;
    /// Tokens of one partition's summary the summarizer is asked for.
    pub const SUMMARY_VIEW_SUMMARY_TOKENS_MAX: usize = 400;
    /// Bytes of one stored partition summary; a hook answering more fails.
    pub const SUMMARY_VIEW_SUMMARY_BYTES_MAX: usize = 16 * 1024;
    /// Bytes of a view's name.
    pub const SUMMARY_VIEW_NAME_BYTES_MAX: usize = 256;
    /// Bytes of a view's summarization prompt.
    pub const SUMMARY_VIEW_PROMPT_BYTES_MAX: usize = 8 * 1024;
    /// The longest time window of a view, in days.
    pub const SUMMARY_VIEW_WINDOW_DAYS_MAX: u32 = 36_500;
    /// Continuous views one wake-up re-runs; the rest wait for the next.
    pub const SUMMARY_VIEWS_PER_WAKE_MAX: usize = 4;
    /// Quiet time after a change to long-term memory before a continuous
    /// view is re-run, so a burst of writes makes one run.
    pub const SUMMARY_VIEW_REFRESH_DELAY_MS: u64 = 5_000;
    /// Task records one tenant keeps; the oldest finished one makes room.
    pub const TASKS_KEPT_MAX: usize = 1_000;
    /// Characters of a failed task's error message.
    pub const TASK_ERROR_CHARS_MAX: usize = 500;
    /// Users with a consent record in one tenant.
    pub const CONSENTS_MAX: usize = 1_000_000;
    /// Required clauses in one agent's guardrails.
    pub const GUARDRAIL_REQUIRED_MAX: usize = 32;
    /// Forbidden patterns in one agent's guardrails.
    pub const GUARDRAIL_FORBIDDEN_MAX: usize = 32;
    /// One required clause or forbidden pattern.
    pub const GUARDRAIL_RULE_BYTES_MAX: usize = 1024;
    /// The largest token ceiling a guardrail may set.
    pub const GUARDRAIL_TOKENS_MAX_CEILING: u64 = 1_000_000;
    /// Bytes of the privacy secret (`EDGEMEM_PRIVACY_KEY`, npm `privacyKey`)
    /// at most; at least [`PSEUDONYM_SECRET_BYTES_MIN`].
    pub const PRIVACY_KEY_BYTES_MAX: usize = 1024;
    // The privacy filters (src/core/privacy): scanner bounds and formats.

    /// Bytes of the prefix (`psu_`) that marks a sealed user id.
    pub const SEALED_USER_ID_PREFIX_BYTES: usize = 4;
    /// Fewest bytes of secret a pseudonym key is derived from (`EDGEMEM_PRIVACY_KEY`,
    /// npm `privacyKey`): shorter secrets are guessable.
    pub const PSEUDONYM_SECRET_BYTES_MIN: usize = 16;
    /// Hex digits of HMAC-SHA256 kept in a pseudonym (40 bits: collisions stay
    /// unlikely below about a million distinct values of one kind).
    pub const PSEUDONYM_TOKEN_HEX_LEN: usize = 10;
    /// Bytes of the synthetic IV at the front of a sealed user id.
    pub const SEALED_USER_ID_IV_BYTES: usize = 16;
    /// A sealed user id longer than this is refused unread: it could not have
    /// come from a user id of at most [`ID_BYTES_MAX`] bytes.
    pub const SEALED_USER_ID_BYTES_MAX: usize =
        SEALED_USER_ID_PREFIX_BYTES + (SEALED_USER_ID_IV_BYTES + ID_BYTES_MAX).div_ceil(3) * 4;
    /// Shortest value of a `password=`-style assignment that is redacted:
    /// shorter ones are placeholders, counts or flags far more often than secrets.
    pub const SECRET_ASSIGNMENT_VALUE_CHARS_MIN: usize = 8;
    /// Longest value of a `password=`-style assignment that is looked at; the
    /// scan of one candidate stops there, which keeps the whole pass linear.
    pub const SECRET_ASSIGNMENT_VALUE_BYTES_MAX: usize = 512;
    /// Shortest string value of a field whose name says it is a secret
    /// (`"password"`, `"apiKey"`) that is redacted.
    pub const SECRET_FIELD_VALUE_CHARS_MIN: usize = 4;
    /// Shortest random part of a prefixed API key (Stripe, pf_live, Slack).
    pub const SECRET_TOKEN_BODY_CHARS_MIN: usize = 16;
    /// Shortest random part of an OpenAI `sk-` key (real ones have 48 or more).
    pub const OPENAI_KEY_BODY_CHARS_MIN: usize = 20;
    /// Shortest random part of an Anthropic `sk-ant-` key.
    pub const ANTHROPIC_KEY_BODY_CHARS_MIN: usize = 32;
    /// Shortest header and payload segment of a JWT.
    pub const JWT_SEGMENT_CHARS_MIN: usize = 10;
    /// Shortest signature segment of a JWT (HS256 gives 43).
    pub const JWT_SIGNATURE_CHARS_MIN: usize = 16;
    /// Farthest a PEM private key's END line is looked for after its BEGIN line
    /// (an 8192-bit RSA key is about 6.5 KB).
    pub const PEM_BLOCK_BYTES_MAX: usize = 64 * 1024;
    /// Longest local part of an email address (RFC 5321).
    pub const EMAIL_LOCAL_BYTES_MAX: usize = 64;
    /// Longest domain of an email address (RFC 1035).
    pub const EMAIL_DOMAIN_BYTES_MAX: usize = 253;
    /// Fewest digits of an international phone number, country code included.
    pub const PHONE_DIGITS_MIN: usize = 8;
    /// Most digits of a phone number (E.164).
    pub const PHONE_DIGITS_MAX: usize = 15;
    /// Fewest digits of a national number with a leading trunk zero.
    pub const PHONE_NATIONAL_DIGITS_MIN: usize = 9;
    /// Most digits of a national number with a leading trunk zero.
    pub const PHONE_NATIONAL_DIGITS_MAX: usize = 12;
    /// Fewest digits of a payment card number (ISO/IEC 7812).
    pub const CARD_DIGITS_MIN: usize = 13;
    /// Most digits of a payment card number (ISO/IEC 7812).
    pub const CARD_DIGITS_MAX: usize = 19;
    /// Shortest IBAN of any country (Norway's).
    pub const IBAN_CHARS_MIN: usize = 15;
    /// Longest IBAN (ISO 13616).
    pub const IBAN_CHARS_MAX: usize = 34;
    /// Longest IPv6 address in text (with an embedded IPv4 address).
    pub const IPV6_TEXT_BYTES_MAX: usize = 45;

    /// Strings one scrub walks in a JSON value (the value was already
    /// bounded in bytes; this bounds the walk in steps).
    pub const SCRUB_STRINGS_MAX: usize = 1_000_000;

    // The offline extractor (src/core/extract/rules.rs).

    /// Bytes of one turn the offline extractor reads (cut back to the last
    /// whole sentence): statements about the user are short, and a longer
    /// turn is mostly a paste.
    pub const EXTRACT_TURN_BYTES_MAX: usize = 4 * 1024;
    /// Candidates one call of the offline extractor proposes at most.
    pub const EXTRACT_CANDIDATES_MAX: usize = 64;
    /// Bytes of one candidate's text: a longer statement is a run-on, which
    /// makes a poor memory, so it is dropped rather than cut.
    pub const EXTRACT_CANDIDATE_BYTES_MAX: usize = 256;
    /// Entities kept on one extracted candidate.
    pub const EXTRACT_ENTITIES_MAX: usize = 8;
    /// Topics kept on one extracted candidate.
    pub const EXTRACT_TOPICS_MAX: usize = 4;
}

// One write's compaction must be able to seal the flat segment (see
// `LTM_COMPACT_WORK_POINTS_PER_WRITE`).
const _: () = assert!(LTM_COMPACT_WORK_POINTS_PER_WRITE >= VECTOR_SEAL_POINTS_DEFAULT);
