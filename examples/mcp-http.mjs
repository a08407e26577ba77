// edgemem's Worker as an MCP server over Streamable HTTP:
// `make demo` in one shell, then `node examples/mcp-http.mjs` in another
// (EDGEMEM_URL and EDGEMEM_TOKEN for a deployed Worker with auth on).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const base = process.env.EDGEMEM_URL ?? "http://127.0.0.1:8787/";
const token = process.env.EDGEMEM_TOKEN;
const transport = new StreamableHTTPClientTransport(new URL("mcp?user_id=ana&session_id=trip", base), {
  requestInit: { headers: token ? { authorization: `Bearer ${token}` } : {} },
});
const client = new Client({ name: "example", version: "1.0.0" });
await client.connect(transport);
console.log("session", transport.sessionId);
await client.callTool({ name: "set_working_memory", arguments: { messages: [{ role: "user", content: "Book me to Lisbon, window seat please." }] } });
await client.callTool({ name: "add_memory_to_working_memory", arguments: { text: "Ana prefers window seats." } });
const prompt = await client.callTool({ name: "memory_prompt", arguments: { query: "Which seat should I book?" } });
console.log(JSON.stringify(prompt.structuredContent.messages, null, 2));
await transport.terminateSession();
await client.close();
