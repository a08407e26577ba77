// Cost of prompt assembly (`memory.prompt()`) over a 500-turn session:
// in-process in Node (the built package), through the local Worker
// (Miniflare/workerd on 127.0.0.1), and the same assembly done naively in
// plain JS with gpt-tokenizer for the ratio.
//
//   make build && node benches/prompt.mjs
//   PROMPT_CALLS=5000 PROMPT_WORKER=0 node benches/prompt.mjs   (in-process only)
import { performance } from "node:perf_hooks";
import { mkdtempSync, rmSync, existsSync, readFileSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import * as gptO200k from "gpt-tokenizer/encoding/o200k_base";
import * as gptCl100k from "gpt-tokenizer/encoding/cl100k_base";
import { Memory } from "edgemem";
// The raw wasm binding of the same module instance, to time the call
// without the wrapper's JSON.stringify/JSON.parse.
import { MemoryCore } from "../pkg/edgemem_wasm.js";

const CALLS = Number(process.env.PROMPT_CALLS ?? 2_000);
const WORKER_CALLS = Number(process.env.PROMPT_WORKER_CALLS ?? 500);
const WORKER = process.env.PROMPT_WORKER !== "0";
const TURNS = 500;
const RESET_EVERY = 100;

// ---------------------------------------------------------------- workload

/** Deterministic PRNG (mulberry32), so every run builds the same session. */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = rng(0x5eed);
const int = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1));
const pick = (xs) => xs[Math.floor(rand() * xs.length)];

const WORDS = (
  "the a of to and in is that for it with as on be this by are from at or an was have not we can you your will which " +
  "order warehouse shipment invoice balance account transfer pending settled refund customer supplier stock pallet " +
  "route carrier delay estimate budget token window session summary memory agent prompt model context tool result " +
  "check confirm update schedule deliver receive Ohio Denver Lisbon Monday Friday quarter forecast margin price " +
  "discount contract clause renewal priority ticket escalate resolve retry timeout error latency region cache query"
).split(" ");
const PHRASES = [
  "Les délais de livraison à Lyon sont prolongés de deux jours.",
  "Die Lieferung nach München ist für Donnerstag geplant, Größe XL.",
  "東京倉庫の在庫は来週補充されます。",
  "请确认上海仓库的库存数量。",
  "Заказ отправлен из Санкт-Петербурга.",
  "¿Podemos adelantar la entrega a Sevilla?",
  "Status: ✅ shipped 📦 → 🚚 ETA 3 days",
  "Précision : 12,5 % de remise — valable jusqu’au 30 juin.",
];

function prose(words) {
  const out = [];
  let sentence = 0;
  for (let i = 0; i < words; i++) {
    let w = pick(WORDS);
    if (sentence === 0) w = w[0].toUpperCase() + w.slice(1);
    if (rand() < 0.06) w = String(int(1, 99_999));
    out.push(w);
    sentence++;
    if (sentence > int(8, 20)) {
      out[out.length - 1] += rand() < 0.85 ? "." : "?";
      sentence = 0;
      if (rand() < 0.08) out.push("\n\n");
    }
  }
  return out.join(" ") + ".";
}

function toolResult(words) {
  const rows = [];
  let n = 0;
  while (n < words) {
    rows.push({ sku: `SKU-${int(1000, 9999)}`, warehouse: pick(["Ohio", "Denver", "Lisbon", "Osaka"]), qty: int(0, 500), note: prose(int(3, 10)) });
    n += 14;
  }
  return JSON.stringify({ ok: true, rows });
}

/** Prose of 20–400 words; about one turn in five quotes non-ASCII text. */
const turnText = () => (rand() < 0.2 ? `${prose(int(10, 200))} ${pick(PHRASES)} ${prose(int(10, 200))}` : prose(int(20, 400)));

/** 500 turns: user/assistant alternating, with tool call/result pairs. */
function buildTurns(n) {
  const turns = [];
  while (turns.length < n) {
    turns.push({ role: "user", content: turnText() });
    if (turns.length < n - 2 && rand() < 0.12) {
      const tool = pick(["inventory.lookup", "wallet.balance", "orders.search"]);
      turns.push({ role: "assistant", content: `Calling ${tool} with ${JSON.stringify({ warehouse: pick(["Ohio", "Denver"]), limit: int(5, 50) })}` });
      turns.push({ role: "tool", content: toolResult(int(20, 400)) });
    }
    if (turns.length < n) turns.push({ role: "assistant", content: turnText() });
  }
  return turns.slice(0, n);
}

