// Types of `edgemem/langchain`: LangChain.js and LangGraph.js adapters over
// an open `Memory` (peer dependencies: @langchain/core and
// @langchain/langgraph-checkpoint).
import { BaseListChatMessageHistory } from "@langchain/core/chat_history";
import { VectorStore } from "@langchain/core/vectorstores";
import { Embeddings, type EmbeddingsParams, type EmbeddingsInterface } from "@langchain/core/embeddings";
import { Document, type DocumentInterface } from "@langchain/core/documents";
import type { BaseMessage } from "@langchain/core/messages";
import { BaseStore, type Operation, type OperationResults } from "@langchain/langgraph-checkpoint";
import type { CompactOptionsFields, CompactResult, Embedder, Memory, SearchQueryFields, Summarizer } from "./index.js";

export interface EdgememChatMessageHistoryOptions {
  /** An open Memory (`await Memory.open(...)`). */
  memory: Memory;
  sessionId: string;
  /** Recorded on the session when it is created; `getMessages` reads as this user. */
  userId?: string;
  /** Recorded on the session when it is created. */
  namespace?: string;
  /** Counts appended turns with this model's tokenizer; with `contextWindowMax`, the window of automatic compaction. */
  model?: string;
  contextWindowMax?: number;
  /** The compaction summarizer (default: the offline extractive one). */
  summarizer?: Summarizer;
  timeoutMs?: number;
  /** With `model` or `contextWindowMax`, compact after each append (default true). */
  autoCompact?: boolean;
}

/**
 * A chat message history on an edgemem session. `getMessages` answers the
 * running summary first (a `SystemMessage` with
 * `additional_kwargs.edgemem.summary === true`, present after a
 * compaction), then the kept turns. Turns hold a role and text: AI tool
 * calls and non-text content blocks are not stored; a `ToolMessage`'s
 * `tool_call_id` is kept as its turn id.
 */
export declare class EdgememChatMessageHistory extends BaseListChatMessageHistory {
  lc_namespace: string[];
  static lc_name(): string;
  readonly sessionId: string;
  userId?: string;
  namespace?: string;
  model?: string;
  contextWindowMax?: number;
  /** The last automatic compaction's `hook_failed` error, else null (no turn is lost by one). */
  compactionError: Error | null;
  constructor(options: EdgememChatMessageHistoryOptions);
  getMessages(): Promise<BaseMessage[]>;
  addMessage(message: BaseMessage): Promise<void>;
  /** One append for the batch; creates the session on first use; skips the summary message. */
  addMessages(messages: BaseMessage[]): Promise<void>;
  /** Compacts now if past the threshold (`memory.compact` with this history's window). */
  compact(options?: CompactOptionsFields): Promise<CompactResult>;
  /** Deletes the session. */
  clear(): Promise<void>;
}

/**
 * LangChain `Embeddings` over an edgemem embedder function. Without one,
 * `embedDocuments`/`embedQuery` reject (`invalid_input`): the Memory's
 * offline embedder has no public embed call; the text methods need none.
 */
export declare class EdgememEmbeddings extends Embeddings {
  constructor(params?: EmbeddingsParams & { embedder?: Embedder });
  embedDocuments(texts: string[]): Promise<number[][]>;
  embedQuery(text: string): Promise<number[]>;
}

/** An edgemem embedder function from LangChain embeddings, for `Memory.open({ embedder })`. */
export declare function edgememEmbedder(embeddings: EmbeddingsInterface, options?: { name?: string }): Embedder & { edgememName?: string };

/** Search options a filter may carry besides the edgemem filter fields. */
export type EdgememSearchOptions = Pick<SearchQueryFields, "mode" | "hybridAlpha" | "fusion" | "recencyBoost" | "distanceThreshold">;

/** An edgemem search filter (`{user_id: {eq}}`, `{topics: {any: [...]}}`, ...), optionally with search options. */
export type EdgememFilter = Omit<SearchQueryFields, "text" | "limit" | "offset" | "ef" | "embedder">;

export interface EdgememVectorStoreOptions extends EdgememSearchOptions {
  /** Embeddings for the vector methods; default `EdgememEmbeddings` over `embedder`. */
  embeddings?: EmbeddingsInterface;
  /** The Memory's embedder function, for the default embeddings. */
  embedder?: Embedder;
  /** The filter every search starts from. */
  filter?: EdgememFilter;
  /** Skip a document whose content hash a live record has (default false: one record per document). */
  deduplicate?: boolean;
}

export interface EdgememAddOptions {
  ids?: string[];
  deduplicate?: boolean;
}

/**
 * A LangChain VectorStore on long-term memory. Metadata `id`, `topics`,
 * `entities`, `user_id`, `session_id`, `memory_type`, `event_date` and
 * `pinned` are record fields; other keys are kept in the record's metadata.
 * Scores are edgemem's (higher is better).
 */
export declare class EdgememVectorStore extends VectorStore {
  FilterType: EdgememFilter;
  filter?: EdgememFilter;
  static lc_name(): string;
  constructor(memory: Memory, options?: EdgememVectorStoreOptions);
  readonly memory: Memory;
  _vectorstoreType(): string;
  addDocuments(documents: DocumentInterface[], options?: EdgememAddOptions): Promise<string[]>;
  addVectors(vectors: number[][], documents: DocumentInterface[], options?: EdgememAddOptions): Promise<string[]>;
  similaritySearchVectorWithScore(query: number[], k: number, filter?: EdgememFilter): Promise<[Document, number][]>;
  similaritySearch(query: string, k?: number, filter?: EdgememFilter): Promise<Document[]>;
  similaritySearchWithScore(query: string, k?: number, filter?: EdgememFilter): Promise<[Document, number][]>;
  /** Deletes records by id (missing ids are ignored). */
  delete(params?: { ids: string[] }): Promise<void>;
  static fromTexts(texts: string[], metadatas: object[] | object, embeddings: EmbeddingsInterface | null | undefined, dbConfig: EdgememVectorStoreOptions & { memory: Memory }): Promise<EdgememVectorStore>;
  static fromDocuments(docs: DocumentInterface[], embeddings: EmbeddingsInterface | null | undefined, dbConfig: EdgememVectorStoreOptions & { memory: Memory }): Promise<EdgememVectorStore>;
}

export interface EdgememStoreOptions {
  /** Set on every item's record, and every search and listing is limited to it. */
  userId?: string;
  /** The records' memory type (default "semantic"). */
  memoryType?: "semantic" | "episodic" | "message";
  /** How `search(..., {query})` ranks (default "hybrid"). */
  mode?: "semantic" | "keyword" | "hybrid";
  hybridAlpha?: number;
  fusion?: "alpha" | "rrf";
  /** Value paths whose text is indexed (`"a.b"`, `"a[*]"`, `"$"`); default every string in the value. */
  index?: { fields?: string[] };
}

/**
 * LangGraph's BaseStore on long-term memory: one record per item (id `lg_`
 * + SHA-256 of `[namespace, key]`, topic `lg:<a>/<b>/`, the value as JSON
 * text in its metadata). A query search reaches the best 100 records;
 * listings page through at most 10,000, newest first.
 */
export declare class EdgememStore extends BaseStore {
  constructor(memory: Memory, options?: EdgememStoreOptions);
  /** The record id of an item: `lg_` + hex SHA-256 of `JSON.stringify([namespace, key])`. */
  static recordId(namespace: string[], key: string): Promise<string>;
  batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>>;
}
