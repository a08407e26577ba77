// The MCP server at /mcp under `wrangler dev` (auth enforced), driven by the
// official client (@modelcontextprotocol/sdk) over Streamable HTTP: tenant
// keys see only their namespace, tool errors carry edgemem's codes, the
// transport's status codes follow the spec, and a deleted session is gone.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { startWranglerDev } from "../e2e/wrangler-dev.mjs";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const ADMIN = "admin-" + "m".repeat(40);
const worker = await startWranglerDev(ROOT, { vars: { EDGEMEM_ADMIN_TOKEN: ADMIN } });
after(() => worker.stop());

async function rest(method, path, body, token = ADMIN) {
  const res = await fetch(new URL(path, worker.url), {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined, headers: res.headers };
}

const key = async (namespace, scopes) => {
  const r = await rest("POST", "/v1/admin/keys", { namespace, scopes });
  assert.equal(r.status, 200, JSON.stringify(r.json));
  return r.json.key;
};
const ACME = await key("acme", ["read", "write"]);
const GLOBEX = await key("globex", ["read", "write"]);
const READER = await key("acme", ["read"]);

async function connect(token, query = "") {
  const transport = new StreamableHTTPClientTransport(new URL(`mcp${query}`, worker.url), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
  const client = new Client({ name: "edgemem-test", version: "0.0.0" });
  await client.connect(transport);
  return { client, transport };
}

const structured = (r) => r.structuredContent;

test("the SDK client initializes, lists the full tool set and calls tools against the tenant", async () => {
  const { client, transport } = await connect(ACME);
  assert.ok(transport.sessionId, "a session id was issued");
  assert.equal(client.getServerVersion().name, "edgemem");
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  for (const n of ["search_long_term_memory", "create_long_term_memories", "edit_long_term_memory", "delete_long_term_memories", "add_memory_to_working_memory", "get_working_memory", "set_working_memory", "memory_prompt", "get_current_datetime", "count_tokens", "fits_context", "ledger_balance", "ledger_transfer", "decision_log_append"]) {
    assert.ok(names.includes(n), `${n} is listed`);
  }
  for (const t of tools) assert.equal(t.inputSchema.type, "object", t.name);

  const created = await client.callTool({ name: "create_long_term_memories", arguments: { memories: [{ text: "Sam moved to Lisbon in March", topics: ["moves"] }] } });
  assert.equal(created.isError, false, JSON.stringify(created));
  const [id] = structured(created).created;
  // A REST read by id finds it: the create went through the id directory.
  const byId = await rest("GET", `/v1/long-term-memory/${id}`, undefined, ACME);
  assert.equal(byId.status, 200);
  assert.equal(byId.json.namespace, "acme");
  const found = await client.callTool({ name: "search_long_term_memory", arguments: { text: "Lisbon", search_mode: "keyword" } });
  assert.equal(structured(found).memories[0].id, id);
  const edited = await client.callTool({ name: "edit_long_term_memory", arguments: { memory_id: id, text: "Sam moved to Porto in March" } });
  assert.equal(structured(edited).text, "Sam moved to Porto in March");

  // Working memory, the prompt, the decision log and the counting tools.
  assert.equal((await client.callTool({ name: "set_working_memory", arguments: { session_id: "s1", messages: [{ role: "user", content: "book me a tram" }] } })).isError, false);
  assert.equal((await client.callTool({ name: "add_memory_to_working_memory", arguments: { session_id: "s1", text: "The user prefers trams" } })).isError, false);
  const wm = structured(await client.callTool({ name: "get_working_memory", arguments: { session_id: "s1" } }));
  assert.equal(wm.messages.length, 1);
  assert.equal(wm.memories.length, 1);
  const prompt = structured(await client.callTool({ name: "memory_prompt", arguments: { query: "where did Sam move?", session_id: "s1" } }));
  assert.ok(JSON.stringify(prompt.messages).includes("Porto"), JSON.stringify(prompt));
  const logged = structured(await client.callTool({ name: "decision_log_append", arguments: { session_id: "s1", kind: "decision", text: "suggest tram 28" } }));
  assert.equal(logged.seq, 1);
  const counted = structured(await client.callTool({ name: "count_tokens", arguments: { text: "hello world", model: "gpt-4o" } }));
  assert.equal(counted.tokens, 2);
  assert.equal(counted.counting, "exact:o200k_base");
  const fits = structured(await client.callTool({ name: "fits_context", arguments: { messages: [{ role: "user", content: "hi" }], model: "gpt-4o" } }));
  assert.equal(fits.fits, true);

  // The ledger: decimal strings in and out; a JSON number is refused.
  assert.equal((await rest("POST", "/v1/ledger/assets", { code: "USD", scale: 2 }, ACME)).status, 200);
  for (const id of ["a", "b"]) assert.equal((await rest("POST", "/v1/ledger/accounts", { id, asset: "USD" }, ACME)).status, 200);
  const t = structured(await client.callTool({ name: "ledger_transfer", arguments: { id: "t1", debit_account: "b", credit_account: "a", amount: "12.50" } }));
  assert.equal(t.result, "created");
  const balance = structured(await client.callTool({ name: "ledger_balance", arguments: { account_id: "a" } }));
  assert.equal(balance.credits_posted, "12.50", JSON.stringify(balance));
  const asNumber = await client.callTool({ name: "ledger_transfer", arguments: { id: "t2", debit_account: "b", credit_account: "a", amount: 12.5 } });
  assert.equal(asNumber.isError, true);
  assert.equal(structured(asNumber).error.code, "invalid_input");

  // Resources: the session and the memory.
  const { resources } = await client.listResources();
  assert.ok(resources.some((r) => r.uri === "edgemem://working-memory/s1"), JSON.stringify(resources));
  const read = await client.readResource({ uri: `edgemem://long-term-memory/${id}` });
  assert.equal(JSON.parse(read.contents[0].text).id, id);

  const deleted = await client.callTool({ name: "delete_long_term_memories", arguments: { memory_ids: [id] } });
  assert.equal(deleted.isError, false);
  await client.close();
});

test("bad tool input is an isError result with edgemem's code; an unknown tool is a protocol error", async () => {
  const { client } = await connect(ACME);
  for (const [name, args, code] of [
    ["search_long_term_memory", { limit: "ten" }, "invalid_input"],
    ["search_long_term_memory", { surprise: 1 }, "invalid_input"],
    ["create_long_term_memories", { memories: [{ topics: ["no text"] }] }, "invalid_input"],
    ["get_long_term_memory", { memory_id: "missing-memory" }, "not_found"],
    ["count_tokens", { text: "x", model: "no-such-model" }, "invalid_input"],
  ]) {
    const r = await client.callTool({ name, arguments: args });
    assert.equal(r.isError, true, `${name} ${JSON.stringify(args)}`);
    assert.equal(structured(r).error.code, code, `${name} ${JSON.stringify(r)}`);
    assert.match(r.content[0].text, new RegExp(`^${code}: `));
  }
  await assert.rejects(client.callTool({ name: "rm_rf", arguments: {} }), /unknown tool/);
  await client.close();
});

test("a tenant's client sees only its namespace: naming another is refused, nothing leaks", async () => {
  const acme = await connect(ACME);
  await acme.client.callTool({ name: "create_long_term_memories", arguments: { memories: [{ text: "acme's launch codes are in the blue binder" }] } });
  const globex = await connect(GLOBEX);
  const search = structured(await globex.client.callTool({ name: "search_long_term_memory", arguments: { text: "launch codes blue binder", search_mode: "keyword" } }));
  assert.deepEqual(search.memories, []);
  const other = await globex.client.callTool({ name: "create_long_term_memories", arguments: { memories: [{ text: "x", namespace: "acme" }] } });
  assert.equal(other.isError, true);
  assert.equal(structured(other).error.code, "namespace_forbidden");
  const filter = await globex.client.callTool({ name: "search_long_term_memory", arguments: { text: "x", namespace: { eq: "acme" } } });
  assert.equal(filter.isError, true);
  // A session bound to another namespace cannot be opened with this key.
  await assert.rejects(connect(GLOBEX, "?namespace=acme"), /403|namespace_forbidden|Forbidden/i);
  // A read-only key may read but not write.
  const reader = await connect(READER);
  assert.equal((await reader.client.callTool({ name: "get_current_datetime", arguments: {} })).isError, false);
  const write = await reader.client.callTool({ name: "create_long_term_memories", arguments: { memories: [{ text: "y" }] } });
  assert.equal(structured(write).error.code, "scope_forbidden");
  for (const c of [acme, globex, reader]) await c.client.close();
  // Over REST as well: /v1/tools/call needs read, then each tool its route's scope.
  const restRead = await rest("POST", "/v1/tools/call", { name: "get_current_datetime", arguments: {} }, READER);
  assert.equal(restRead.status, 200, JSON.stringify(restRead.json));
  const restWrite = await rest("POST", "/v1/tools/call", { name: "create_long_term_memories", arguments: { memories: [{ text: "z" }] } }, READER);
  assert.deepEqual([restWrite.status, restWrite.json.code], [403, "scope_forbidden"]);
  const restForeign = await rest("POST", "/v1/tools/call", { name: "get_current_datetime", arguments: {}, namespace: "globex" }, ACME);
  assert.deepEqual([restForeign.status, restForeign.json.code], [403, "namespace_forbidden"]);
});

test("a long search result stays under the token ceiling, cut by whole items with a marker", async () => {
  const { client } = await connect(ACME);
  const memories = Array.from({ length: 120 }, (_, i) => ({ text: `note ${i}: the Lisbon tram network runs yellow Remodelado cars on line 28 through Alfama and Graça` }));
  assert.equal((await client.callTool({ name: "create_long_term_memories", arguments: { memories, deduplicate: false } })).isError, false);
  const r = await client.callTool({ name: "search_long_term_memory", arguments: { text: "Lisbon tram", search_mode: "keyword", limit: 100 } });
  const v = structured(r);
  assert.ok(v.memories.length > 0 && v.memories.length < 100, `${v.memories.length} kept`);
  assert.deepEqual(v.truncated, { omitted: 100 - v.memories.length, total: 100 });
  assert.deepEqual(JSON.parse(r.content[0].text), v, "the text is the whole JSON, not cut mid-way");
  await client.close();
});

test("transport: sessions are required and bound to the key, DELETE ends one, GET is 405, bad requests are 4xx", async () => {
  const { client, transport } = await connect(ACME);
  const sid = transport.sessionId;
  const post = (body, headers = {}) =>
    fetch(new URL("mcp", worker.url), {
      method: "POST",
      headers: { authorization: `Bearer ${ACME}`, "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18", ...headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
  const ping = { jsonrpc: "2.0", id: 1, method: "ping" };
  assert.equal((await post(ping, { "mcp-session-id": sid })).status, 200);
  assert.equal((await post(ping)).status, 400, "no session id");
  assert.equal((await post(ping, { "mcp-session-id": "0".repeat(32) })).status, 404, "unknown session");
  assert.equal((await post(ping, { "mcp-session-id": sid, authorization: `Bearer ${GLOBEX}` })).status, 404, "another key's session");
  assert.equal((await post(ping, { "mcp-session-id": sid, "mcp-protocol-version": "1999-01-01" })).status, 400);
  const parse = await post("{not json", { "mcp-session-id": sid });
  assert.equal(parse.status, 400);
  assert.equal((await parse.json()).error.code, -32700);
  assert.equal((await post([ping], { "mcp-session-id": sid })).status, 400, "batches were removed in 2025-06-18");
  assert.equal((await post({ jsonrpc: "2.0", method: "notifications/initialized" }, { "mcp-session-id": sid })).status, 202);
  assert.equal((await post(ping, { "mcp-session-id": sid, "content-type": "text/plain" })).status, 415);
  assert.equal((await post(ping, { "mcp-session-id": sid, accept: "text/html" })).status, 406);
  assert.equal((await post(ping, { "mcp-session-id": sid, authorization: "Bearer nope" })).status, 401);
  assert.equal((await post(ping, { "mcp-session-id": sid, origin: "https://evil.example" })).status, 403);
  const get = await fetch(new URL("mcp", worker.url), { headers: { authorization: `Bearer ${ACME}`, accept: "text/event-stream", "mcp-session-id": sid } });
  assert.equal(get.status, 405);
  assert.match(get.headers.get("allow"), /POST/);
  await transport.terminateSession();
  assert.equal((await post(ping, { "mcp-session-id": sid })).status, 404, "a deleted session is gone");
  await client.close().catch(() => {});
});

test("examples/mcp-http.mjs runs against the Worker", async () => {
  const r = await new Promise((resolve) =>
    execFile(process.execPath, ["examples/mcp-http.mjs"], { cwd: ROOT, timeout: 60_000, env: { ...process.env, EDGEMEM_URL: worker.url, EDGEMEM_TOKEN: ACME } }, (err, stdout, stderr) => resolve({ code: err ? err.code ?? -1 : 0, stdout, stderr })),
  );
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /window seat/i);
});

test("the Worker serves /openapi.json, and its own routes' answers match it", async () => {
  const res = await fetch(new URL("openapi.json", worker.url));
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type"), /application\/json/);
  const doc = await res.json();
  assert.deepEqual(doc, JSON.parse(readFileSync(new URL("../../www/openapi.json", import.meta.url), "utf8")));
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(doc, "openapi");
  const check = (path, method, status, body) => {
    const ref = status === 200 ? `openapi#/paths/${path.replaceAll("/", "~1")}/${method}/responses/200/content/application~1json/schema` : "openapi#/components/schemas/Error";
    const v = ajv.compile({ $ref: ref });
    assert.ok(v(body), `${method} ${path} ${status}: ${JSON.stringify(v.errors)} for ${JSON.stringify(body)}`);
  };
  // The Worker's own routes, which the npm package does not serve.
  const count = await rest("POST", "/v1/budget/count", { text: "hello world", model: "gpt-4o" }, ACME);
  assert.equal(count.status, 200);
  check("/v1/budget/count", "post", 200, count.json);
  const build = await rest("POST", "/v1/budget/build", { model: "gpt-4o", slots: [{ name: "system", content: "hi", priority: 1 }] }, ACME);
  assert.equal(build.status, 200);
  check("/v1/budget/build", "post", 200, build.json);
  const keys = await rest("GET", "/v1/admin/keys");
  assert.equal(keys.status, 200);
  check("/v1/admin/keys", "get", 200, keys.json);
  const minted = await rest("POST", "/v1/admin/keys", { namespace: "docs", scopes: ["read"] });
  check("/v1/admin/keys", "post", 200, minted.json);
  const one = await rest("GET", `/v1/admin/keys/${minted.json.id}`);
  check("/v1/admin/keys/{key_id}", "get", 200, one.json);
  const bad = await rest("POST", "/v1/budget/count", { text: 5 }, ACME);
  assert.equal(bad.status, 422);
  check("/v1/budget/count", "post", 422, bad.json);
  const call = await rest("POST", "/v1/tools/call", { name: "get_current_datetime", arguments: {} }, ACME);
  assert.equal(call.status, 200);
  check("/v1/tools/call", "post", 200, call.json);
});
