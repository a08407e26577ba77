// Shared by the LangChain.js adapters: their bounds and argument checks.
import { LIMITS } from "./limits.js";
import { invalid } from "./util.js";

/** The deepest a long-term search reaches: `offset + limit` ≤ 100. */
export const SEARCH_DEPTH_MAX = 100;
/** Records in one create call, ids in one delete call (the store's limits). */
export const CREATE_BATCH_MAX = LIMITS.LTM_CREATE_BATCH_MAX;
export const DELETE_BATCH_MAX = LIMITS.LTM_DELETE_BATCH_MAX;
/** Records a filter-only listing pages through (newest first) before it stops. */
export const LISTING_RECORDS_MAX = 10_000;
/** Keys in a LangGraph search `filter`. */
export const FILTER_KEYS_MAX = 64;

/** The adapters take an open `Memory`, never a promise of one. */
export function checkMemory(memory) {
  if (!memory || typeof memory !== "object" || typeof memory.getOrCreateSession !== "function" || !memory.longTerm) {
    throw invalid("memory", "must be an open edgemem Memory (await Memory.open(...))");
  }
  return memory;
}

/** `items` in runs of at most `size`. */
export function chunks(items, size) {
  const out = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
