// The change feed in the package: one event per committed write, pushed by
// the wasm store after its log record is durable, delivered to subscribers
// in seq order. A subscriber that names `since` is first served the kept
// events after it (the same `GET /v1/events` the Worker answers), then live
// ones, with no gap and no event twice.
import { feedKinds } from "./edgemem_wasm.js";
import { EdgememError } from "./util.js";

let KINDS;
function kinds() {
  KINDS ??= new Set(JSON.parse(feedKinds()));
  return KINDS;
}

function badQuery(param, reason) {
  return new EdgememError("invalid_query", `invalid query parameter ${param}: ${reason}`);
}

function list(value, param) {
  if (value === undefined || value === null) return [];
  const items = typeof value === "string" ? value.split(",") : value;
  if (!Array.isArray(items) || items.some((k) => typeof k !== "string")) throw badQuery(param, "must be a string or an array of strings");
  return items.map((k) => k.trim()).filter((k) => k !== "");
}

/** Checks and normalizes `{kinds, keys, since}` (the Rust side checks the same for the page). */
function interest(options) {
  if (options === null || typeof options !== "object") throw badQuery("options", "must be an object");
  const k = list(options.kinds, "kinds");
  for (const kind of k) {
    const area = kind.endsWith(".*") ? kind.slice(0, -2) : null;
    const known = area === null ? kinds().has(kind) : [...kinds()].some((x) => x.split(".")[0] === area);
    if (!known) throw badQuery("kinds", `unknown event kind ${JSON.stringify(kind)}`);
  }
  const keys = list(options.keys, "keys");
  const since = options.since;
  if (since !== undefined && !(Number.isSafeInteger(since) && since >= 0)) throw badQuery("since", "must be a non-negative integer");
  return { kinds: k, keys, since };
}

function admits(i, e) {
  const kindOk = i.kinds.length === 0 || i.kinds.some((k) => (k.endsWith(".*") ? e.kind.split(".")[0] === k.slice(0, -2) : k === e.kind));
  const keyOk = i.keys.length === 0 || i.keys.some((k) => k === e.key || (e.ids ?? []).includes(k));
  return kindOk && keyOk;
}

/** The feed of one `Memory`: subscribers, and the queue the store's listener fills. */
export class Feed {
  #core;
  #api;
  #subs = new Set();
  #queue = [];
  #flushing = false;

  #channel = null;

  /**
   * `channelName`: a BroadcastChannel shared by every memory on the same
   * storage (tabs on one IndexedDB database). Each local write is posted
   * there; a post from another tab makes this memory catch up with storage
   * and hands the writes it picked up to its subscribers.
   */
  constructor(core, api, channelName) {
    this.#core = core;
    this.#api = api;
    if (channelName && typeof BroadcastChannel === "function") {
      this.#channel = new BroadcastChannel(channelName);
      // In Node an open channel would keep the process alive after the work is done.
      this.#channel.unref?.();
      this.#channel.onmessage = () => this.#catchUp();
      this.#core.setFeedListener((text) => this.#local(text));
    }
  }

  #local(text) {
    this.#channel?.postMessage(text);
    if (this.#subs.size > 0) this.#push(JSON.parse(text));
  }

  async #catchUp() {
    try {
      for (const e of JSON.parse(await this.#core.catchUp())) this.#push(e);
    } catch (err) {
      for (const sub of this.#subs) this.#deliver(sub, { seq: sub.delivered, kind: "error", key: "", code: err.code ?? "internal", detail: String(err.message ?? err) });
    }
  }

  /** Stops listening to other tabs. */
  close() {
    this.#channel?.close();
    this.#channel = null;
  }

  /**
   * Calls `handler(event)` for each change that `options` admits. Returns a
   * function that unsubscribes. With `since`, kept events after it come
   * first; a `since` older than what is kept yields one
   * `{kind: "resync_required", last_seq}` event, then live events.
   */
  subscribe(options, handler) {
    if (typeof handler !== "function") throw new TypeError("subscribe(options, handler): handler must be a function");
    const i = interest(options ?? {});
    const sub = { i, handler, delivered: -1, ready: i.since === undefined, pending: [] };
    this.#subs.add(sub);
    if (this.#subs.size === 1 && !this.#channel) this.#core.setFeedListener((text) => this.#push(JSON.parse(text)));
    if (!sub.ready) this.#replay(sub);
    return () => this.#remove(sub);
  }

  /** The same as `subscribe`, as an async iterator; `break` unsubscribes. */
  events(options = {}) {
    const buffered = [];
    let wake = null;
    const unsubscribe = this.subscribe(options, (e) => {
      buffered.push(e);
      wake?.();
    });
    return {
      [Symbol.asyncIterator]() {
        return this;
      },
      async next() {
        while (buffered.length === 0) {
          await new Promise((resolve) => (wake = resolve));
          wake = null;
        }
        return { value: buffered.shift(), done: false };
      },
      async return() {
        unsubscribe();
        return { value: undefined, done: true };
      },
    };
  }

  #remove(sub) {
    this.#subs.delete(sub);
    if (this.#subs.size === 0 && !this.#channel) this.#core.setFeedListener(null);
  }

  async #replay(sub) {
    const q = (since) => {
      const p = new URLSearchParams({ since: String(since), limit: "1000" });
      if (sub.i.kinds.length) p.set("kinds", sub.i.kinds.join(","));
      if (sub.i.keys.length) p.set("keys", sub.i.keys.join(","));
      return p.toString();
    };
    let since = sub.i.since;
    try {
      for (;;) {
        const page = await this.#api("GET", "/v1/events", q(since));
        if (page.resync_required) {
          this.#deliver(sub, { seq: page.last_seq, kind: "resync_required", key: "", last_seq: page.last_seq });
          since = page.last_seq;
          break;
        }
        for (const e of page.events) this.#deliver(sub, e);
        since = page.next_since;
        if (page.next_since >= page.last_seq) break;
      }
    } catch (err) {
      this.#deliver(sub, { seq: since, kind: "error", key: "", code: err.code ?? "internal", detail: String(err.message ?? err) });
    }
    sub.delivered = Math.max(sub.delivered, since);
    sub.ready = true;
    const pending = sub.pending;
    sub.pending = [];
    for (const e of pending) if (e.seq > sub.delivered && admits(sub.i, e)) this.#deliver(sub, e);
  }

  #push(event) {
    this.#queue.push(event);
    if (!this.#flushing) {
      this.#flushing = true;
      // The store calls us while it is locked: deliver after it returns.
      queueMicrotask(() => this.#flush());
    }
  }

  #flush() {
    this.#flushing = false;
    const events = this.#queue;
    this.#queue = [];
    for (const e of events) {
      for (const sub of this.#subs) {
        if (!sub.ready) sub.pending.push(e);
        else if (e.seq > sub.delivered && admits(sub.i, e)) this.#deliver(sub, e);
      }
    }
  }

  #deliver(sub, e) {
    if (!this.#subs.has(sub)) return;
    if (typeof e.seq === "number" && e.kind !== "error") sub.delivered = Math.max(sub.delivered, e.seq);
    try {
      sub.handler(e);
    } catch (err) {
      // One failing subscriber must not starve the others, nor fail a
      // write that is already durable.
      console.error("edgemem: a change-feed subscriber threw", err);
    }
  }
}
