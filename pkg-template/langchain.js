// LangChain.js and LangGraph.js adapters (`edgemem/langchain`): a chat
// message history on working memory, a VectorStore on long-term memory and
// a LangGraph BaseStore, each over an already-open `Memory`. Nothing here
// loads wasm; `@langchain/core` and `@langchain/langgraph-checkpoint` are
// optional peer dependencies. No top-level await, so `require()` works.
import { BaseListChatMessageHistory } from "@langchain/core/chat_history";
import { VectorStore } from "@langchain/core/vectorstores";
import { Embeddings } from "@langchain/core/embeddings";
import { Document } from "@langchain/core/documents";
import { AIMessage, ChatMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { BaseStore } from "@langchain/langgraph-checkpoint";
import { EdgememError, invalid } from "./util.js";

/** The deepest a long-term search reaches: `offset + limit` ≤ 100. */
const SEARCH_DEPTH_MAX = 100;
/** Records in one create call, ids in one delete call (the store's limits). */
const CREATE_BATCH_MAX = 500;
const DELETE_BATCH_MAX = 1000;
/** Records a filter-only listing pages through (newest first) before it stops. */
const LISTING_RECORDS_MAX = 10_000;
/** Keys in a LangGraph search `filter`. */
const FILTER_KEYS_MAX = 64;

function checkMemory(memory) {
  if (!memory || typeof memory !== "object" || typeof memory.getOrCreateSession !== "function" || !memory.longTerm) {
    throw invalid("memory", "must be an open edgemem Memory (await Memory.open(...))");
  }
  return memory;
}

function textOf(message) {
  if (typeof message.content === "string") return message.content;
  if (typeof message.text === "string") return message.text;
  return Array.isArray(message.content) ? message.content.map((b) => (typeof b === "string" ? b : b?.type === "text" ? b.text : "")).join("") : String(message.content ?? "");
}

function typeOf(message) {
  return message?.type ?? message?._getType?.();
}

const ROLE_OF = { human: "user", ai: "assistant", system: "system", tool: "tool", function: "function" };

/** A LangChain message as a working-memory turn `{role, content, id?}`. */
function toTurn(message, i) {
  const type = typeOf(message);
  const role = type === "generic" ? message.role : ROLE_OF[type];
  if (typeof role !== "string") throw invalid(`messages[${i}]`, `is not a LangChain message (type ${JSON.stringify(type)})`);
  // A tool result keeps its tool_call_id as the turn id (turns are AMS's
  // {role, content}: there is no other field to carry it).
  const id = type === "tool" && typeof message.tool_call_id === "string" && message.tool_call_id ? message.tool_call_id : message.id;
  const turn = { role, content: textOf(message) };
  if (typeof id === "string" && id !== "") turn.id = id;
  return turn;
}

/** A working-memory turn as a LangChain message. */
function fromTurn(t) {
  const fields = { content: t.content, id: t.id };
  switch (t.role) {
    case "user":
      return new HumanMessage(fields);
    case "assistant":
      return new AIMessage(fields);
    case "system":
      return new SystemMessage(fields);
    case "tool":
      return new ToolMessage({ ...fields, tool_call_id: t.id });
    default:
      return new ChatMessage({ ...fields, role: t.role });
  }
}

function isSummary(message) {
  return message?.additional_kwargs?.edgemem?.summary === true;
}

/**
 * A LangChain chat message history on an edgemem session (working memory).
 * `getMessages` answers the session's running summary first (a
 * `SystemMessage` with `additional_kwargs.edgemem.summary`), then the turns
 * compaction kept, so a compacted conversation reads as summary + recent
 * turns. With `model` or `contextWindowMax`, `addMessages` compacts past
 * the threshold after each append.
 */
export class EdgememChatMessageHistory extends BaseListChatMessageHistory {
  lc_namespace = ["langchain", "stores", "message", "edgemem"];

  static lc_name() {
    return "EdgememChatMessageHistory";
  }

  #memory;
  #ready = false;
  #compaction;

  /** The session's id. */
  sessionId;
  /** The error of the last automatic compaction that failed (`hook_failed`), else null; no turn is lost by one. */
  compactionError = null;

  constructor({ memory, sessionId, userId, namespace, model, contextWindowMax, summarizer, timeoutMs, autoCompact } = {}) {
    super({ sessionId, userId, namespace, model, contextWindowMax });
    this.#memory = checkMemory(memory);
    if (typeof sessionId !== "string") throw invalid("sessionId", "must be a string");
    this.sessionId = sessionId;
    this.userId = userId;
    this.namespace = namespace;
    this.model = model;
    this.contextWindowMax = contextWindowMax;
    const windowed = model !== undefined || contextWindowMax !== undefined;
    this.#compaction = { summarizer, timeoutMs, auto: windowed && autoCompact !== false };
  }

  async #ensure() {
    if (this.#ready) return;
    const init = {};
    if (this.userId !== undefined) init.user_id = this.userId;
    if (this.namespace !== undefined) init.namespace = this.namespace;
    await this.#memory.getOrCreateSession(this.sessionId, init);
    this.#ready = true;
  }

  /** The summary (if any) first, then the kept turns, oldest first. */
  async getMessages() {
    const session = await this.#memory.getSession(this.sessionId, this.userId === undefined ? {} : { userId: this.userId });
    if (session === null) return [];
    const out = [];
    if (typeof session.context === "string" && session.context !== "") {
      out.push(new SystemMessage({ content: session.context, additional_kwargs: { edgemem: { summary: true } } }));
    }
    for (const t of session.messages ?? []) out.push(fromTurn(t));
    return out;
  }

  async addMessage(message) {
    return this.addMessages([message]);
  }

  /**
   * Appends the messages as turns in one call, creating the session on
   * first use. The summary message `getMessages` returns is skipped, so
   * reading then re-adding a history does not store it as a turn.
   */
  async addMessages(messages) {
    if (!Array.isArray(messages)) throw invalid("messages", "must be an array of LangChain messages");
    const turns = messages.filter((m) => !isSummary(m)).map(toTurn);
    if (turns.length === 0) return;
    const options = this.model === undefined ? {} : { model: this.model };
    await this.#ensure();
    try {
      await this.#memory.appendMessages(this.sessionId, turns, options);
    } catch (err) {
      // Expired or deleted meanwhile: create it again, once.
      if (err?.code !== "not_found") throw err;
      this.#ready = false;
      await this.#ensure();
      await this.#memory.appendMessages(this.sessionId, turns, options);
    }
    if (this.#compaction.auto) {
      try {
        await this.compact();
        this.compactionError = null;
      } catch (err) {
        if (err?.code !== "hook_failed") throw err;
        this.compactionError = err;
      }
    }
  }

  /**
   * Compacts the session now if it passes the threshold (`memory.compact`):
   * the oldest turns fold into the summary, the newest stay verbatim.
   */
  async compact(options = {}) {
    const { summarizer, timeoutMs } = this.#compaction;
    return this.#memory.compact(this.sessionId, { model: this.model, contextWindowMax: this.contextWindowMax, summarizer, timeoutMs, ...options });
  }

  /** Deletes the session. */
  async clear() {
    await this.#memory.deleteSession(this.sessionId);
    this.#ready = false;
  }
}

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

function chunks(items, size) {
  const out = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

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

// ---- LangGraph BaseStore ----

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

async function sha256Hex(text) {
  const digest = await globalThis.crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  let out = "";
  for (const b of new Uint8Array(digest)) out += HEX[b];
  return out;
}

/** A namespace label inside a topic: `%`, `,`, `/` and control characters escaped (topics refuse commas and controls). */
function escapeLabel(label) {
  return label.replace(/[%,/\u0000-\u001f\u007f]/g, (c) => `%${HEX[c.charCodeAt(0)].toUpperCase()}`);
}

/** The topic of a namespace (and the prefix of its sub-namespaces): `lg:a/b/`. */
function namespaceTopic(labels) {
  return `lg:${labels.map(escapeLabel).join("/")}${labels.length > 0 ? "/" : ""}`;
}

function checkLabels(namespace, field) {
  if (!Array.isArray(namespace) || namespace.some((l) => typeof l !== "string")) throw invalid(field, "must be an array of strings");
  return namespace;
}

function sameNamespace(a, b) {
  return a.length === b.length && a.every((l, i) => l === b[i]);
}

function hasPrefix(ns, prefix) {
  return prefix.length <= ns.length && prefix.every((l, i) => l === ns[i]);
}

/** Strings at a LangGraph index path (`a.b`, `a[*]`, `a[0].b`, `$`). */
function textsAt(value, path) {
  if (path === "$") return stringLeaves(value);
  let current = [value];
  for (const part of path.split(".")) {
    const m = /^([^[\]]*)((?:\[(?:\*|\d+)\])*)$/.exec(part);
    if (!m) return [];
    const next = [];
    for (const c of current) {
      let vals = [m[1] === "" ? c : c?.[m[1]]];
      for (const [, ix] of m[2].matchAll(/\[(\*|\d+)\]/g)) {
        vals = vals.flatMap((v) => (Array.isArray(v) ? (ix === "*" ? v : [v[Number(ix)]]) : []));
      }
      next.push(...vals.filter((v) => v !== undefined && v !== null));
    }
    current = next;
  }
  return current.flatMap((v) => (typeof v === "string" ? [v] : typeof v === "number" || typeof v === "boolean" ? [String(v)] : stringLeaves(v)));
}

function stringLeaves(value, out = []) {
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) for (const v of value) stringLeaves(v, out);
  else if (value && typeof value === "object") for (const v of Object.values(value)) stringLeaves(v, out);
  return out;
}

/** Deterministic JSON (sorted keys), for equality of structured filter values. */
function canonical(v) {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (v && typeof v === "object") return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(",")}}`;
  return JSON.stringify(v) ?? "undefined";
}

const FILTER_OPS = ["$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin"];

function matchesFilterValue(actual, wanted) {
  const isOps = wanted && typeof wanted === "object" && !Array.isArray(wanted) && Object.keys(wanted).length > 0 && Object.keys(wanted).every((k) => FILTER_OPS.includes(k));
  if (!isOps) return canonical(actual) === canonical(wanted);
  return Object.entries(wanted).every(([op, w]) => {
    switch (op) {
      case "$eq":
        return canonical(actual) === canonical(w);
      case "$ne":
        return canonical(actual) !== canonical(w);
      case "$gt":
        return Number(actual) > Number(w);
      case "$gte":
        return Number(actual) >= Number(w);
      case "$lt":
        return Number(actual) < Number(w);
      case "$lte":
        return Number(actual) <= Number(w);
      case "$in":
        return Array.isArray(w) && w.some((x) => canonical(x) === canonical(actual));
      default:
        return !Array.isArray(w) || !w.some((x) => canonical(x) === canonical(actual));
    }
  });
}

function checkFilter(filter) {
  if (filter === undefined || filter === null) return null;
  if (typeof filter !== "object" || Array.isArray(filter)) throw invalid("filter", "must be an object of value keys");
  const entries = Object.entries(filter);
  if (entries.length > FILTER_KEYS_MAX) throw invalid("filter", `at most ${FILTER_KEYS_MAX} keys`);
  return entries;
}

function jsonText(value) {
  try {
    return JSON.stringify(value);
  } catch (err) {
    throw invalid("value", `must be JSON-serializable: ${err?.message ?? err}`);
  }
}

let lastStamp = 0;

/**
 * A creation time one millisecond past the last one this module gave, so
 * the items of one batch do not share a millisecond and a listing can page
 * through them by created_at.
 */
function nextStamp() {
  lastStamp = Math.max(Date.now(), lastStamp + 1);
  return new Date(lastStamp).toISOString();
}

const ITEM_FIELDS = ["id", "created_at", "updated_at", "metadata"];

/**
 * LangGraph's `BaseStore` on long-term memory: each item is a record with
 * id `lg_` + SHA-256 of `[namespace, key]`, its text taken from the value
 * (`index` paths, else every string in it) so `search(..., {query})` runs
 * the Memory's own (hybrid by default) search, its namespace as the topic
 * `lg:<a>/<b>/` and `{namespace, key, json}` in the record's metadata (the
 * value as JSON text, so it round-trips exactly; the 16 KiB metadata limit
 * bounds it).
 * `filter` is an equality post-filter on value keys (`$eq`, `$ne`, `$gt`,
 * `$gte`, `$lt`, `$lte`, `$in`, `$nin`). A query search reaches the best
 * 100 records (`offset + limit` ≤ 100); listings page through at most
 * 10,000 records, newest first.
 */
export class EdgememStore extends BaseStore {
  #memory;
  #options;

  constructor(memory, { userId, memoryType = "semantic", mode = "hybrid", hybridAlpha, fusion, index } = {}) {
    super();
    this.#memory = checkMemory(memory);
    if (index !== undefined && (index === null || typeof index !== "object" || (index.fields !== undefined && !Array.isArray(index.fields)))) throw invalid("index", "must be {fields?: string[]}");
    this.#options = { userId, memoryType, mode, hybridAlpha, fusion, fields: index?.fields };
  }

  /** The record id of an item. */
  static async recordId(namespace, key) {
    return `lg_${await sha256Hex(JSON.stringify([checkLabels(namespace, "namespace"), String(key)]))}`;
  }

  async batch(operations) {
    if (!Array.isArray(operations)) throw invalid("operations", "must be an array");
    const results = new Array(operations.length).fill(undefined);
    let puts = [];
    const flush = async () => {
      if (puts.length > 0) await this.#put(puts);
      puts = [];
    };
    for (const [i, op] of operations.entries()) {
      if (op && "value" in op && "namespace" in op) {
        puts.push(op);
        results[i] = undefined;
        continue;
      }
      // Reads see every write before them in the batch.
      await flush();
      if (op && "namespacePrefix" in op) results[i] = await this.#search(op);
      else if (op && "namespace" in op && "key" in op) results[i] = await this.#get(op);
      else if (op && ("matchConditions" in op || "maxDepth" in op || "limit" in op)) results[i] = await this.#listNamespaces(op);
      else throw invalid(`operations[${i}]`, "is not a Get, Search, Put or ListNamespaces operation");
    }
    await flush();
    return results;
  }

  #item(record, score) {
    const lg = record?.metadata?.langgraph;
    if (!lg || !Array.isArray(lg.namespace) || typeof lg.key !== "string") return null;
    let value;
    try {
      value = JSON.parse(lg.json);
    } catch {
      return null;
    }
    const item = { value, key: lg.key, namespace: lg.namespace, createdAt: new Date(record.created_at), updatedAt: new Date(record.updated_at) };
    if (score !== undefined) item.score = score;
    return item;
  }

  async #get({ namespace, key }) {
    checkLabels(namespace, "namespace");
    const record = await this.#memory.longTerm.get(await EdgememStore.recordId(namespace, key));
    const item = this.#item(record);
    return item && sameNamespace(item.namespace, namespace) && item.key === key ? item : null;
  }

  #text(value, key, index) {
    if (index === false) return key;
    const paths = Array.isArray(index) ? index : this.#options.fields;
    const texts = paths ? paths.flatMap((p) => textsAt(value, p)) : stringLeaves(value);
    const text = texts.filter((t) => t.trim() !== "").join("\n");
    return text !== "" ? text : key;
  }

  async #put(ops) {
    // The last write to an item in the batch wins.
    const byId = new Map();
    for (const op of ops) {
      checkLabels(op.namespace, "namespace");
      if (typeof op.key !== "string") throw invalid("key", "must be a string");
      if (op.value !== null && (typeof op.value !== "object" || Array.isArray(op.value))) throw invalid("value", "must be an object or null");
      const id = await EdgememStore.recordId(op.namespace, op.key);
      byId.delete(id);
      // Serialized first: a value that is no JSON is refused before anything is written.
      byId.set(id, op.value === null ? op : { ...op, json: jsonText(op.value) });
    }
    const deletes = [];
    const writes = [];
    for (const [id, op] of byId) (op.value === null ? deletes : writes).push([id, op]);
    for (const batch of chunks(deletes.map(([id]) => id), DELETE_BATCH_MAX)) await this.#memory.longTerm.delete(batch);
    if (writes.length === 0) return;
    // An update keeps the item's createdAt.
    const existing = await Promise.all(writes.map(([id]) => this.#memory.longTerm.get(id)));
    const records = writes.map(([id, op], i) => {
      const r = {
        id,
        text: this.#text(JSON.parse(op.json), op.key, op.index),
        memory_type: this.#options.memoryType,
        topics: [namespaceTopic(op.namespace)],
        // JSON text, so the value comes back exactly (key order too).
        metadata: { langgraph: { namespace: op.namespace, key: op.key, json: op.json } },
      };
      if (this.#options.userId !== undefined) r.user_id = this.#options.userId;
      r.created_at = existing[i]?.metadata?.langgraph ? existing[i].created_at : nextStamp();
      return r;
    });
    for (const batch of chunks(records, CREATE_BATCH_MAX)) await this.#memory.longTerm.create(batch, { deduplicate: false });
  }

  #scope(prefix) {
    const q = { topics: { startswith: namespaceTopic(prefix) } };
    if (this.#options.userId !== undefined) q.user_id = { eq: this.#options.userId };
    return q;
  }

  /**
   * Visits records of `scope` newest first, one page of 100 at a time
   * (keyset on created_at, which `#put` keeps distinct; ids already seen
   * are skipped), until `visit` returns true or LISTING_RECORDS_MAX records
   * were seen.
   */
  async #browse(scope, visit) {
    const seen = new Set();
    let bound;
    while (seen.size < LISTING_RECORDS_MAX) {
      const q = { ...scope, limit: SEARCH_DEPTH_MAX, fields: ITEM_FIELDS };
      if (bound !== undefined) q.created_at = bound;
      const page = (await this.#memory.longTerm.search(q)).memories;
      let fresh = 0;
      for (const r of page) {
        if (seen.has(r.id)) continue;
        seen.add(r.id);
        fresh++;
        if (visit(r)) return;
      }
      if (page.length < SEARCH_DEPTH_MAX) return;
      // More than a page at one millisecond (only writers other than this
      // store make such ties): the rest of that millisecond is skipped.
      const last = page[page.length - 1].created_at;
      bound = fresh === 0 ? { lt: last } : { lte: last };
    }
  }

  async #search({ namespacePrefix, filter, limit = 10, offset = 0, query }) {
    checkLabels(namespacePrefix, "namespacePrefix");
    const entries = checkFilter(filter);
    if (!Number.isInteger(limit) || limit < 0 || limit > SEARCH_DEPTH_MAX) throw invalid("limit", `must be an integer from 0 to ${SEARCH_DEPTH_MAX}`);
    if (!Number.isInteger(offset) || offset < 0) throw invalid("offset", "must be a non-negative integer");
    if (limit === 0) return [];
    const keep = (item) => item && hasPrefix(item.namespace, namespacePrefix) && (!entries || entries.every(([k, v]) => matchesFilterValue(item.value?.[k], v)));
    if (query !== undefined && query !== null && query !== "") {
      if (typeof query !== "string") throw invalid("query", "must be a string");
      if (offset + limit > SEARCH_DEPTH_MAX) throw invalid("offset", `offset + limit must be at most ${SEARCH_DEPTH_MAX} for a query search`);
      const { mode, hybridAlpha, fusion } = this.#options;
      const q = { ...this.#scope(namespacePrefix), text: query, mode, limit: entries ? SEARCH_DEPTH_MAX : offset + limit, fields: [...ITEM_FIELDS, "score"] };
      if (hybridAlpha !== undefined) q.hybridAlpha = hybridAlpha;
      if (fusion !== undefined) q.fusion = fusion;
      const hits = (await this.#memory.longTerm.search(q)).memories;
      return hits.map((h) => this.#item(h, h.score)).filter(keep).slice(offset, offset + limit);
    }
    const out = [];
    await this.#browse(this.#scope(namespacePrefix), (r) => {
      const item = this.#item(r);
      if (keep(item)) out.push(item);
      return out.length >= offset + limit;
    });
    return out.slice(offset, offset + limit);
  }

  async #listNamespaces({ matchConditions = [], maxDepth, limit = 100, offset = 0 }) {
    if (!Number.isInteger(limit) || limit < 0) throw invalid("limit", "must be a non-negative integer");
    if (!Number.isInteger(offset) || offset < 0) throw invalid("offset", "must be a non-negative integer");
    if (maxDepth !== undefined && (!Number.isInteger(maxDepth) || maxDepth < 1)) throw invalid("maxDepth", "must be a positive integer");
    const prefixCond = matchConditions.find((c) => c.matchType === "prefix");
    const fixed = [];
    for (const l of prefixCond ? checkLabels(prefixCond.path, "prefix") : []) {
      if (l === "*") break;
      fixed.push(l);
    }
    const matches = (ns, { matchType, path }) => {
      if (path.length > ns.length) return false;
      const at = matchType === "suffix" ? ns.length - path.length : 0;
      return path.every((p, i) => p === "*" || p === ns[at + i]);
    };
    const found = new Map();
    await this.#browse(this.#scope(fixed), (r) => {
      const item = this.#item(r);
      if (!item || !matchConditions.every((c) => matches(item.namespace, c))) return false;
      const ns = maxDepth === undefined ? item.namespace : item.namespace.slice(0, maxDepth);
      found.set(JSON.stringify(ns), ns);
      return false;
    });
    const sorted = [...found.values()].sort((a, b) => (a.join("\u0000") < b.join("\u0000") ? -1 : a.join("\u0000") > b.join("\u0000") ? 1 : 0));
    return sorted.slice(offset, offset + limit);
  }
}
