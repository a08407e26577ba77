// Types tell the truth (issue 18, point 3): every public class is constructed
// and every public function and method is called with only the arguments
// `index.d.ts` marks as required. The list of calls is read from the
// declarations with the TypeScript compiler, so a new optional field or a new
// method is covered without anyone remembering to add it; an option declared
// optional that the runtime requires fails here as `invalid_input`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import "fake-indexeddb/auto";
import * as edgemem from "edgemem";

const pkgDir = fileURLToPath(new URL("../../pkg/", import.meta.url));
const dtsPath = `${pkgDir}index.d.ts`;
const DIM = 8;

/** Required parameters and properties are filled by name, then by type. */
const BY_NAME = {
  sessionId: "s1", agentId: "agent-1", accountId: "acct-a", id: "x-1", key: "intent-1", text: "The user prefers metric units.",
  tool: "search", glob: "tip*", code: "USD", asset: "USD", role: "user", content: "Hello there", name: "greeting",
  model: "gpt-4o", amount: "1.00", debit_account: "acct-a", credit_account: "acct-b", agent_id: "agent-1", kind: "note",
  message: "boom", prefix: "", scale: 2, version: 1, priority: 5, max_tokens: 4096, contextWindowMax: 8000, windowTokens: 8000,
  per_agent_max: 10, workPointsMax: 100, k: 3, since: "2026-01-01T00:00:00Z", amounts: "1.50",
};

/** Calls whose required values cannot be guessed from names and types. */
const ARGS = {
  "Tokenizer.fromAsset": () => ["o200k_base", readFileSync(`${pkgDir}encodings/o200k_base.bin`)],
  "Tokenizer.checkFit": () => [JSON.stringify({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }] })],
  "VectorIndex.deserialize": () => [new edgemem.VectorIndex({ dim: DIM }).serialize()],
  "Memory.openPublished": async () => {
    const target = new edgemem.MemoryStore();
    const m = await edgemem.Memory.open();
    await m.publishSnapshot(target);
    m.free();
    return [target];
  },
  "Memory.resolveFunctionCall": () => ["get_current_datetime", {}],
  "Memory.request": () => ["GET", "/v1/health"],
  // A real export (of an empty namespace): the text a sample string is not.
  "Memory.import": async () => {
    const m = await edgemem.Memory.open();
    const lines = [];
    for await (const l of m.export()) lines.push(l);
    m.free();
    return [lines];
  },
  "Memory.publishSnapshot": () => [new edgemem.MemoryStore()],
  // A real AES-GCM key: the runtime checks the algorithm, which the type (a CryptoKey's shape) cannot say.
  "Memory.rotateKey": async () => [await crypto.subtle.generateKey({ name: "AES-GCM", length: 256 }, false, ["encrypt", "decrypt"]), "surface-key"],
  "EdgememError.constructor": () => ["invalid_input", "a message"],
  "DurableObjectStore.constructor": () => [fakeDurableObjectStorage()],
  "KVStore.constructor": () => [fakeKv()],
  "ExactNumber.constructor": () => ["1234.567890123456789"],
  parseExact: () => ['{"price":1234.567890123456789}'],
};

function fakeDurableObjectStorage() {
  const map = new Map();
  return {
    async get(k) { return map.get(k); },
    async put(k, v) { map.set(k, v); },
    async delete(k) { return map.delete(k); },
    async list({ prefix }) { return new Map([...map].filter(([k]) => k.startsWith(prefix))); },
  };
}

function fakeKv() {
  const map = new Map();
  return {
    async get(k) { return map.has(k) ? map.get(k).buffer : null; },
    async put(k, v) { map.set(k, new Uint8Array(v)); },
    async delete(k) { map.delete(k); },
    async list({ prefix }) { return { keys: [...map.keys()].filter((k) => k.startsWith(prefix)).map((name) => ({ name })), list_complete: true }; },
  };
}

