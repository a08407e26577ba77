// The sharding benchmarks' corpus and percentile: a fixed word list, a
// seeded xorshift generator (the same sequence in every run), sentences
// drawn from it.
export const WORDS = "otter quay granite tea lisbon kayak sourdough piano marathon allergy peanut invoice rent garden flight vegan train sister coffee budget kitchen paint blue bicycle".split(" ");

let seed = 0x2545f491;
/** The next number below `k`. */
export const next = (k) => {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return (seed >>> 0) % k;
};
/** `n` words from the list. */
export const sentence = (n) => Array.from({ length: n }, () => WORDS[next(WORDS.length)]).join(" ");

/** The `p`th percentile of `xs` (NaN for none). */
export function pct(xs, p) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] : NaN;
}
