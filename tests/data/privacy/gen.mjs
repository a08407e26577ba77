// Generates labelled.jsonl: realistic chat and agent sentences with labelled
// PII and secrets, plus look-alikes that must survive both filters.
// Deterministic (seeded PRNG): `node tests/data/privacy/gen.mjs` rewrites the
// same file. Every value is fake: test card numbers, example.* domains,
// fictional phone ranges, documentation IP ranges, IBANs with computed check
// digits over invented account numbers, random tokens of the right shape.
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

let seed = 0x5eed1234;
function rand() {
  // mulberry32
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const int = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1));
const pick = (xs) => xs[Math.floor(rand() * xs.length)];
const digits = (n) => Array.from({ length: n }, () => int(0, 9)).join("");
const from = (alphabet, n) => Array.from({ length: n }, () => alphabet[int(0, alphabet.length - 1)]).join("");
const UP = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const LO = "abcdefghijklmnopqrstuvwxyz";
const DI = "0123456789";
const B62 = UP + LO + DI;
const B64URL = B62 + "-_";
// Random base62 that mixes classes (as real keys do).
function b62(n) {
  for (;;) {
    const s = from(B62, n);
    if (/[0-9]/.test(s) && /[a-z]/.test(s) && /[A-Z]/.test(s)) return s;
  }
}
const b64url = (buf) => Buffer.from(buf).toString("base64url");

