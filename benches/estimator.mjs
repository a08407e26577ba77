// Calibrates and reports the token estimator (src/core/budget: tokens ≈
// A·ASCII bytes + B·non-ASCII chars) against the exact encodings on the
// shared corpus. The constants in the code are the o200k fit printed here.
//
//   make pkg && node benches/estimator.mjs
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Tokenizer } from "edgemem";

const dir = fileURLToPath(new URL("../../shared/data/tokens/", import.meta.url));
const files = (d) => readdirSync(d).flatMap((f) => (statSync(join(d, f)).isDirectory() ? files(join(d, f)) : [join(d, f)]));
const SHIPPED = [0.235, 0.75];

function errors(rows, [A, B]) {
  let rel = 0, abs = 0, total = 0, worst = 0;
  for (const [a, o, y] of rows) {
    const e = Math.ceil(A * a + B * o);
    rel += Math.abs(e - y) / Math.max(y, 1);
    abs += Math.abs(e - y);
    total += y;
    worst = Math.max(worst, Math.abs(e - y) / Math.max(y, 1));
  }
  return { mean: rel / rows.length, total: abs / total, worst };
}

console.log("| encoding | A | B | mean per-file error | error on the whole corpus | worst file |");
console.log("|---|---:|---:|---:|---:|---:|");
for (const enc of ["o200k_base", "cl100k_base"]) {
  const t = await Tokenizer.load(enc);
  const rows = files(dir).map((p) => {
    const s = readFileSync(p, "utf8");
    let a = 0, o = 0;
    for (const c of s) c.codePointAt(0) < 128 ? a++ : o++;
    return [a, o, t.count(s)];
  });
  let best = null;
  for (let A = 0.15; A <= 0.4; A += 0.005) {
    for (let B = 0.2; B <= 2.5; B += 0.05) {
      const e = errors(rows, [A, B]);
      if (!best || e.mean < best.e.mean) best = { A, B, e };
    }
  }
  const pct = (x) => `${(x * 100).toFixed(1)}%`;
  const s = errors(rows, SHIPPED);
  console.log(`| ${enc} (shipped constants) | ${SHIPPED[0]} | ${SHIPPED[1]} | ${pct(s.mean)} | ${pct(s.total)} | ${pct(s.worst)} |`);
  console.log(`| ${enc} (best fit) | ${best.A.toFixed(3)} | ${best.B.toFixed(2)} | ${pct(best.e.mean)} | ${pct(best.e.total)} | ${pct(best.e.worst)} |`);
}
