// edgemem as an MCP server over stdio, driven by the official MCP client:
// `node examples/mcp-stdio.mjs`. The server is `edgemem mcp --store DIR`,
// the same command a desktop client (Claude Desktop, an IDE) runs.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const cli = fileURLToPath(new URL("../pkg/cli.js", import.meta.url));
const store = mkdtempSync(join(tmpdir(), "edgemem-mcp-example-"));
const transport = new StdioClientTransport({ command: process.execPath, args: [cli, "mcp", "--store", store, "--user", "ana", "--session", "trip"] });
const client = new Client({ name: "example", version: "1.0.0" });
await client.connect(transport);

const { tools } = await client.listTools();
console.log(`${tools.length} tools:`, tools.map((t) => t.name).join(", "));
await client.callTool({ name: "create_long_term_memories", arguments: { memories: [{ text: "Ana prefers window seats on long flights." }] } });
const found = await client.callTool({ name: "search_long_term_memory", arguments: { text: "which seat does Ana like?", search_mode: "hybrid" } });
console.log("recalled:", found.structuredContent.memories.map((m) => m.text));
const bad = await client.callTool({ name: "ledger_transfer", arguments: { id: "t1", debit_account: "a", credit_account: "b", amount: 12.5 } });
console.log("a float amount is refused:", bad.content[0].text);
await client.close();
rmSync(store, { recursive: true, force: true });
