// Adversarial isolation (issue 12): a tenant's key tries 1,000 ways to read
// or change another tenant's memory (by id, by filter, by body namespace,
// by query, by prompt and tool-call arguments, by headers and path tricks).
// Every answer is checked for the victim's sentinel text, and the victim's
// state is compared before and after: 0 records may leak or change.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { startWorker } from "./miniflare.mjs";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const ADMIN = "admin-isolation-" + "k".repeat(32);
const SENTINEL = "VICTIM-SECRET";
const ATTEMPTS = 1000;
// What the attacker asks with: words of the victim's texts, never the
// sentinel itself, so an echo of the question is not mistaken for a leak.
const QUERY = "fact generated message";

const bearer = (t) => ({ authorization: `Bearer ${t}` });

test(`${ATTEMPTS} cross-tenant attempts leak 0 records`, { timeout: 300_000 }, async () => {
  const { mf, call } = await startWorker({ bindings: { EDGEMEM_ADMIN_TOKEN: ADMIN, EDGEMEM_RATE_PER_SECOND: "10000", EDGEMEM_RATE_BURST: "20000" } });
  try {
    const mint = async (namespace) => {
      const r = await call("POST", "/v1/admin/keys", { namespace, scopes: ["read", "write"] }, bearer(ADMIN));
      assert.equal(r.status, 200, r.text);
      return r.json.key;
    };
    const victim = await mint("victim");
    const attacker = await mint("attacker");
    const as = (key) => (method, path, body, headers = {}) => call(method, path, body, { ...bearer(key), ...headers });
    const v = as(victim);
    const a = as(attacker);

    // The victim's memory: records (chosen and generated ids), sessions, a ledger, a profile.
    const created = await v("POST", "/v1/long-term-memory/", {
      memories: [
        ...Array.from({ length: 10 }, (_, i) => ({ id: `v-${i}`, text: `${SENTINEL} fact ${i}`, user_id: "vu", topics: ["secret"] })),
        ...Array.from({ length: 5 }, (_, i) => ({ text: `${SENTINEL} generated ${i}`, user_id: "vu" })),
      ],
    });
    assert.equal(created.status, 200, created.text);
    const ids = (await v("POST", "/v1/long-term-memory/search", { text: SENTINEL, search_mode: "keyword", limit: 50 })).json.memories.map((m) => m.id);
    assert.equal(ids.length, 15);
    for (let i = 0; i < 3; i++) assert.equal((await v("PUT", `/v1/working-memory/vs-${i}`, { messages: [{ role: "user", content: `${SENTINEL} message ${i}` }], data: { card: SENTINEL } })).status, 200);
    assert.equal((await v("POST", "/v1/ledger/assets", { code: "USD", scale: 2 })).status, 200);
    for (const id of ["vacct", "vbank"]) assert.equal((await v("POST", "/v1/ledger/accounts", { id, asset: "USD" })).status, 200);
    assert.equal((await v("POST", "/v1/ledger/transfers", { transfers: [{ id: "t1", debit_account: "vbank", credit_account: "vacct", amount: "12.34" }] })).status, 200);
    assert.equal((await v("PUT", "/v1/agents/vagent/profile", { fields: { note: SENTINEL } })).status, 200);
    // The attacker has data of its own, so its reads answer something.
    assert.equal((await a("POST", "/v1/long-term-memory/", { memories: [{ id: "a-0", text: "attacker fact" }] })).status, 200);

    const snapshot = async () =>
      JSON.stringify({
        records: (await v("POST", "/v1/long-term-memory/search", { text: SENTINEL, search_mode: "keyword", limit: 50 })).json.memories.map((m) => [m.id, m.text]).sort(),
        sessions: await Promise.all([0, 1, 2].map(async (i) => (await v("GET", `/v1/working-memory/vs-${i}`)).json.messages.map((m) => m.content))),
        account: (await v("GET", "/v1/ledger/accounts/vacct")).json,
        profile: (await v("GET", "/v1/agents/vagent/profile")).json,
      });
    const before = await snapshot();

    const pick = (i) => ids[i % ids.length];
    const vectors = [
      (i) => a("GET", `/v1/long-term-memory/${pick(i)}`),
      (i) => a("GET", `/v1/long-term-memory/${pick(i)}?namespace=victim`),
      (i) => a("PATCH", `/v1/long-term-memory/${pick(i)}`, { text: "overwritten" }),
      (i) => a("DELETE", `/v1/long-term-memory?memory_ids=${pick(i)}&memory_ids=${pick(i + 1)}`),
      () => a("POST", "/v1/long-term-memory/search", { text: QUERY, namespace: { eq: "victim" } }),
      () => a("POST", "/v1/long-term-memory/search", { text: QUERY, namespace: { any: ["attacker", "victim"] } }),
      () => a("POST", "/v1/long-term-memory/search", { text: QUERY, user_id: { eq: "vu" }, search_mode: "keyword" }),
      (i) => a("PUT", `/v1/working-memory/vs-${i % 3}`, { namespace: "victim", messages: [{ role: "user", content: "pwned" }] }),
      (i) => a("GET", `/v1/working-memory/vs-${i % 3}`),
      (i) => a("GET", `/v1/working-memory/vs-${i % 3}?namespace=victim`),
      (i) => a("POST", "/v1/memory/prompt", { query: QUERY, session: { session_id: `vs-${i % 3}`, namespace: "victim" } }),
      () => a("POST", "/v1/memory/prompt", { query: QUERY, long_term_search: { text: QUERY, namespace: { eq: "victim" } } }),
      () => a("POST", "/v1/memory/prompt", { query: QUERY, long_term_search: true }),
      (i) => a("POST", "/v1/tools/call", { name: "get_working_memory", arguments: { session_id: `vs-${i % 3}`, namespace: "victim" } }),
      (i) => a("POST", "/v1/tools/call", { name: "search_long_term_memory", arguments: { text: QUERY, namespace: "victim" } }),
      () => a("GET", "/v1/ledger/accounts/vacct"),
      () => a("POST", "/v1/ledger/transfers", { transfers: [{ id: "steal", debit_account: "vacct", credit_account: "vbank", amount: "1.00" }] }),
      () => a("GET", "/v1/ledger/accounts/vacct?namespace=victim"),
      () => a("GET", "/v1/agents/vagent/profile"),
      () => a("GET", "/v1/events?since=0&namespace=victim"),
      () => a("GET", "/v1/events?since=0"),
      () => a("GET", "/v1/stats?namespace=victim"),
      (i) => a("GET", `/v1/long-term-memory/${pick(i)}`, undefined, { "x-edgemem-namespace": "victim" }),
      (i) => a("POST", "/v1/long-term-memory/", { memories: [{ id: pick(i), text: "replaced", namespace: "victim" }] }),
      (i) => a("POST", "/v1/long-term-memory/", { memories: [{ id: `x-${i}`, text: "mixed", namespace: "attacker" }, { id: `y-${i}`, text: "mixed", namespace: "victim" }] }),
      (i) => a("GET", `/v1/long-term-memory/..%2F${pick(i)}`),
      (i) => a("GET", `/v1/long-term-memory/${encodeURIComponent(`victim/${pick(i)}`)}`),
      () => a("GET", "/v1/working-memory/?namespace=victim"),
      () => a("POST", "/v1/admin/keys", { namespace: "victim", scopes: ["read"] }),
      () => a("POST", "/v1/long-term-memory/forget", { namespace: "victim", policy: { max_age_days: 0 }, dry_run: true }),
    ];
    let leaked = 0;
    const statuses = {};
    for (let i = 0; i < ATTEMPTS; i++) {
      const r = await vectors[i % vectors.length](i);
      statuses[r.status] = (statuses[r.status] ?? 0) + 1;
      assert.ok(r.status < 500, `attempt ${i} (vector ${i % vectors.length}) answered ${r.status}: ${r.text}`);
      if (r.text.includes(SENTINEL)) {
        leaked++;
        assert.fail(`attempt ${i} (vector ${i % vectors.length}) leaked: ${r.text.slice(0, 300)}`);
      }
    }
    const after = await snapshot();
    assert.equal(after, before, "the victim's memory is unchanged");
    assert.ok(after.includes(SENTINEL), "the check can see the victim's data");
    console.log(`isolation: ${ATTEMPTS} cross-tenant attempts over ${vectors.length} vectors, ${leaked} records leaked, statuses ${JSON.stringify(statuses)}`);
    mkdirSync(`${ROOT}target/reliability`, { recursive: true });
    writeFileSync(`${ROOT}target/reliability/isolation.json`, JSON.stringify({ attempts: ATTEMPTS, vectors: vectors.length, leaked, statuses }, null, 2));
  } finally {
    await mf.dispose();
  }
});
