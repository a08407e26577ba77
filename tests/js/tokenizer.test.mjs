// Token parity of the built package with tiktoken (the npm wasm build of
// OpenAI's tiktoken, 1.0.22) on every file of the shared corpus, for both
// encodings, plus JS-specific inputs (lone surrogates) and bad input.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { get_encoding } from "tiktoken";
import { Tokenizer, EdgememError } from "edgemem";

const CORPUS = fileURLToPath(new URL("../../../shared/data/tokens/", import.meta.url));

function files(dir) {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? files(p) : [p];
  });
}

for (const name of ["cl100k_base", "o200k_base"]) {
  test(`${name}: identical token ids to tiktoken on every corpus file`, async () => {
    const ours = await Tokenizer.load(name);
    const theirs = get_encoding(name);
    const all = files(CORPUS).sort();
    assert.ok(all.length > 150, `expected the shared corpus, found ${all.length} files`);
    let tokens = 0;
    try {
      for (const path of all) {
        const text = readFileSync(path, "utf8");
        const want = theirs.encode_ordinary(text);
        const got = ours.encode(text);
        assert.equal(got.length, want.length, path);
        assert.ok(got.every((t, i) => t === want[i]), `${path}: first difference at ${got.findIndex((t, i) => t !== want[i])}`);
        assert.equal(ours.count(text), want.length);
        assert.equal(ours.decode(got), text);
        tokens += got.length;
      }
    } finally {
      theirs.free();
    }
    assert.ok(tokens > 100_000);
  });
}

test("JS strings tiktoken cannot see as UTF-8: lone surrogates, specials", async () => {
  const ours = await Tokenizer.load("o200k_base");
  const theirs = get_encoding("o200k_base");
  try {
    for (const text of ["\uD800", "a\uDC00b", "\uD83D", "😀\uD83D😀", "<|endoftext|>", "x<|endofprompt|>y"]) {
      assert.deepEqual([...ours.encode(text)], [...theirs.encode_ordinary(text)], JSON.stringify(text));
    }
    assert.deepEqual([...ours.encode("x<|endoftext|>y", { allowSpecial: true })], [...theirs.encode("x<|endoftext|>y", "all")]);
  } finally {
    theirs.free();
  }
});

test("bad input gets typed errors", async () => {
  await assert.rejects(Tokenizer.load("p50k_base"), (e) => e instanceof EdgememError && e.code === "invalid_input");
  const t = await Tokenizer.load("cl100k_base");
  assert.throws(() => t.count(42), (e) => e.code === "invalid_input");
  assert.throws(() => t.count("x".repeat(16 * 1024 * 1024 + 1)), (e) => e.code === "payload_too_large");
  assert.throws(() => t.decode([4294967295]), (e) => e.code === "invalid_input");
  assert.throws(() => Tokenizer.fromAsset("o200k_base", new Uint8Array(100)), (e) => e.code === "invalid_input");
  const cl = readFileSync(new URL("../../pkg/encodings/cl100k_base.bin", import.meta.url));
  assert.throws(() => Tokenizer.fromAsset("o200k_base", cl), (e) => e.code === "invalid_input", "a cl100k asset is not o200k");
});