// ---------- value generators ----------
const FIRST = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "mallory", "oscar", "peggy", "trent", "victor", "wendy", "maria.garcia", "j.smith", "li.wei", "noor", "sven", "yuki"];
const DOMAINS = ["example.com", "example.org", "example.net", "mail.example.com", "corp.example.co.uk", "example.de", "support.example.io"];
function email() {
  const v = pick([
    () => `${pick(FIRST)}@${pick(DOMAINS)}`,
    () => `${pick(FIRST)}${int(1, 99)}@${pick(DOMAINS)}`,
    () => `${pick(FIRST)}+${pick(["orders", "news", "test", "billing"])}@${pick(DOMAINS)}`,
    () => `${pick(FIRST).toUpperCase()}@${pick(DOMAINS).toUpperCase()}`,
    () => `${pick(FIRST)}_${pick(FIRST).replace(".", "")}@${pick(DOMAINS)}`,
  ])();
  return v;
}
function phone() {
  const n4 = () => `01${digits(2)}`; // 555-01xx is reserved for fiction
  const area = pick(["415", "212", "312", "202", "617", "503", "646", "720"]);
  return pick([
    () => `(${area}) 555-${n4()}`,
    () => `${area}-555-${n4()}`,
    () => `${area}.555.${n4()}`,
    () => `+1 ${area} 555 ${n4()}`,
    () => `+1 (${area}) 555-${n4()}`,
    () => `1-800-555-${n4()}`,
    () => `+1${area}555${n4()}`,
    () => `020 7946 0${digits(3)}`, // Ofcom drama range
    () => `+44 20 7946 0${digits(3)}`,
    () => `+44 (0)20 7946 0${digits(3)}`,
    () => `0161 496 0${digits(3)}`,
    () => `07700 900${digits(3)}`,
    () => `+44 7700 900${digits(3)}`,
    () => `030 ${int(2, 9)}${digits(6)}`,
    () => `+49 30 ${int(2, 9)}${digits(7)}`,
    () => `089 ${int(2, 9)}${digits(6)}`,
    () => `+49 171 ${digits(7)}`,
    () => `01 99 00 ${digits(2)} ${digits(2)}`,
    () => `+33 1 99 00 ${digits(2)} ${digits(2)}`,
    () => `+61 2 5550 ${digits(4)}`,
    () => `+81 3-5550-${digits(4)}`,
  ])();
}
function luhnDigit(partial) {
  let sum = 0;
  const ds = partial.split("").reverse();
  for (let i = 0; i < ds.length; i++) {
    let d = +ds[i];
    if (i % 2 === 0) { d *= 2; if (d > 9) d -= 9; }
    sum += d;
  }
  return String((10 - (sum % 10)) % 10);
}
const luhnOk = (s) => luhnDigit(s.slice(0, -1)) === s.slice(-1);
const TEST_CARDS = ["4111111111111111", "4242424242424242", "4012888888881881", "5555555555554444", "5105105105105100", "2223003122003222", "378282246310005", "371449635398431", "6011111111111117", "6011000990139424", "3530111333300000", "3566002020360505", "30569309025904", "38520000023237"];
function cardNumber() {
  if (rand() < 0.5) return pick(TEST_CARDS);
  const prefix = pick(["4", "4", "51", "53", "55", "2221", "6011", "65", "3528"]);
  const body = prefix + digits(15 - prefix.length);
  return body + luhnDigit(body);
}
function card() {
  const d = cardNumber();
  const style = int(0, 2);
  if (style === 0) return d;
  const sep = style === 1 ? " " : "-";
  if (d.length === 15) return [d.slice(0, 4), d.slice(4, 10), d.slice(10)].join(sep);
  if (d.length === 14) return [d.slice(0, 4), d.slice(4, 10), d.slice(10)].join(sep);
  return d.match(/.{1,4}/g).join(sep);
}
function mod97(s) {
  let r = 0n;
  for (const c of s) r = (r * (c >= "A" ? 100n : 10n) + BigInt(c >= "A" ? c.charCodeAt(0) - 55 : +c)) % 97n;
  return r;
}
const IBAN_FORMATS = {
  GB: () => from(UP, 4) + digits(14), DE: () => digits(18), FR: () => digits(23), ES: () => digits(20),
  IT: () => from(UP, 1) + digits(22), NL: () => from(UP, 4) + digits(10), BE: () => digits(12), CH: () => digits(17),
  AT: () => digits(16), PL: () => digits(24), IE: () => from(UP, 4) + digits(14), PT: () => digits(21), SE: () => digits(20),
};
const PUBLIC_IBANS = ["GB82WEST12345698765432", "DE89370400440532013000", "FR1420041010050500013M02606", "NL91ABNA0417164300", "BE68539007547034", "CH9300762011623852957"];
function iban() {
  let v;
  if (rand() < 0.3) v = pick(PUBLIC_IBANS);
  else {
    const cc = pick(Object.keys(IBAN_FORMATS));
    const bban = IBAN_FORMATS[cc]();
    const check = 98n - mod97(bban + cc + "00");
    v = cc + String(check).padStart(2, "0") + bban;
  }
  return rand() < 0.6 ? v.match(/.{1,4}/g).join(" ") : v;
}
function ip() {
  return pick([
    () => `192.0.2.${int(1, 254)}`,
    () => `198.51.100.${int(1, 254)}`,
    () => `203.0.113.${int(1, 254)}`,
    () => `10.${int(0, 255)}.${int(0, 255)}.${int(1, 254)}`,
    () => `192.168.${int(0, 255)}.${int(1, 254)}`,
    () => `2001:db8::${int(1, 0xffff).toString(16)}`,
    () => `2001:db8:${int(1, 0xffff).toString(16)}:${int(1, 0xffff).toString(16)}::${int(1, 99)}`,
    () => `2001:0db8:85a3:0000:0000:8a2e:0370:${int(0x1000, 0xffff).toString(16)}`,
    () => `fe80::${int(1, 0xffff).toString(16)}:${int(1, 0xffff).toString(16)}`,
    () => `::ffff:192.0.2.${int(1, 254)}`,
  ])();
}
function ssn() {
  let area;
  do area = int(1, 899); while (area === 666);
  return `${String(area).padStart(3, "0")}-${String(int(1, 99)).padStart(2, "0")}-${String(int(1, 9999)).padStart(4, "0")}`;
}
const SECRETS = {
  stripe_key: () => `${pick(["sk_live_", "rk_live_", "sk_test_", "rk_test_"])}${b62(pick([24, 34, 99]))}`,
  openai_key: () => pick([() => `sk-${b62(48)}`, () => `sk-proj-${from(B64URL, 60)}${b62(20)}`])(),
  anthropic_key: () => `sk-ant-api03-${from(B64URL, 80)}${b62(10)}-${from(B64URL, 4)}AA`,
  aws_access_key: () => `${pick(["AKIA", "ASIA"])}${from("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 15)}${int(2, 7)}`,
  github_token: () => pick([() => `${pick(["ghp", "gho", "ghu", "ghs", "ghr"])}_${b62(36)}`, () => `github_pat_${b62(22)}_${b62(59)}`])(),
  slack_token: () => `${pick(["xoxb", "xoxp"])}-${digits(11)}-${digits(13)}-${b62(24)}`,
  google_api_key: () => `AIza${from(B64URL, 30)}${b62(5)}`,
  pf_live_key: () => `pf_live_${b62(32)}`,
  jwt: () => {
    const header = b64url(JSON.stringify({ alg: pick(["HS256", "RS256"]), typ: "JWT" }));
    const payload = b64url(JSON.stringify({ sub: `user_${int(1000, 9999)}`, iat: 1700000000 + int(0, 9999999), scope: pick(["read", "read write"]) }));
    return `${header}.${payload}.${from(B64URL, 43)}`;
  },
  private_key: () => {
    const label = pick(["RSA PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY"]);
    const lines = Array.from({ length: int(3, 6) }, () => from(B62 + "+/", 64));
    return `-----BEGIN ${label}-----\n${lines.join("\n")}\n${from(B62, 20)}==\n-----END ${label}-----`;
  },
};
function passwordValue() {
  for (;;) {
    // Symbols inside, letters and digits at the ends: a trailing `!` reads
    // as punctuation and a leading `$` or `%` as a template in any text.
    const v = from(B62, 1) + from(B62 + "!@#%^*-_", int(8, 20)) + from(B62, 1);
    if (/[A-Za-z]/.test(v) && /[0-9]/.test(v)) return v;
  }
}