const turns = buildTurns(TURNS);
const systemPrompt = `You are the operations assistant of a logistics company. ${prose(300)}`;
const patches = [`CRITICAL: Warehouse Ohio is closed until Monday. ${prose(40)}`, `NOTE: prices include VAT for EU customers. ${prose(40)}`];
const memories = Array.from({ length: 10 }, (_, i) => `Memory ${i + 1}: ${prose(int(20, 60))}`);
const query = `What is the status of order ${int(10_000, 99_999)} and can it still ship from Denver this week? Answer briefly.`;
const words = turns.reduce((s, t) => s + t.content.split(/\s+/).length, 0);
const bytes = turns.reduce((s, t) => s + Buffer.byteLength(t.content), 0);
const toolTurns = turns.filter((t) => t.role === "tool").length;
const nonAscii = turns.filter((t) => /[^\x00-\x7f]/.test(t.content)).length;

// The agent's system text as the core joins it (prompt, then patches).
const MODELS = [
  { model: "gpt-4o", label: "gpt-4o (exact o200k, 128K)", peer: gptO200k },
  { model: "gpt-4", label: "gpt-4 (exact cl100k, 8K)", peer: gptCl100k },
  { model: "claude-sonnet-4", label: "claude-sonnet-4 (estimator, 200K)", peer: null },
];

// ------------------------------------------------------------------ timing

function stats(samples) {
  const s = Float64Array.from(samples).sort();
  const at = (q) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
  return { n: s.length, p50: at(0.5), p99: at(0.99), mean: s.reduce((a, b) => a + b, 0) / s.length, max: s[s.length - 1] };
}

/** Wall time and this process's CPU time (all threads) of one call, in ms. */
async function timed(fn) {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const r = await fn();
  const wall = performance.now() - t0;
  const c = process.cpuUsage(c0);
  return [wall, r, (c.user + c.system) / 1000];
}

/** Wall-time stats of n calls, plus the CPU-time p50 (`cpu50`). */
async function sample(n, fn) {
  const wall = [];
  const cpu = [];
  for (let i = 0; i < n; i++) {
    const [w, , c] = await timed(() => fn(i));
    wall.push(w);
    cpu.push(c);
  }
  return { ...stats(wall), cpu50: stats(cpu).p50 };
}

/** CPU time used so far by a process (workerd), in ms, from /proc. */
function processCpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_S;
}
const CLOCK_TICKS_PER_S = 100;

/** The workerd process Miniflare started (a child of this process), or null. */
function workerdPid() {
  for (const task of readdirSync(`/proc/${process.pid}/task`)) {
    let children = "";
    try {
      children = readFileSync(`/proc/${process.pid}/task/${task}/children`, "utf8");
    } catch {
      continue;
    }
    for (const pid of children.trim().split(/\s+/).filter(Boolean)) {
      if (readFileSync(`/proc/${pid}/comm`, "utf8").includes("workerd")) return pid;
    }
  }
  return null;
}

const ms = (x) => (x < 1 ? x.toFixed(3) : x < 100 ? x.toFixed(2) : x.toFixed(0));
const kb = (b) => `${Math.round(b / 1024).toLocaleString("en")} KB`;

// ------------------------------------------------------- edgemem in-process

/** Collects wall and CPU samples; `done()` gives wall stats plus the CPU p50. */
function recorder() {
  const wall = [];
  const cpu = [];
  return {
    async time(fn) {
      const [w, r, c] = await timed(fn);
      wall.push(w);
      cpu.push(c);
      return r;
    },
    done: () => ({ ...stats(wall), cpu50: stats(cpu).p50 }),
  };
}

