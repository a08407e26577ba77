// Removes the `name` custom section from a wasm module, in place, keeping
// a copy of the named module beside it for reading stack traces.
//
// Usage: node scripts/strip-names.mjs <module.wasm> <named-copy.wasm>
//
// The name section only turns `wasm-function[1234]` into a Rust path in a
// stack trace; a panic's message and location come from the code itself.
// The Worker ships without it (about 88 KB gzip) and the build keeps the
// named copy, whose function indices are the same, to look frames up in.
// Every other section is copied byte for byte.
import { readFileSync, writeFileSync } from "node:fs";

const [input, named] = process.argv.slice(2);
if (!input || !named) {
  console.error("usage: node scripts/strip-names.mjs <module.wasm> <named-copy.wasm>");
  process.exit(2);
}
const bytes = readFileSync(input);
const magic = Buffer.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]);
if (bytes.length < 8 || !bytes.subarray(0, 8).equals(magic)) throw new Error(`${input} is not a wasm module (version 1)`);

/** An unsigned LEB128 at `at`: [value, next offset]. */
function leb(at) {
  let value = 0;
  let shift = 0;
  for (let i = 0; i < 5; i++) {
    if (at >= bytes.length) break;
    const b = bytes[at++];
    value += (b & 0x7f) * 2 ** shift;
    if ((b & 0x80) === 0) return [value, at];
    shift += 7;
  }
  throw new Error(`${input}: a bad LEB128 at byte ${at}`);
}

const kept = [bytes.subarray(0, 8)];
let at = 8;
let dropped = 0;
while (at < bytes.length) {
  const start = at;
  const id = bytes[at++];
  const [size, body] = leb(at);
  const end = body + size;
  if (end > bytes.length) throw new Error(`${input}: section ${id} at byte ${start} runs past the end`);
  let isName = false;
  if (id === 0) {
    const [len, nameAt] = leb(body);
    isName = bytes.subarray(nameAt, nameAt + len).toString("utf8") === "name";
  }
  if (isName) dropped += end - start;
  else kept.push(bytes.subarray(start, end));
  at = end;
}
if (dropped > 0) {
  writeFileSync(named, bytes);
  writeFileSync(input, Buffer.concat(kept));
}
console.log(dropped > 0 ? `strip-names: ${input} without its name section (${dropped} bytes); named copy ${named}` : `strip-names: ${input} has no name section`);