// ---------- look-alikes that must survive ----------
const hex = (n) => from("0123456789abcdef", n);
const LOOKALIKES = [
  () => `ORD-${int(2019, 2025)}-${digits(6)}`,
  () => `INV-${digits(8)}`,
  () => `order #${int(100000, 999999)}`,
  () => `${hex(8)}-${hex(4)}-4${hex(3)}-a${hex(3)}-${hex(12)}`,
  () => `01${from("0123456789ABCDEFGHJKMNPQRSTVWXYZ", 24)}`,
  () => `sess_${b62(24)}`,
  () => `$${int(1, 9)},${digits(3)}.${digits(2)}`,
  () => `${int(1, 9)} ${digits(3)},${digits(2)} €`,
  () => `€${int(10, 999)}.${digits(2)}`,
  () => `USD ${int(10, 99)},${digits(3)}.00`,
  () => `${int(2019, 2025)}-0${int(1, 9)}-${int(10, 28)}`,
  () => `${int(10, 28)}/0${int(1, 9)}/${int(2019, 2025)}`,
  () => `${int(10, 28)}.0${int(1, 9)}.${int(2019, 2025)}`,
  () => `${int(2019, 2025)}-0${int(1, 9)}-${int(10, 28)}T${int(10, 23)}:${int(10, 59)}:00Z`,
  () => `${int(10, 23)}:${int(10, 59)}:${int(10, 59)}`,
  () => `v${int(0, 9)}.${int(0, 30)}.${int(0, 99)}`,
  () => `v${int(1, 9)}.${int(0, 9)}.${int(0, 9)}.${int(0, 9)}`,
  () => `${int(1, 9)}.${int(0, 9)}.${int(0, 9)}.${int(0, 9)}.${int(0, 9)}`,
  () => hex(40),
  () => hex(64),
  () => hex(32),
  () => hex(7),
  () => `SKU-${digits(6)}-${pick(["BLK", "WHT", "RED"])}`,
  () => `${from(UP, 2)}-${digits(4)}-${from(UP, 2)}`,
  () => `1Z${from(UP + DI, 6)}${digits(10)}`,
  () => { for (;;) { const d = `7${digits(11)}`; if (!luhnOk(d)) return d; } },
  () => { for (;;) { const d = `9400 ${digits(4)} ${digits(4)} ${digits(4)} ${digits(4)} ${digits(2)}`; return d; } },
  () => { for (;;) { const d = `4${digits(15)}`; if (!luhnOk(d)) return d; } },
  () => { for (;;) { const d = `9${digits(15)}`; if (luhnOk(d)) return d; } },
  () => `user_${digits(12)}`,
  () => `build-${int(2019, 2025)}0${int(1, 9)}${int(10, 28)}-${digits(4)}`,
  () => `GB${String(int(0, 99)).padStart(2, "0")}X${from(UP, 3)} ${digits(4)} ${digits(4)} ${digits(4)} ${digits(2)}`,
  () => `${pick(["000", "666", "912"])}-${digits(2)}-${digits(4)}`,
  () => `555-01${digits(2)}`,
  () => `978-${int(0, 1)}-${digits(2)}-${digits(6)}-${int(0, 9)}`,
  () => `${hex(2)}:${hex(2)}:${hex(2)}:${hex(2)}:${hex(2)}:${hex(2)}`,
  () => "Add::add",
  () => "std::fmt::Display",
  () => "password = input()",
  () => "token: Token",
  () => "password=None",
  () => 'password=""',
  () => "password = ${DB_PASSWORD}",
  () => 'password = os.environ["DB_PASSWORD"]',
  () => "api_key = get_api_key()",
  () => "token = next_token",
  () => "max_tokens=4096",
  () => "secret: SecretStr",
  () => "password: Optional[str] = None",
  () => "sk-learn",
  () => "scikit-learn",
  () => "ghp_config",
  () => "sk_test_your_key_here",
  () => "AKIA-style ids",
  () => `localhost:${int(3000, 9999)}`,
  () => `port ${int(1024, 65535)}`,
  () => `${int(2, 64)} GB`,
  () => `PR #${int(100, 9999)}`,
  () => `ticket JIRA-${int(100, 9999)}`,
  () => `eyJhbGciOi`,
  () => `icon@2x.png`,
  () => `lodash@4.17.21`,
  () => `@types/node`,
  () => `${int(1, 9)}.${int(10, 99)}%`,
  () => `+${int(2, 40)}%`,
  () => `${int(100, 999)}x${int(100, 999)}`,
  () => `1.2.3`,
  () => `0x${hex(8)}`,
];