async function inProcess() {
  const m = await Memory.open();
  const agent = m.agent("ops");
  await agent.setPrompt(systemPrompt);
  for (const p of patches) await agent.appendPatch(p);
  await m.putSession("s500", { messages: turns });
  const request = (model) => ({ query, sessionId: "s500", agentId: "ops", model, memories, format: "openai" });

  const rows = [];
  for (const { model, label } of MODELS) {
    // Loads the encoding (rank asset) without touching the session, so the
    // cold call below measures an empty count memo, not the asset load.
    const [loadMs] = await timed(() => m.prompt({ query: `warm-up for ${model}`, model, windowTokens: 4096, reserveForOutput: 0 }));
    const [coldMs, first] = await timed(() => m.prompt(request(model)));

    // The same call on the raw binding: Rust work plus the string crossing,
    // without the wrapper's JSON.stringify of the request and JSON.parse of
    // the answer. Calls are interleaved so that all see the same machine.
    const core = await MemoryCore.open(undefined, "{}", undefined);
    const body = JSON.stringify({ query, session_id: "s500", agent_id: "ops", model, memories, format: "openai" });
    await core.call("PUT", "/v1/agents/ops/prompt", "", JSON.stringify({ text: systemPrompt }), undefined);
    for (const p of patches) await core.call("POST", "/v1/agents/ops/patches", "", JSON.stringify({ text: p }), undefined);
    await core.call("PUT", "/v1/working-memory/s500", "", JSON.stringify({ messages: turns }), undefined);
    let text = "";
    for (let i = 0; i < 50; i++) {
      await m.prompt(request(model));
      text = await core.call("POST", "/v1/prompt", "", body, undefined);
    }
    const wrapped = recorder();
    const raw = recorder();
    const parse = recorder();
    for (let i = 0; i < CALLS; i++) {
      await wrapped.time(() => m.prompt(request(model)));
      text = await raw.time(() => core.call("POST", "/v1/prompt", "", body, undefined));
      await parse.time(() => JSON.parse(text));
    }
    core.free();
    // The string crossing alone: wasm-bindgen decodes the answer's UTF-8
    // with TextDecoder; Node's Buffer decoder for comparison.
    const utf8 = Buffer.from(text, "utf8");
    const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
    const decode = await sample(CALLS, () => decoder.decode(utf8));
    const bufferDecode = await sample(CALLS, () => utf8.toString("utf8"));

    // What an agent does each turn: append one new turn, then assemble. The
    // new turn was never counted; every RESET_EVERY appends the session goes
    // back to its 500 turns (untimed), so it stays at 500–600 turns.
    const append = recorder();
    const afterAppend = recorder();
    for (let i = 0; i < CALLS; i++) {
      if (i > 0 && i % RESET_EVERY === 0) await m.putSession("s500", { messages: turns });
      const turn = { role: i % 2 ? "assistant" : "user", content: `(${model} turn ${i}) ${prose(int(20, 400))}` };
      await append.time(() => m.appendMessages("s500", [turn]));
      await afterAppend.time(() => m.prompt(request(model)));
    }
    await m.putSession("s500", { messages: turns });
    rows.push({
      model,
      label,
      loadMs,
      coldMs,
      warm: wrapped.done(),
      raw: raw.done(),
      parse: parse.done(),
      decode,
      bufferDecode,
      append: append.done(),
      afterAppend: afterAppend.done(),
      kept: first.turns_kept,
      outBytes: Buffer.byteLength(text),
    });
  }
  m.free();
  return rows;
}

// ------------------------------------------------ naive plain-JS assembly

/** Counts every part and every turn on every call, drops the oldest units until it fits. */
function naivePrompt(count, { window, reserve, memo }) {
  const c = memo ? (t) => memo.get(t) ?? (memo.set(t, count(t)), memo.get(t)) : count;
  const overhead = 3;
  const system = [systemPrompt, ...patches].join("\n\n");
  const memoryBlock = `Relevant long-term memories:\n- ${memories.join("\n- ")}`;
  let used = c(system) + c(memoryBlock) + c(query) + 3 * overhead;
  const tokens = turns.map((t) => c(t.content) + overhead);
  let total = tokens.reduce((a, b) => a + b, 0);
  const available = window - reserve;
  let first = 0;
  while (first < turns.length && used + total > available) {
    // Drop a whole unit: a message and the tool results after it.
    do total -= tokens[first++];
    while (first < turns.length && turns[first].role === "tool");
  }
  used += total;
  const messages = [{ role: "system", content: system }];
  for (const t of turns.slice(first)) messages.push(t.role === "tool" ? { role: "user", content: `[tool result]\n${t.content}` } : { role: t.role, content: t.content });
  messages.push({ role: "system", content: memoryBlock }, { role: "user", content: query });
  return { messages, used, kept: turns.length - first };
}

