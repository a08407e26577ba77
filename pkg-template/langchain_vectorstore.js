// `EdgememVectorStore` and `EdgememEmbeddings`: long-term memory as a
// LangChain VectorStore (and its retriever).
import { VectorStore } from "@langchain/core/vectorstores";
import { Embeddings } from "@langchain/core/embeddings";
import { Document } from "@langchain/core/documents";
import { EdgememError, invalid } from "./util.js";
import { SEARCH_DEPTH_MAX, CREATE_BATCH_MAX, DELETE_BATCH_MAX, LISTING_RECORDS_MAX, FILTER_KEYS_MAX, checkMemory, chunks } from "./langchain_common.js";

/**
 * LangChain `Embeddings` over an edgemem embedder function
 * (`async (texts) => Float32Array[]`): give it the same function the Memory
 * was opened with, so the vectors you pass to `addVectors` and
 * `similaritySearchVectorWithScore` come from the namespace's one embedder.
 * Without one it refuses: the Memory's offline embedder has no public
 * embed call, and the text methods need none (the Memory embeds the text).
 */
export class EdgememEmbeddings extends Embeddings {
  #embedder;

  constructor({ embedder, ...params } = {}) {
    super(params);
    if (embedder !== undefined && typeof embedder !== "function") throw invalid("embedder", "must be a function (texts) => Promise<Float32Array[]>");
    this.#embedder = embedder;
  }

  async embedDocuments(texts) {
    if (!this.#embedder) {
      throw new EdgememError(
        "invalid_input",
        "invalid embeddings: this Memory embeds text itself (its offline embedder has no public embed call); use the text methods, or pass the Memory's `embedder` function (or the LangChain embeddings it was built from) to EdgememVectorStore",
      );
    }
    const vectors = await this.#embedder(texts);
    return vectors.map((v) => Array.from(v));
  }

  async embedQuery(text) {
    return (await this.embedDocuments([text]))[0];
  }
}

/**
 * An edgemem embedder function from LangChain embeddings, for
 * `Memory.open({ embedder: edgememEmbedder(embeddings, { name }) })`: the
 * Memory then embeds with the same model as the VectorStore's `embeddings`.
 */
export function edgememEmbedder(embeddings, { name } = {}) {
  if (!embeddings || typeof embeddings.embedDocuments !== "function") throw invalid("embeddings", "must be LangChain Embeddings");
  const fn = async (texts) => (await embeddings.embedDocuments(texts)).map((v) => Float32Array.from(v));
  if (name !== undefined) fn.edgememName = name;
  return fn;
}

/** Metadata keys that are record fields; every other key goes to the record's `metadata`. */
const RECORD_KEYS = ["id", "topics", "entities", "user_id", "session_id", "memory_type", "event_date", "pinned"];
/** Keys a VectorStore filter may not set (the store sets them). */
const RESERVED_QUERY_KEYS = ["text", "vector", "limit", "offset", "fields", "embedder"];

/** A Document (or `{pageContent, metadata, id}`) as a long-term record. */
function toRecord(doc, id, i) {
  if (!doc || typeof doc.pageContent !== "string") throw invalid(`documents[${i}]`, "must be a Document with a string pageContent");
  const record = { text: doc.pageContent };
  const rest = {};
  for (const [k, v] of Object.entries(doc.metadata ?? {})) {
    if (RECORD_KEYS.includes(k)) {
      if (v !== undefined && v !== null) record[k] = v;
    } else if (v !== undefined) {
      rest[k] = v;
    }
  }
  const given = id ?? doc.id;
  if (given !== undefined && given !== null && given !== "") record.id = given;
  if (Object.keys(rest).length > 0) record.metadata = rest;
  return record;
}

/** A long-term record (or search hit) as a Document: its record fields back in `metadata`. */
function toDocument(r) {
  const metadata = { ...(r.metadata ?? {}) };
  for (const k of RECORD_KEYS) {
    const v = r[k];
    if (v === undefined || v === null || (Array.isArray(v) && v.length === 0) || (k === "pinned" && v === false)) continue;
    metadata[k] = v;
  }
  return new Document({ pageContent: r.text, metadata, id: r.id });
}

/**
 * A LangChain VectorStore on long-term memory. The text methods
 * (`similaritySearch`, `similaritySearchWithScore`, the retriever) send the
 * text, so the Memory embeds it with its own embedder and `mode: "keyword"`
 * and `"hybrid"` work; the score is edgemem's (higher is better). The filter
 * is an edgemem search filter (`{user_id: {eq}}`, `{topics: {any: [...]}}`,
 * `{created_at: {gte}}`, ...) and may also carry search options (`mode`,
 * `hybridAlpha`, `fusion`, `recencyBoost`, `distanceThreshold`).
 */
export class EdgememVectorStore extends VectorStore {
  // Called by VectorStore's field initializer before this class's fields exist.
  _vectorstoreType() {
    return "edgemem";
  }

