// Hand-written types for the public API (the wasm-bindgen types of the core
// are internal). Field names of sessions follow Agent Memory Server's JSON.

/** Stable error codes; `EdgememError.code` is one of these. */
export type ErrorCode =
  | "invalid_json"
  | "invalid_input"
  | "payload_too_large"
  | "limit_exceeded"
  | "not_found"
  | "unauthorized"
  | "method_not_allowed"
  | "snapshot_corrupt"
  | "schema_version_unsupported"
  | "log_corrupt"
  | "storage_error"
  | "store_unsuitable"
  | "internal";

export class EdgememError extends Error {
  readonly name: "EdgememError";
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string);
}

/** The byte-moving protocol every store follows. `put` resolves once durable. */
export interface Store {
  get(key: string): Promise<Uint8Array | ArrayBuffer | undefined | null>;
  put(key: string, bytes: Uint8Array): Promise<unknown>;
  delete(key: string): Promise<unknown>;
  list(prefix: string): Promise<string[]>;
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

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

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
}

export interface StoreStats {
  last_seq: number;
  log_records_since_snapshot: number;
  snapshot_gen: number;
  snapshot_bytes: number;
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
}

export class Memory {
  private constructor();
  static open(options?: OpenOptions): Promise<Memory>;
  static openPublished(source: Store, options?: { keyPrefix?: string; namespace?: string; clock?: () => number }): Promise<Memory>;
  getOrCreateSession(sessionId: string, init?: SessionInput): Promise<{ created: boolean; session: Session }>;
  putSession(sessionId: string, session?: SessionInput): Promise<Session>;
  appendMessages(sessionId: string, messages: MessageInput[]): Promise<Session>;
  getSession(sessionId: string, options?: { userId?: string; recentMessagesLimit?: number }): Promise<Session | null>;
  deleteSession(sessionId: string): Promise<boolean>;
  listSessions(options?: { offset?: number; limit?: number; userId?: string }): Promise<{ sessions: string[]; total: number }>;
  expire(): Promise<number | null>;
  snapshot(): Promise<StoreStats>;
  publishSnapshot(target: Store, options?: { keyPrefix?: string }): Promise<StoreStats>;
  stats(): Promise<StoreStats>;
  free(): void;
}

export class MemoryStore implements Store {
  constructor(map?: Map<string, Uint8Array>);
  readonly map: Map<string, Uint8Array>;
  get(key: string): Promise<Uint8Array | undefined>;
  put(key: string, bytes: Uint8Array): Promise<void>;
  delete(key: string): Promise<void>;
  list(prefix: string): Promise<string[]>;
}

export class IndexedDBStore implements Store {
  static open(name?: string, options?: { indexedDB?: IDBFactory }): Promise<IndexedDBStore>;
  get(key: string): Promise<Uint8Array | undefined>;
  put(key: string, bytes: Uint8Array): Promise<void>;
  delete(key: string): Promise<void>;
  list(prefix: string): Promise<string[]>;
  close(): void;
}

/** Structural type of a Durable Object's `state.storage`, as far as edgemem uses it. */
export interface DurableObjectStorageLike {
  get(key: string): Promise<unknown>;
  put(key: string, value: unknown): Promise<void>;
  delete(key: string): Promise<boolean>;
  list(options: { prefix: string }): Promise<Map<string, unknown>>;
}

export class DurableObjectStore implements Store {
  constructor(storage: DurableObjectStorageLike);
  get(key: string): Promise<Uint8Array | undefined>;
  put(key: string, bytes: Uint8Array): Promise<void>;
  delete(key: string): Promise<void>;
  list(prefix: string): Promise<string[]>;
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
  list(prefix: string): Promise<string[]>;
}

export function version(): string;