/** Reads the public surface: exported classes (constructor, statics, methods) and functions, in declaration order. */
function readSurface() {
  const program = ts.createProgram([dtsPath], { strict: true, noEmit: true, target: ts.ScriptTarget.ES2022, lib: ["lib.es2022.d.ts"], types: [] });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(dtsPath);
  const exported = (n) => n.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
  const callables = [];
  for (const node of source.statements) {
    if (ts.isClassDeclaration(node) && exported(node)) {
      const cls = node.name.text;
      for (const m of node.members) {
        const priv = m.modifiers?.some((x) => x.kind === ts.SyntaxKind.PrivateKeyword);
        if (ts.isConstructorDeclaration(m) && !priv) callables.push({ owner: cls, name: "constructor", kind: "constructor", params: m.parameters });
        if (ts.isMethodDeclaration(m) && !priv) {
          const isStatic = m.modifiers?.some((x) => x.kind === ts.SyntaxKind.StaticKeyword);
          callables.push({ owner: cls, name: m.name.text, kind: isStatic ? "static" : "method", params: m.parameters });
        }
      }
    }
    if (ts.isFunctionDeclaration(node) && exported(node)) callables.push({ owner: null, name: node.name.text, kind: "function", params: node.parameters });
  }
  return { checker, callables };
}

/** A value of `type` holding only its required parts. */
function sample(checker, type, name, depth = 0) {
  if (depth > 6) throw new Error(`sample too deep at ${name}`);
  if (type.isUnion()) {
    const members = type.types.filter((t) => !(t.flags & (ts.TypeFlags.Undefined | ts.TypeFlags.Null)));
    const lit = members.find((t) => t.isStringLiteral() || t.isNumberLiteral());
    if (lit && members.every((t) => t.isLiteral() || t.flags & ts.TypeFlags.BooleanLiteral)) return lit.value;
    if (members.every((t) => t.flags & ts.TypeFlags.BooleanLiteral)) return true;
    // A primitive where one is allowed (`string | Date`, JsonValue); else
    // either-or unions: the first alternative, with only its required parts.
    const primitive = members.find((t) => t.flags & (ts.TypeFlags.String | ts.TypeFlags.Number));
    if (primitive) return sample(checker, primitive, name, depth + 1);
    const objects = members.filter((t) => t.flags & ts.TypeFlags.Object || t.isIntersection());
    return sample(checker, objects[0] ?? members[0], name, depth + 1);
  }
  if (type.isStringLiteral() || type.isNumberLiteral()) return type.value;
  if (type.flags & ts.TypeFlags.String) return typeof BY_NAME[name] === "string" ? BY_NAME[name] : "x";
  if (type.flags & ts.TypeFlags.Number) return typeof BY_NAME[name] === "number" ? BY_NAME[name] : 1;
  if (type.flags & (ts.TypeFlags.Boolean | ts.TypeFlags.BooleanLiteral)) return true;
  if (type.flags & ts.TypeFlags.BigInt) return 1n;
  if (type.flags & (ts.TypeFlags.Unknown | ts.TypeFlags.Any | ts.TypeFlags.NonPrimitive | ts.TypeFlags.TypeParameter)) return { ok: true };
  const symbolName = type.getSymbol()?.getName();
  if (symbolName === "Float32Array") return new Float32Array(DIM).fill(0.5);
  if (symbolName === "Uint32Array") return Uint32Array.of(1);
  if (symbolName === "Uint8Array") return new Uint8Array([1, 2, 3]);
  // One 128-bit id (two words), one amount of minor units.
  if (symbolName === "BigUint64Array") return BigUint64Array.of(1n, 0n);
  if (symbolName === "BigInt64Array") return BigInt64Array.of(1n);
  if (checker.isArrayType(type)) return [sample(checker, checker.getTypeArguments(type)[0], name, depth + 1)];
  if (type.getCallSignatures().length > 0) return () => ({ ok: true });
  if (type.flags & ts.TypeFlags.Object || type.isIntersection()) {
    const out = {};
    for (const p of checker.getPropertiesOfType(type)) {
      if (p.flags & ts.SymbolFlags.Optional) continue;
      const decl = p.valueDeclaration ?? p.declarations?.[0];
      out[p.name] = sample(checker, checker.getTypeOfSymbolAtLocation(p, decl), p.name, depth + 1);
    }
    return out;
  }
  throw new Error(`no sample for ${name}: ${checker.typeToString(type)}`);
}

async function argsFor(checker, c) {
  const special = ARGS[`${c.owner ?? ""}${c.owner ? "." : ""}${c.name}`];
  if (special) return await special();
  const args = [];
  for (const p of c.params) {
    if (p.questionToken || p.initializer || p.dotDotDotToken) break;
    args.push(sample(checker, checker.getTypeAtLocation(p), p.name.getText()));
  }
  return args;
}