// ---------- sentences ----------
const S = (t) => t; // marker for readability
const PII_TEMPLATES = [
  ["email", [S("Please send the invoice to {v} before Friday."), S("My email is {v}, reply there."), S("Contact: {v}"), S("cc {v} on the ticket"), S("The user changed their address to {v} yesterday.")]],
  ["phone", [S("Call me at {v} after 5pm."), S("Her number is {v}."), S("Phone: {v}"), S("You can reach support on {v} any time."), S("tel {v} (mobile)")]],
  ["card", [S("Charge the card {v} for the renewal."), S("Card number: {v}, exp 12/29"), S("I paid with {v} last time."), S("Use {v} as the test card.")]],
  ["iban", [S("Wire it to IBAN {v} please."), S("Our bank details: {v} (BIC WESTGB2L)."), S("IBAN: {v}"), S("Refund to {v}.")]],
  ["ip", [S("The request came from {v} at midnight."), S("Whitelist {v} in the firewall."), S("ssh admin@{v}"), S("client_ip={v}"), S("Server {v} is down.")]],
  ["ssn", [S("My SSN is {v}."), S("SSN: {v}"), S("The form lists social security number {v} for the applicant.")]],
];
const SECRET_TEMPLATES = [
  S("Here is my key: {v} — can you check why it fails?"),
  S("export API_KEY={v}"),
  S("Authorization: Bearer {v}"),
  S("I accidentally pasted {v} in the channel."),
  S('config = {"key": "{v}"}'),
  S("The token {v} was rotated today."),
];
const PASSWORD_TEMPLATES = [
  "password={v}", 'password: "{v}"', "DB_PASSWORD={v}", "pwd = '{v}'", '"api_key": "{v}"', "apikey={v}",
  "client_secret = \"{v}\"", "access_token: {v}", "secret={v}", "passwd: {v}", "token='{v}'", "SMTP_PASSWORD: {v}",
];
const LOOKALIKE_TEMPLATES = [
  S("Order {v} shipped."), S("See {v} for details."), S("ref {v}"), S("({v})"), S("The value was {v} in the log."), S("Compare with {v}."),
];

function fill(t, v) {
  const i = t.indexOf("{v}");
  return t.slice(0, i) + v + t.slice(i + 3);
}

const lines = [];
const kinds = [...PII_TEMPLATES.map(([k]) => k), ...Object.keys(SECRETS), "password"];
for (let n = 0; n < 260; n++) {
  const parts = [];
  const spans = [];
  const lookalikes = [];
  const clauses = int(1, 3);
  for (let c = 0; c < clauses; c++) {
    const kind = c === 0 ? kinds[n % kinds.length] : pick(rand() < 0.6 ? ["lookalike"] : kinds);
    if (kind === "lookalike") {
      const v = pick(LOOKALIKES)();
      lookalikes.push(v);
      parts.push(fill(pick(LOOKALIKE_TEMPLATES), v));
    } else if (kind === "password") {
      const v = passwordValue();
      spans.push({ kind: "password", value: v });
      parts.push(fill(pick(PASSWORD_TEMPLATES), v));
    } else if (SECRETS[kind]) {
      const v = SECRETS[kind]();
      spans.push({ kind, value: v });
      parts.push(fill(kind === "private_key" ? "Key file:\n{v}\n" : pick(SECRET_TEMPLATES), v));
    } else {
      const gen = { email, phone, card, iban, ip, ssn }[kind];
      const v = gen();
      spans.push({ kind, value: v });
      parts.push(fill(pick(PII_TEMPLATES.find(([k]) => k === kind)[1]), v));
    }
  }
  // Every line gets at least one look-alike too.
  const v = pick(LOOKALIKES)();
  lookalikes.push(v);
  parts.push(fill(pick(LOOKALIKE_TEMPLATES), v));
  lines.push(JSON.stringify({ text: parts.join(" "), spans, lookalikes }));
}
const out = join(dirname(fileURLToPath(import.meta.url)), "labelled.jsonl");
writeFileSync(out, lines.join("\n") + "\n");
const all = lines.map((l) => JSON.parse(l));
const spanCount = all.reduce((a, l) => a + l.spans.length, 0);
const lookCount = all.reduce((a, l) => a + l.lookalikes.length, 0);
console.log(`${lines.length} lines, ${spanCount} spans, ${lookCount} look-alikes -> ${out}`);
