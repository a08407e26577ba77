// Tokenizer benchmark: edgemem against gpt-tokenizer 4.0.0, js-tiktoken
// 1.0.21 and tiktoken 1.0.22 (npm wasm), same inputs, one process run, with
// the JS↔wasm crossing included. Also parity against tiktoken and the sizes.
//
//   make pkg && node benches/tokenizer.mjs
import { performance } from "node:perf_hooks";
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { get_encoding } from "tiktoken";
import { getEncoding } from "js-tiktoken";
import * as gptO200k from "gpt-tokenizer/encoding/o200k_base";
import * as gptCl100k from "gpt-tokenizer/encoding/cl100k_base";
import { Tokenizer } from "edgemem";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const CORPUS = join(ROOT, "../shared/data/tokens");
const MIN_SECONDS = Number(process.env.TOKENIZER_MIN_SECONDS ?? 0.4);

const files = (dir) => readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? files(join(dir, f)) : [join(dir, f)]));
const corpus = files(CORPUS).sort().map((p) => readFileSync(p, "utf8"));
const bytes = (texts) => texts.reduce((n, t) => n + Buffer.byteLength(t), 0);
const doc = readFileSync(join(CORPUS, "python/smtplib.py.txt"), "utf8");
const inputs = [
  { label: "13 B", texts: ["Hello, world!"] },
  { label: "1 KB", texts: [Buffer.from(doc).subarray(0, 1024).toString("utf8").replace(/\uFFFD$/, "")] },
  { label: "45 KB", texts: [doc] },
  { label: `corpus (${corpus.length} files, ${(bytes(corpus) / 1e6).toFixed(2)} MB)`, texts: corpus },
];

function peers(name) {
  const gpt = name === "o200k_base" ? gptO200k : gptCl100k;
  const js = getEncoding(name);
  const tk = get_encoding(name);
  return [
    { name: "gpt-tokenizer 4.0.0", count: (t) => gpt.countTokens(t), encode: (t) => gpt.encode(t, { disallowedSpecial: new Set() }) },
    { name: "js-tiktoken 1.0.21", count: (t) => js.encode(t, [], []).length, encode: (t) => js.encode(t, [], []) },
    { name: "tiktoken 1.0.22 (wasm)", count: (t) => tk.encode_ordinary(t).length, encode: (t) => tk.encode_ordinary(t) },
  ];
}

function rate(fn, texts) {
  const total = bytes(texts);
  let rounds = 0;
  const t0 = performance.now();
  let elapsed = 0;
  do {
    for (const t of texts) fn(t);
    rounds++;
    elapsed = (performance.now() - t0) / 1000;
  } while (elapsed < MIN_SECONDS);
  return (total * rounds) / elapsed / 1e6;
}

const mismatches = (a, b) => a.length !== b.length || a.some((x, i) => x !== b[i]);

for (const name of ["o200k_base", "cl100k_base"]) {
  const ours = await Tokenizer.load(name);
  const list = [{ name: "edgemem", count: (t) => ours.count(t), encode: (t) => ours.encode(t) }, ...peers(name)];
  const reference = list[3];
  console.log(`\n### ${name}\n`);
  console.log("Parity with tiktoken (files whose token ids differ, of " + corpus.length + "):\n");
  for (const p of list.slice(0, 3)) {
    let differ = 0;
    for (const t of corpus) {
      let got;
      try {
        got = p.encode(t);
      } catch {
        got = [];
      }
      if (mismatches(Array.from(got), Array.from(reference.encode(t)))) differ++;
    }
    console.log(`- ${p.name}: ${differ}`);
  }
  for (const mode of ["count", "encode"]) {
    console.log(`\n${mode} (MB/s):\n`);
    console.log(`| input | ${list.map((p) => p.name).join(" | ")} | edgemem vs fastest peer |`);
    console.log(`|---|${list.map(() => "---:").join("|")}|---:|`);
    for (const input of inputs) {
      const rates = list.map((p) => rate(p[mode], input.texts));
      const best = Math.max(...rates.slice(1));
      console.log(`| ${input.label} | ${rates.map((r) => r.toFixed(1)).join(" | ")} | ${(rates[0] / best).toFixed(2)}× |`);
    }
  }
}

// Sizes: gzip bytes shipped per encoding, and memory after loading one, each
// peer measured in a fresh process.
console.log("\n### Size and memory (o200k_base)\n");
const gz = (p) => gzipSync(readFileSync(p), { level: 9 }).length;
const pkg = join(ROOT, "pkg");
const nm = join(ROOT, "node_modules");
const sizes = {
  edgemem: gz(join(pkg, "edgemem_bg.wasm")) + gz(join(pkg, "encodings/o200k_base.bin")),
  "gpt-tokenizer 4.0.0": gz(join(nm, "gpt-tokenizer/esm/bpeRanks/o200k_base.js")),
  "js-tiktoken 1.0.21": gz(join(nm, "js-tiktoken/dist/ranks/o200k_base.js")),
  "tiktoken 1.0.22 (wasm)": gz(join(nm, "tiktoken/tiktoken_bg.wasm")),
};
const loaders = {
  edgemem: `const { Tokenizer } = await import("edgemem"); globalThis.t = await Tokenizer.load("o200k_base"); t.count("warm up");`,
  "gpt-tokenizer 4.0.0": `const m = await import("gpt-tokenizer/encoding/o200k_base"); m.countTokens("warm up");`,
  "js-tiktoken 1.0.21": `const { getEncoding } = await import("js-tiktoken"); globalThis.t = getEncoding("o200k_base"); t.encode("warm up");`,
  "tiktoken 1.0.22 (wasm)": `const { get_encoding } = await import("tiktoken"); globalThis.t = get_encoding("o200k_base"); t.encode("warm up");`,
};
console.log("| library | gzip bytes shipped for o200k | RSS after loading, MB |");
console.log("|---|---:|---:|");
for (const [lib, code] of Object.entries(loaders)) {
  const script = `const before = process.memoryUsage().rss; ${code} globalThis.gc?.(); console.log(((process.memoryUsage().rss - before) / 1048576).toFixed(1));`;
  const mb = execFileSync(process.execPath, ["--expose-gc", "--input-type=module", "-e", script], { cwd: ROOT }).toString().trim();
  console.log(`| ${lib} | ${sizes[lib].toLocaleString("en")} | ${mb} |`);
}