/** Instances to call methods on, made through the public API itself. */
async function instances() {
  const memory = await edgemem.Memory.open();
  // Accounts 0 and 1, so that sampled account indices name real accounts.
  await memory.ledger.createAsset("USDC", 6);
  await memory.ledger.createAccount({ id: "a0", asset: "USDC" });
  await memory.ledger.createAccount({ id: "a1", asset: "USDC" });
  return {
    Memory: memory,
    Ledger: memory.ledger,
    LongTermMemory: memory.longTerm,
    Episodes: memory.episodes,
    AgentConfig: memory.agent("agent-1"),
    ToolCache: memory.toolCache("s1"),
    Tokenizer: await edgemem.Tokenizer.load("o200k_base"),
    VectorIndex: new edgemem.VectorIndex({ dim: DIM }),
    MemoryStore: new edgemem.MemoryStore(),
    IndexedDBStore: await edgemem.IndexedDBStore.open("surface-test"),
    DurableObjectStore: new edgemem.DurableObjectStore(fakeDurableObjectStorage()),
    KVStore: new edgemem.KVStore(fakeKv()),
    EdgememError: new edgemem.EdgememError("invalid_input", "x"),
    ExactNumber: new edgemem.ExactNumber("1.5"),
    ServiceCache: memory.services,
    Schemas: memory.schemas,
    Profiles: memory.profiles,
    Decisions: memory.decisions,
    Consent: memory.consent,
    Privacy: memory.privacy,
  };
}

/** `null` if the call is acceptable: success, or a typed error that is not about the arguments. */
function verdict(err) {
  if (err === undefined) return null;
  if (err instanceof edgemem.EdgememError && err.code !== "invalid_input" && err.code !== "invalid_json") return null;
  return `${err?.name}${err?.code ? ` (${err.code})` : ""}: ${err?.message ?? err}`;
}

test("every public constructor, function and method accepts only its required arguments", async () => {
  const { checker, callables } = readSurface();
  assert.ok(callables.length > 60, `read ${callables.length} callables from index.d.ts`);
  const objects = await instances();
  const failures = [];
  // Methods that end an object's life run after every other call.
  const last = (c) => (c.name === "free" || c.name === "close" ? 1 : 0);
  const ordered = [...callables].sort((a, b) => last(a) - last(b));
  let called = 0;
  for (const c of ordered) {
    const label = `${c.owner ? `${c.owner}.` : ""}${c.name}`;
    let args;
    try {
      args = await argsFor(checker, c);
    } catch (e) {
      failures.push(`${label}: ${e.message}`);
      continue;
    }
    let err;
    try {
      if (c.kind === "constructor") new edgemem[c.owner](...args);
      else if (c.kind === "static") await edgemem[c.owner][c.name](...args);
      else if (c.kind === "function") await edgemem[c.name](...args);
      else {
        const self = objects[c.owner];
        if (!self) throw new Error(`no instance of ${c.owner}: add one to instances()`);
        if (typeof self[c.name] !== "function") throw new Error(`${label} is declared but not a function at runtime`);
        await self[c.name](...args);
      }
      called++;
    } catch (e) {
      err = e;
    }
    const bad = verdict(err);
    if (bad) failures.push(`${label}(${args.map((a) => JSON.stringify(a, (_, v) => (typeof v === "bigint" ? `${v}n` : v))?.slice(0, 60)).join(", ")}) -> ${bad}`);
  }
  assert.deepEqual(failures, [], `${failures.length} declared calls fail at runtime`);
  assert.ok(called > 60);
});

test("VectorIndex fills every optional field with the default index.d.ts documents", () => {
  const index = new edgemem.VectorIndex({ dim: DIM });
  const stats = index.stats();
  const dts = readFileSync(dtsPath, "utf8");
  const block = dts.slice(dts.indexOf("export interface VectorIndexOptions"), dts.indexOf("export class VectorIndex"));
  const documented = (field) => {
    const m = block.match(new RegExp(`Default \`?([0-9,]+|"\\w+")[^\\n]*\\n\\s*${field}\\?`));
    assert.ok(m, `index.d.ts documents a default for ${field}`);
    return m[1].startsWith('"') ? JSON.parse(m[1]) : Number(m[1].replaceAll(",", ""));
  };
  assert.equal(stats.config.metric, documented("metric"));
  assert.equal(stats.config.quantization, documented("quantization"));
  assert.equal(stats.config.sealPoints, documented("sealPoints"));
  assert.equal(stats.config.efConstruction, documented("efConstruction"));
  assert.equal(stats.config.efSearch, documented("efSearch"));
  assert.equal(stats.config.linksMax, documented("linksMax"));
  assert.equal(stats.config.seed, documented("seed"));
});
