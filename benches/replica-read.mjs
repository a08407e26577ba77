// Reads a published replica out of a persisted KV directory with the npm
// package's `Memory.openPublished`, in a process of its own so that its wasm
// memory is its own (wasm memory never shrinks). Prints one JSON line:
// time to open, wasm memory before and after, records in the replica.
//
//   node benches/replica-read.mjs <kv persist dir> <key prefix>
// (benches/shard-export.mjs runs it on what wrangler dev left.)
import { Miniflare } from "miniflare";
import { KVStore, Memory, wasmMemoryBytes } from "edgemem";

const [dir, keyPrefix] = process.argv.slice(2);
const mf = new Miniflare({ modules: true, script: "export default { fetch() { return new Response(null) } }", kvNamespaces: { SNAPSHOTS: "edgemem-snapshots" }, kvPersist: dir });
try {
  const kv = await mf.getKVNamespace("SNAPSHOTS");
  const before = wasmMemoryBytes();
  const t = performance.now();
  const replica = await Memory.openPublished(new KVStore(kv), { keyPrefix });
  const ms = performance.now() - t;
  const after = wasmMemoryBytes();
  const ids = new Set();
  for await (const l of replica.export()) if (l.startsWith('{"type":"memory"')) ids.add(/"record":\{"id":"([^"]+)"/.exec(l)[1]);
  console.log(JSON.stringify({ ms, records: ids.size, wasm_before: before, wasm_after: after }));
} finally {
  await mf.dispose();
}