async function naive(edgeRows) {
  const rows = [];
  for (const { model, peer } of MODELS) {
    if (!peer) continue;
    const e = edgeRows.find((r) => r.model === model);
    // As the core defaults: the reserve is the output limit, at most a quarter of the window.
    const window = model === "gpt-4o" ? 128_000 : 8_192;
    const reserve = model === "gpt-4o" ? 16_384 : 2_048;
    const count = (t) => peer.countTokens(t);
    const [coldMs, first] = await timed(() => naivePrompt(count, { window, reserve }));
    for (let i = 0; i < 3; i++) naivePrompt(count, { window, reserve });
    // Enough calls for a stable p50 without spending minutes at ~40 ms each.
    const n = Math.max(100, Math.min(CALLS, Math.round(10_000 / Math.max(coldMs, 1))));
    const warm = await sample(n, () => naivePrompt(count, { window, reserve }));
    const memo = new Map();
    naivePrompt(count, { window, reserve, memo });
    const memoWarm = await sample(CALLS, () => naivePrompt(count, { window, reserve, memo }));
    rows.push({ model, coldMs, warm, memoWarm, kept: first.kept, edgeKept: e?.kept });
  }
  return rows;
}

// ---------------------------------------------------------------- Worker

async function worker() {
  const root = fileURLToPath(new URL("../", import.meta.url));
  if (!existsSync(`${root}build/index.js`) || !existsSync(`${root}target/site/pkg/encodings`)) {
    console.log("\n(Worker part skipped: run `make build` first)");
    return null;
  }
  const { startWorker } = await import("../tests/worker/miniflare.mjs");
  const dir = mkdtempSync(join(tmpdir(), "edgemem-prompt-bench-"));
  const { mf, call } = await startWorker({ persistDir: dir });
  const pid = workerdPid();
  const NS = "?namespace=bench";
  const ok = async (method, path, body) => {
    const r = await call(method, path, body);
    if (r.status !== 200) throw new Error(`${method} ${path}: ${r.status} ${r.text.slice(0, 300)}`);
    return r;
  };
  // Round trips plus workerd's CPU time per request (both isolates, the
  // HTTP handling and Miniflare's entry worker), averaged over n requests.
  const measure = async (body) => {
    const cpu0 = pid ? processCpuMs(pid) : 0;
    const s = await sample(WORKER_CALLS, () => ok("POST", `/v1/prompt${NS}`, body));
    return { ...s, workerdCpu: pid ? (processCpuMs(pid) - cpu0) / WORKER_CALLS : NaN };
  };
  try {
    await ok("PUT", `/v1/agents/ops/prompt${NS}`, { text: systemPrompt });
    for (const p of patches) await ok("POST", `/v1/agents/ops/patches${NS}`, { text: p });
    // Under the 1 MiB body cap: the first half in the PUT, the rest appended.
    const half = TURNS / 2;
    await ok("PUT", `/v1/working-memory/s500${NS}`, { messages: turns.slice(0, half) });
    for (let i = half; i < TURNS; i += 50) await ok("POST", `/v1/working-memory/s500/messages${NS}`, { messages: turns.slice(i, i + 50) });
    // Both hops (front Worker → Durable Object) with trivial work: the floor,
    // measured again before each model so that both see the same machine.
    const trivial = { query: "hi", window_tokens: 1000 };
    for (let i = 0; i < 20; i++) await ok("POST", `/v1/prompt${NS}`, trivial);
    const rows = [];
    for (const { model, label } of MODELS) {
      const body = { query, session_id: "s500", agent_id: "ops", model, memories, format: "openai" };
      const [coldMs, r] = await timed(() => ok("POST", `/v1/prompt${NS}`, body));
      for (let i = 0; i < 20; i++) await ok("POST", `/v1/prompt${NS}`, body);
      const floor = await measure(trivial);
      const warm = await measure(body);
      rows.push({ model, label, coldMs, floor, warm, kept: r.json.turns_kept, outBytes: Buffer.byteLength(r.text) });
      // The same prompt as a plan: what to send, by reference (issue 16).
      const planBody = { ...body, as: "plan" };
      const [planColdMs, p] = await timed(() => ok("POST", `/v1/prompt${NS}`, planBody));
      const planWarm = await measure(planBody);
      rows.push({ model, label: `${label}, as plan`, coldMs: planColdMs, floor, warm: planWarm, kept: p.json.turns_kept, outBytes: Buffer.byteLength(p.text) });
    }
    return rows;
  } finally {
    await mf.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------- report

const load0 = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
const edge = await inProcess();
const peers = await naive(edge);
const w = WORKER ? await worker() : null;
const load1 = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");

const x = (a, b) => `${(a / b).toFixed(a / b < 10 ? 1 : 0)}×`;
console.log(`prompt benchmark: node ${process.version}, ${CALLS} calls per in-process row; load average ${load0} before, ${load1} after`);
console.log(
  `session: ${TURNS} turns (${toolTurns} tool results, ${nonAscii} with non-ASCII text), ${words.toLocaleString("en")} words, ${kb(bytes)}; ` +
    `agent: system prompt + 2 patches; ${memories.length} memories; format openai\n`,
);
console.log("In-process (Node, `memory.prompt()`), milliseconds; CPU = this process's CPU time per call:\n");
console.log("| model | turns kept | first call (count memo empty) | p50 | p99 | mean | CPU p50 | after appending one turn: p50 | p99 | CPU p50 |");
console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
for (const r of edge) {
  const a = r.afterAppend;
  console.log(`| ${r.label} | ${r.kept} of ${TURNS} | ${ms(r.coldMs)} | ${ms(r.warm.p50)} | ${ms(r.warm.p99)} | ${ms(r.warm.mean)} | ${ms(r.warm.cpu50)} | ${ms(a.p50)} | ${ms(a.p99)} | ${ms(a.cpu50)} |`);
}
console.log("\nWhere the warm time goes (CPU p50, milliseconds):\n");
console.log("| model | answer | `prompt()` | raw `core.call` (Rust + string crossing) | UTF-8 decode of the answer (`TextDecoder`, as wasm-bindgen) | same with `Buffer` | `JSON.parse` of the answer | first use of the encoding (asset load, wall) | `appendMessages` of one turn |");
console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
for (const r of edge) {
  console.log(
    `| ${r.model} | ${kb(r.outBytes)} | ${ms(r.warm.cpu50)} | ${ms(r.raw.cpu50)} | ${ms(r.decode.cpu50)} | ${ms(r.bufferDecode.cpu50)} | ${ms(r.parse.cpu50)} | ${r.model.startsWith("claude") ? "none (estimator)" : ms(r.loadMs)} | ${ms(r.append.cpu50)} |`,
  );
}
console.log("\nPlain JS with gpt-tokenizer 4.0.0 `countTokens` (same parts, same window, OpenAI shape), milliseconds:\n");
console.log("| model | turns kept (edgemem) | naive: first call | p50 | p99 | CPU p50 | with a `Map` memo: p50 | p99 | CPU p50 | naive / edgemem (CPU p50) | edgemem / memo (CPU p50) |");
console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
for (const p of peers) {
  const e = edge.find((r) => r.model === p.model);
  console.log(
    `| ${p.model} | ${p.kept} (${p.edgeKept}) | ${ms(p.coldMs)} | ${ms(p.warm.p50)} | ${ms(p.warm.p99)} | ${ms(p.warm.cpu50)} | ` +
      `${ms(p.memoWarm.p50)} | ${ms(p.memoWarm.p99)} | ${ms(p.memoWarm.cpu50)} | ${x(p.warm.cpu50, e.warm.cpu50)} | ${x(e.warm.cpu50, p.memoWarm.cpu50)} |`,
  );
}
if (w) {
  console.log(`\nThrough the local Worker (Miniflare, \`POST /v1/prompt\`, ${WORKER_CALLS} sequential requests per row), milliseconds:\n`);
  console.log("| model | answer | first request | p50 | p99 | mean | workerd CPU per request | trivial request: p50 | workerd CPU | in-Worker share (CPU difference) |");
  console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
  for (const r of w) {
    console.log(
      `| ${r.label} | ${kb(r.outBytes)} | ${ms(r.coldMs)} | ${ms(r.warm.p50)} | ${ms(r.warm.p99)} | ${ms(r.warm.mean)} | ${ms(r.warm.workerdCpu)} | ` +
        `${ms(r.floor.p50)} | ${ms(r.floor.workerdCpu)} | ${ms(r.warm.workerdCpu - r.floor.workerdCpu)} |`,
    );
  }
}
