// `EdgememStore`: a LangGraph BaseStore on long-term memory.
import { BaseStore } from "@langchain/langgraph-checkpoint";
import { EdgememError, invalid } from "./util.js";
import { SEARCH_DEPTH_MAX, CREATE_BATCH_MAX, DELETE_BATCH_MAX, LISTING_RECORDS_MAX, FILTER_KEYS_MAX, checkMemory, chunks } from "./langchain_common.js";


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