  static lc_name() {
    return "EdgememVectorStore";
  }

  #memory;
  #defaults;
  #deduplicate;

  /** The filter (and search options) every search starts from. */
  filter;

  constructor(memory, { embeddings, embedder, filter, mode, hybridAlpha, fusion, recencyBoost, distanceThreshold, deduplicate = false } = {}) {
    checkMemory(memory);
    super(embeddings ?? new EdgememEmbeddings({ embedder }), {});
    this.#memory = memory;
    this.filter = filter;
    this.#defaults = Object.fromEntries(Object.entries({ mode, hybridAlpha, fusion, recencyBoost, distanceThreshold }).filter(([, v]) => v !== undefined));
    this.#deduplicate = deduplicate === true;
  }

  /** The Memory this store writes to. */
  get memory() {
    return this.#memory;
  }

  #query(k, filter) {
    if (filter !== undefined && filter !== null && (typeof filter !== "object" || Array.isArray(filter))) throw invalid("filter", "must be an edgemem search filter object");
    const q = { ...this.#defaults, ...(this.filter ?? {}), ...(filter ?? {}) };
    for (const key of RESERVED_QUERY_KEYS) delete q[key];
    q.limit = k;
    return q;
  }

  async #create(records, vectors, deduplicate) {
    const ids = [];
    for (const [n, batch] of chunks(records, CREATE_BATCH_MAX).entries()) {
      const options = { deduplicate: deduplicate ?? this.#deduplicate };
      if (vectors) options.vectors = vectors.slice(n * CREATE_BATCH_MAX, n * CREATE_BATCH_MAX + batch.length);
      const r = await this.#memory.longTerm.create(batch, options);
      ids.push(...r.created);
    }
    return ids;
  }

  /**
   * Stores each document as a long-term record (the Memory embeds the
   * text). Metadata `topics`, `entities`, `user_id`, `session_id`,
   * `memory_type`, `event_date`, `pinned` and `id` become record fields;
   * the rest is the record's `metadata`. Resolves to the created ids.
   */
  async addDocuments(documents, options = {}) {
    if (!Array.isArray(documents)) throw invalid("documents", "must be an array");
    const records = documents.map((d, i) => toRecord(d, options.ids?.[i], i));
    return this.#create(records, undefined, options.deduplicate);
  }

  /** As `addDocuments`, with your vectors (they must come from the Memory's embedder: only their dimension is checked). */
  async addVectors(vectors, documents, options = {}) {
    if (!Array.isArray(vectors) || !Array.isArray(documents) || vectors.length !== documents.length) throw invalid("vectors", "must be an array with one vector per document");
    const records = documents.map((d, i) => toRecord(d, options.ids?.[i], i));
    return this.#create(records, vectors.map((v) => (v instanceof Float32Array ? v : Float32Array.from(v))), options.deduplicate);
  }

  /** Semantic search by your query vector. */
  async similaritySearchVectorWithScore(query, k, filter) {
    if (!Array.isArray(query) && !(query instanceof Float32Array)) throw invalid("query", "must be a vector (number[])");
    const q = { ...this.#query(k, filter), vector: query instanceof Float32Array ? query : Float32Array.from(query), mode: "semantic" };
    const r = await this.#memory.longTerm.search(q);
    return r.memories.map((h) => [toDocument(h), h.score]);
  }

  /** Search by text: semantic, keyword or hybrid (`mode`) as the Memory searches. */
  async similaritySearchWithScore(query, k = 4, filter = undefined) {
    if (typeof query !== "string") throw invalid("query", "must be a string");
    const r = await this.#memory.longTerm.search({ ...this.#query(k, filter), text: query });
    return r.memories.map((h) => [toDocument(h), h.score]);
  }

  async similaritySearch(query, k = 4, filter = undefined) {
    return (await this.similaritySearchWithScore(query, k, filter)).map(([doc]) => doc);
  }

  /** Deletes records by id (missing ids are ignored). */
  async delete({ ids } = {}) {
    if (!Array.isArray(ids)) throw invalid("ids", "must be an array of record ids");
    for (const batch of chunks(ids, DELETE_BATCH_MAX)) if (batch.length > 0) await this.#memory.longTerm.delete(batch);
  }

  /** `dbConfig` is `{memory, ...options}`; `metadatas` is one object for all, or one per text. */
  static async fromTexts(texts, metadatas, embeddings, dbConfig = {}) {
    const docs = texts.map((pageContent, i) => new Document({ pageContent, metadata: Array.isArray(metadatas) ? metadatas[i] ?? {} : metadatas ?? {} }));
    return EdgememVectorStore.fromDocuments(docs, embeddings, dbConfig);
  }

  static async fromDocuments(docs, embeddings, dbConfig = {}) {
    const { memory, ...options } = dbConfig ?? {};
    const store = new EdgememVectorStore(memory, { ...options, embeddings: embeddings ?? options.embeddings });
    await store.addDocuments(docs);
    return store;
  }
}
