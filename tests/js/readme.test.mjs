// Doc tests (issue 18, point 5): every fenced `js`/`ts` block of README.md and
// of the npm README runs against the built package. The blocks of one README
// form one program, in order (later examples continue earlier ones), with
// their imports merged. A block that is not meant to run says so in its info
// string: ```js no-run.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = fileURLToPath(new URL("../../", import.meta.url));
const READMES = ["README.md", "pkg-template/README.md"];

/** Fenced blocks as `{lang, flags, code, line}`. */
export function fencedBlocks(markdown) {
  const blocks = [];
  const lines = markdown.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const open = lines[i].match(/^```(\w+)?\s*(.*)$/);
    if (!open) continue;
    const start = i;
    const body = [];
    for (i++; i < lines.length && !lines[i].startsWith("```"); i++) body.push(lines[i]);
    blocks.push({ lang: open[1] ?? "", flags: open[2].split(/\s+/).filter(Boolean), code: body.join("\n"), line: start + 1 });
  }
  return blocks;
}

/** One ES module from the runnable blocks: named imports merged per module, bodies in order. */
export function program(blocks, file) {
  const imports = new Map();
  const bodies = [];
  for (const b of blocks) {
    const rest = [];
    for (const line of b.code.split("\n")) {
      const m = line.match(/^import\s*\{([^}]*)\}\s*from\s*["']([^"']+)["'];?\s*$/);
      if (!m) {
        assert.ok(!/^import\s/.test(line), `${file}:${b.line}: only named imports on one line are supported in doc blocks: ${line}`);
        rest.push(line);
        continue;
      }
      const names = imports.get(m[2]) ?? new Set();
      for (const n of m[1].split(",").map((s) => s.trim()).filter(Boolean)) names.add(n);
      imports.set(m[2], names);
    }
    bodies.push(`// ${file}:${b.line}\n${rest.join("\n")}`);
  }
  const head = [...imports].map(([from, names]) => `import { ${[...names].join(", ")} } from ${JSON.stringify(from)};`);
  return `${head.join("\n")}\n${bodies.join("\n")}\n`;
}

for (const file of READMES) {
  test(`every js/ts block of ${file} runs against the built package`, async () => {
    const blocks = fencedBlocks(readFileSync(`${root}${file}`, "utf8")).filter((b) => ["js", "ts", "javascript", "mjs"].includes(b.lang));
    const runnable = blocks.filter((b) => !b.flags.includes("no-run"));
    assert.ok(runnable.length > 0, `${file} has runnable blocks`);
    for (const b of runnable) assert.notEqual(b.lang, "ts", `${file}:${b.line}: a ts block must be plain JS to run, or be marked no-run`);
    // Written inside the project so that `edgemem` resolves to the built package.
    const dir = `${root}target/doctest`;
    mkdirSync(dir, { recursive: true });
    const path = `${dir}/${file.replaceAll("/", "_")}.mjs`;
    writeFileSync(path, program(runnable, file));
    await import(pathToFileURL(path).href);
  });
}

test("the doc-test reader finds blocks, flags and merges imports", () => {
  const md = "a\n```js\nimport { A } from \"x\";\nconst a = 1;\n```\n```js no-run\nnope\n```\n```sh\nls\n```\n```js\nimport { B, A } from \"x\";\n```\n";
  const blocks = fencedBlocks(md);
  assert.deepEqual(blocks.map((b) => [b.lang, b.flags]), [["js", []], ["js", ["no-run"]], ["sh", []], ["js", []]]);
  const src = program([blocks[0], blocks[3]], "t.md");
  assert.match(src, /^import \{ A, B \} from "x";/);
  assert.ok(!src.includes("nope"));
});
