// The ledger: exact amounts as decimal strings through the JSON routes, and
// a typed-array batch entry point (`createTransferBatch`) whose columns cross
// into wasm as bytes. Argument checks only; every rule lives in Rust.
import { LIMITS, TRANSFER_RESULT_CODES } from "./limits.js";
import { EdgememError, checkCount, invalid } from "./util.js";

function checkLedgerId(id, field) {
  if (typeof id !== "string" || id.length === 0 || id.includes("/")) throw invalid(field, "must be a non-empty string without '/'");
  return id;
}

function checkAmount(amount, field) {
  if (typeof amount !== "string") throw invalid(field, "must be a decimal string such as \"12.50\", never a number");
  return amount;
}

/**
 * Exact double-entry ledgers: amounts are decimal strings at the asset's
 * scale, transfers are idempotent by id (TigerBeetle semantics).
 */
export class Ledger {
  #call;
  #columns;

  constructor(call, columns) {
    this.#call = call;
    this.#columns = columns;
  }

  /** Registers an asset with a fixed number of decimals (USDC: 6). */
  async createAsset(code, scale) {
    return this.#call("POST", "assets", "", { code, scale });
  }

  /** Opens an account: `{id, asset, flags?: ["debits_must_not_exceed_credits"], max_transfer?: "50"}`. */
  async createAccount(account) {
    if (account?.max_transfer !== undefined) checkAmount(account.max_transfer, "max_transfer");
    return this.#call("POST", "accounts", "", account);
  }

  /** The account with its balances as decimal strings, or null. */
  async account(id) {
    return this.#nullIfMissing(() => this.#call("GET", `accounts/${checkLedgerId(id, "id")}`, ""));
  }

  /** The transfer, or null. */
  async transfer(id) {
    return this.#nullIfMissing(() => this.#call("GET", `transfers/${checkLedgerId(id, "id")}`, ""));
  }

