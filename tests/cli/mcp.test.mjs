// `edgemem mcp --store DIR`: the official MCP client over stdio against the
// npm package's file store. stdout carries only JSON-RPC; the same tools
// and errors as the Worker's /mcp; the store is written for real.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { spawn } from "node:child_process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { Memory, FileStore } from "../../pkg/node.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const CLI = join(ROOT, "pkg/cli.js");
const tmp = mkdtempSync(join(tmpdir(), "edgemem-mcp-"));
after(() => rmSync(tmp, { recursive: true, force: true }));

async function connect(dir, extra = []) {
  const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, "mcp", "--store", dir, ...extra], stderr: "pipe", env: getDefaultEnvironment() });
  const client = new Client({ name: "edgemem-stdio-test", version: "0.0.0" });
  await client.connect(transport);
  return client;
}

test("over stdio: tools/list, a memory written and found, bad input as an isError result", async () => {
  const dir = join(tmp, "a");
  const client = await connect(dir, ["--user", "u1", "--session", "s1"]);
  const { tools } = await client.listTools();
  assert.ok(tools.length >= 14);
  assert.ok(tools.every((t) => !(t.inputSchema.required ?? []).includes("session_id")), "the bound session fills it in");
  const created = await client.callTool({ name: "create_long_term_memories", arguments: { memories: [{ text: "Ana is allergic to peanuts" }] } });
  assert.equal(created.isError, false);
  const found = await client.callTool({ name: "search_long_term_memory", arguments: { text: "peanuts", search_mode: "keyword" } });
  assert.equal(found.structuredContent.memories[0].user_id, "u1");
  assert.equal((await client.callTool({ name: "set_working_memory", arguments: { messages: [{ role: "user", content: "hello" }] } })).isError, false);
  const other = await client.callTool({ name: "get_working_memory", arguments: { session_id: "s2" } });
  assert.equal(other.structuredContent.error.code, "invalid_input", "another session than the bound one");
  const bad = await client.callTool({ name: "fits_context", arguments: { messages: "nope" } });
  assert.equal(bad.isError, true);
  assert.equal(bad.structuredContent.error.code, "invalid_input");
  await assert.rejects(client.callTool({ name: "nope", arguments: {} }), /unknown tool/);
  await client.close();
  // The write is on disk: a Memory opened on the store finds it.
  const m = await Memory.open({ store: new FileStore(dir) });
  const r = await m.longTerm.search({ text: "peanuts", mode: "keyword" });
  assert.equal(r.memories[0].text, "Ana is allergic to peanuts");
  m.free();
});

test("stdout carries only JSON-RPC lines, even for garbage and oversized input", async () => {
  const dir = join(tmp, "b");
  const child = spawn(process.execPath, [CLI, "mcp", "--store", dir], { stdio: ["pipe", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  const lines = [
    JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } }),
    JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
    "this is not json",
    JSON.stringify([{ jsonrpc: "2.0", id: 2, method: "ping" }]),
    JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "get_current_datetime", arguments: {} } }),
    "x".repeat(1_100_000),
    JSON.stringify({ jsonrpc: "2.0", id: 4, method: "ping" }),
  ];
  child.stdin.end(lines.join("\n") + "\n");
  const code = await new Promise((r) => child.on("exit", r));
  assert.equal(code, 0);
  const answers = out.trim().split("\n").map((l) => JSON.parse(l));
  assert.deepEqual(answers.map((a) => a.id ?? null), [1, null, null, 3, null, 4]);
  assert.equal(answers[1].error.code, -32700);
  assert.equal(answers[2].error.code, -32600);
  assert.equal(answers[3].result.isError, false);
  assert.equal(answers[4].error.code, -32600);
});

test("edgemem mcp needs a local store: --url is a usage error (exit 2)", async () => {
  const child = spawn(process.execPath, [CLI, "mcp", "--url", "http://127.0.0.1:9", "--token", "t"], { stdio: ["pipe", "pipe", "pipe"] });
  let err = "";
  child.stderr.on("data", (d) => (err += d));
  child.stdin.end();
  assert.equal(await new Promise((r) => child.on("exit", r)), 2);
  assert.match(err, /--store/);
});