  /** Applies a batch; resolves to one `{id, result}` per transfer ("created", "exists", or a rejection code). */
  async createTransfers(transfers) {
    if (!Array.isArray(transfers)) throw invalid("transfers", "must be an array");
    transfers.forEach((t, i) => checkAmount(t?.amount, `transfers[${i}].amount`));
    return (await this.#call("POST", "transfers", "", { transfers })).results;
  }

  /** The interned index of each account id, for `createTransferBatch` (`not_found` for an unknown id). */
  async accountIndices(ids) {
    if (!Array.isArray(ids)) throw invalid("ids", "must be an array of account ids");
    ids.forEach((id, i) => checkLedgerId(id, `ids[${i}]`));
    return Uint32Array.from((await this.#call("POST", "accounts/indices", "", { ids })).indices);
  }

  /**
   * Applies a batch given as typed arrays, with no JSON on the way: `ids`
   * (128-bit: a `BigUint64Array` of [low, high] word pairs, or one bigint
   * each), `debit` and `credit` account indices (`accountIndices`), and
   * `amounts` as minor units (`BigInt64Array` or bigints: 12.50 USDC is
   * 12500000n) or decimal strings. Optional `flags` (bit 0 pending, bit 1
   * linked) and `timeoutSeconds` (0: none). Resolves to `results`, one index
   * into `TRANSFER_RESULT_CODES` per transfer, and `errors`: the transfers
   * that failed, by position. A bad batch rejects with a typed error and
   * nothing applied. A transfer's id string is its decimal digits.
   */
  async createTransferBatch({ ids, debit, credit, amounts, flags, timeoutSeconds } = {}) {
    const units = amountUnits(amounts);
    const decimals = units === undefined ? decimalAmounts(amounts) : undefined;
    const results = await this.#columns(
      idBytes(ids),
      bytesOf(u32s(debit, "debit")),
      bytesOf(u32s(credit, "credit")),
      units === undefined ? new Uint8Array(0) : bytesOf(units),
      decimals,
      flags === undefined ? new Uint8Array(0) : u8s(flags, "flags"),
      timeoutSeconds === undefined ? new Uint8Array(0) : bytesOf(u32s(timeoutSeconds, "timeoutSeconds")),
    );
    const errors = [];
    for (let i = 0; i < results.length; i++) {
      if (results[i] > 1) errors.push({ index: i, code: TRANSFER_RESULT_CODES[results[i]] });
    }
    return { results, errors };
  }

  /** Posts a pending transfer, in full or for a smaller `amount`. */
  async post(id, { amount } = {}) {
    if (amount !== undefined) checkAmount(amount, "amount");
    return this.#call("POST", `transfers/${checkLedgerId(id, "id")}/post`, "", amount === undefined ? {} : { amount });
  }

  /** Voids a pending transfer. */
  async void(id) {
    return this.#call("POST", `transfers/${checkLedgerId(id, "id")}/void`, "", {});
  }

  /** `{entries, next_cursor}`: an account's journal entries, oldest first, optionally in `[since, until)` (RFC 3339). */
  async history(accountId, { limit = 100, cursor = 0, since, until } = {}) {
    checkCount(limit, "limit", 1, LIMITS.ACCOUNT_HISTORY_LIMIT_MAX);
    checkCount(cursor, "cursor", 0, 2 ** 32 - 1);
    const query = new URLSearchParams({ limit: String(limit), cursor: String(cursor) });
    for (const [name, value] of [["since", since], ["until", until]]) {
      if (value === undefined) continue;
      if (typeof value !== "string") throw invalid(name, "must be an RFC 3339 string");
      query.set(name, value);
    }
    return this.#call("GET", `accounts/${checkLedgerId(accountId, "accountId")}/history`, query.toString());
  }

  /** Recomputes every balance from the transfers and compares an optional statement `[{account, balance}]`. */
  async reconcile({ statement = [] } = {}) {
    statement.forEach((l, i) => checkAmount(l?.balance, `statement[${i}].balance`));
    return this.#call("POST", "reconcile", "", { statement });
  }

  /**
   * Runs `fn(params)` at most once for this `op` and `params`. The intent is
   * durable before `fn` runs and its outcome after. A repeat call returns the
   * stored outcome without running `fn`. If an earlier call never finished
   * (the process died mid-call), this throws `intent_open`: verify with the
   * outside service, then `completeIntent(key, outcome)`.
   */
  async executeOnce(op, params, fn) {
    if (typeof fn !== "function") throw invalid("fn", "must be a function");
    const begun = await this.#call("POST", "intents", "", { op, params: params ?? null });
    if (begun.status === "done") return begun.outcome;
    if (begun.status === "open") {
      throw new EdgememError("intent_open", `intent ${begun.key} (${op}) began at ${begun.begun_at} and has no outcome: verify it, then completeIntent()`);
    }
    const outcome = (await fn(params)) ?? null;
    await this.completeIntent(begun.key, outcome);
    return outcome;
  }

  /** Records the outcome of an intent (after verifying an open one). */
  async completeIntent(key, outcome) {
    return this.#call("POST", `intents/${checkLedgerId(key, "key")}/complete`, "", { outcome: outcome ?? null });
  }

  /** Intents begun and never completed: after a crash, verify each. */
  async openIntents() {
    return (await this.#call("GET", "intents", "")).open;
  }

  async #nullIfMissing(f) {
    try {
      return await f();
    } catch (err) {
      if (err instanceof EdgememError && err.code === "not_found") return null;
      throw err;
    }
  }
}

const U128_MAX = (1n << 128n) - 1n;

/** The bytes of a typed array, without a copy (wasm copies them once). */
function bytesOf(a) {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

function idBytes(ids) {
  if (ids instanceof BigUint64Array) return bytesOf(ids);
  if (!Array.isArray(ids)) throw invalid("ids", "must be a BigUint64Array of [low, high] word pairs or an array of bigints");
  const words = new BigUint64Array(ids.length * 2);
  ids.forEach((id, i) => {
    if (typeof id !== "bigint" || id < 0n || id > U128_MAX) throw invalid(`ids[${i}]`, "must be a bigint from 1 to 2^128 - 1");
    words[2 * i] = BigInt.asUintN(64, id);
    words[2 * i + 1] = id >> 64n;
  });
  return bytesOf(words);
}

function u32s(v, field) {
  if (v instanceof Uint32Array) return v;
  if (!Array.isArray(v)) throw invalid(field, "must be a Uint32Array or an array of integers");
  v.forEach((x, i) => {
    if (!Number.isInteger(x) || x < 0 || x > 0xffffffff) throw invalid(`${field}[${i}]`, `must be an integer from 0 to 2^32 - 1, not ${String(x)}`);
  });
  return Uint32Array.from(v);
}

function u8s(v, field) {
  if (v instanceof Uint8Array) return v;
  if (!Array.isArray(v)) throw invalid(field, "must be a Uint8Array or an array of integers");
  v.forEach((x, i) => {
    if (!Number.isInteger(x) || x < 0 || x > 255) throw invalid(`${field}[${i}]`, `must be an integer from 0 to 255, not ${String(x)}`);
  });
  return Uint8Array.from(v);
}

/** Minor units as an Int64 column, or undefined when the amounts are decimal strings. */
function amountUnits(amounts) {
  if (amounts instanceof BigInt64Array) return amounts;
  if (!Array.isArray(amounts)) throw invalid("amounts", "must be a BigInt64Array, an array of bigints (minor units) or an array of decimal strings");
  if (amounts.length > 0 && typeof amounts[0] === "string") return undefined;
  const out = new BigInt64Array(amounts.length);
  amounts.forEach((x, i) => {
    if (typeof x !== "bigint") throw invalid(`amounts[${i}]`, `must be a bigint of minor units (or every amount a decimal string), never a number: ${String(x)}`);
    if (x < -(1n << 63n) || x >= 1n << 63n) throw invalid(`amounts[${i}]`, "is past a 64-bit integer");
    out[i] = x;
  });
  return out;
}

function decimalAmounts(amounts) {
  amounts.forEach((x, i) => {
    if (typeof x !== "string") throw invalid(`amounts[${i}]`, "must be a decimal string like every other amount of the batch");
    if (x.includes(",")) throw invalid(`amounts[${i}]`, `${JSON.stringify(x)} is not a plain decimal string`);
  });
  return amounts.join(",");
}
