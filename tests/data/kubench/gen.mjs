// Writes the kubench knowledge-update benchmark (issue 20) into this folder:
// facts.jsonl (one long-term record a line, in ingest order) and
// questions.jsonl (each labelled with the right version of one fact).
// `node tests/data/kubench/gen.mjs` rewrites the same bytes: the only
// randomness is a mulberry32 PRNG with a fixed seed, and there is no clock,
// network or dependency.
//
// How the set is made:
// - 40 users, each with 6 of the 10 attributes below. An attribute of a user
//   is a fact; it has a first value early in 2025 and is updated 1-5 times
//   later in the year, each update to a value different from the one before.
//   Every value it takes is one record (a version) carrying fact_key and
//   valid_from; its text states the value in a sentence, with a template
//   that differs from the previous version's, so versions differ in wording
//   as well as value.
// - Each user also has 8 chit-chat records without fact_key (distractors).
//   About half sit close to an attribute ("converted a recipe from cups to
//   grams", "asked how to move funds between wallets"), so search has to
//   find the right attribute among a user's memories, not just any record.
// - The records are written in one shuffled order, which is the order the
//   harness ingests them in. Many chains therefore arrive out of valid_from
//   order: a back-dated version lands after a newer one, and a store must
//   order the chain by valid_from, not by arrival.
// - Questions: per fact, 2 asking for the current value (answer: the last
//   version) and 1 asking for the value at a time (answer: the version whose
//   validity interval holds `as_of`, with at least a day to spare each side).
//
// Texts avoid anything edgemem's privacy scrubber would redact (emails,
// phone-like digit runs, long hex strings, key-like tokens): wallet ids are
// short, like "wal-7f3a".
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const SEED = 20; // the issue number
const NAMESPACE = "kubench";
const N_USERS = 40;
const FACTS_PER_USER = 6;
const DISTRACTORS_PER_USER = 8;
const CURRENT_PER_FACT = 2;
const AS_OF_PER_FACT = 1;
const UPDATES = [1, 5]; // updates per fact, inclusive

function mulberry32(a) {
  return () => {
    a |= 0; a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rnd = mulberry32(SEED);
const int = (lo, hi) => lo + Math.floor(rnd() * (hi - lo + 1)); // inclusive
const pick = (xs) => xs[Math.floor(rnd() * xs.length)];
function shuffle(xs) {
  const a = xs.slice();
  for (let i = a.length - 1; i > 0; i--) { const j = Math.floor(rnd() * (i + 1)); [a[i], a[j]] = [a[j], a[i]]; }
  return a;
}
const take = (xs, n) => shuffle(xs).slice(0, n);

// ---------- time (UTC, minute resolution) ----------
const MIN = 60_000;
const DAY = 86_400_000;
const YEAR_START = Date.UTC(2025, 0, 1);
const YEAR_END = Date.UTC(2026, 0, 1); // exclusive: the last version's interval is cut here
const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
const rfc3339 = (ms) => new Date(ms).toISOString().replace(".000Z", "Z");
const longDay = (ms) => { const d = new Date(ms); return `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}`; };
// a moment on day `d` (ms at 00:00Z) during working-ish hours
const timeOn = (d) => d + int(7 * 60, 21 * 60 + 59) * MIN;

const cap = (s) => s[0].toUpperCase() + s.slice(1);
const fill = (tpl, vars) => tpl.replace(/\{(\w+)\}/g, (_, k) => {
  if (k in vars) return vars[k];
  throw new Error(`unfilled slot {${k}} in: ${tpl}`);
});

// ---------- lexicon ----------
const NAMES = ["Priya", "Mateo", "Aiko", "Tomasz", "Amara", "Lukas", "Sofia", "Rahul", "Ingrid", "Kwame", "Chloe", "Diego", "Mei",
  "Oskar", "Fatima", "Jonas", "Leila", "Marco", "Nadia", "Samuel", "Yuki", "Elena", "Tariq", "Hannah", "Ravi", "Zara", "Felix",
  "Ana", "Omar", "Greta", "Kenji", "Lucia", "Ibrahim", "Maya", "Pavel", "Sara", "Thabo", "Nora", "Emil", "Carmen"];
const CITIES = ["Lisbon", "Berlin", "Toronto", "Osaka", "Nairobi", "Melbourne", "Austin", "Krakow", "Porto", "Seoul", "Dublin",
  "Mexico City", "Vancouver", "Edinburgh", "Bangalore", "Cape Town", "Lyon", "Valencia", "Denver", "Singapore", "Oslo", "Auckland"];
const TIMEZONES = ["Europe/Lisbon", "Europe/Berlin", "America/New_York", "America/Chicago", "America/Denver", "America/Los_Angeles",
  "Asia/Tokyo", "Asia/Kolkata", "Asia/Singapore", "Australia/Sydney", "Africa/Nairobi", "America/Sao_Paulo", "Europe/Warsaw", "Pacific/Auckland"];
const TEAMS = ["Arsenal", "Boca Juniors", "the Chicago Bulls", "Bayern Munich", "the Golden State Warriors", "FC Barcelona", "Celtic",
  "the Seattle Sounders", "Ajax", "the Toronto Raptors", "Flamengo", "Juventus", "the Boston Red Sox", "Olympique Lyonnais"];
const LANGUAGES = ["English", "Spanish", "German", "French", "Portuguese", "Japanese", "Italian", "Dutch", "Polish", "Hindi", "Korean"];
const HEX = "0123456789abcdef";
const walletId = () => `wal-${Array.from({ length: 4 }, () => HEX[int(0, 15)]).join("")}`;

// One entry per attribute: its values (a list or a generator), the templates
// of a first statement and of an update ({n} name, {v} value), and the
// question templates, current and as-of ({when}: "on 14 March 2025", ...).
const ATTRS = {
  "user.units": {
    values: ["metric", "imperial"],
    first: ["{n} prefers {v} units.", "{n} likes distances and weights given in {v}.", "Use {v} units when answering {n}."],
    update: ["{n} now prefers {v} units.", "{n} switched to {v} units.", "{n} asked to change everything over to {v} measurements.",
      "From now on {n} wants {v} units."],
    current: ["What units does {n} prefer?", "Which measurement system does {n} want?", "Should I give {n} distances in metric or imperial?",
      "What unit system is {n} using?"],
    asOf: ["What units did {n} prefer {when}?", "Which measurement system did {n} want {when}?", "What unit system was {n} using {when}?"],
  },
  "user.city": {
    values: CITIES,
    first: ["{n} lives in {v}.", "{n} is based in {v}.", "{n}'s home city is {v}."],
    update: ["{n} moved to {v}.", "{n} has relocated to {v}.", "{n} now lives in {v}.", "{n} just finished moving house to {v}."],
    current: ["Where does {n} live?", "Which city is {n} based in?", "What is {n}'s home city?", "Where is {n} living these days?"],
    asOf: ["Where did {n} live {when}?", "Which city was {n} based in {when}?", "What was {n}'s home city {when}?"],
  },
  "user.diet": {
    values: ["vegetarian", "vegan", "pescatarian", "keto", "gluten-free", "dairy-free", "low-carb", "paleo", "flexitarian"],
    first: ["{n} follows a {v} diet.", "{n} eats {v}.", "When suggesting meals for {n}, keep them {v}."],
    update: ["{n} has gone {v}.", "{n} switched to a {v} diet.", "{n} is eating {v} now.", "{n} changed diets and keeps to {v} food these days."],
    current: ["What diet does {n} follow?", "What should I keep in mind about {n}'s eating habits?", "Is {n} on any particular diet?",
      "What kind of food does {n} eat?"],
    asOf: ["What diet did {n} follow {when}?", "What were {n}'s eating habits {when}?", "What kind of food was {n} eating {when}?"],
  },
  "wallet.primary_address": {
    values: walletId,
    first: ["{n}'s primary wallet address is {v}.", "{n} uses {v} as the main wallet.", "Payments for {n} should go to wallet {v}."],
    update: ["{n} replaced the primary wallet with {v}.", "{n}'s main wallet is now {v}.", "{n} asked that payments go to {v} from now on.",
      "{n} set up a new primary wallet, {v}."],
    current: ["What is {n}'s primary wallet address?", "Which wallet should payments to {n} go to?", "What's the main wallet for {n}?",
      "Where do I send funds for {n}?"],
    asOf: ["What was {n}'s primary wallet address {when}?", "Which wallet did payments to {n} go to {when}?", "What was the main wallet for {n} {when}?"],
  },
  "account.plan": {
    values: ["Free", "Starter", "Plus", "Pro", "Team", "Business", "Enterprise"],
    first: ["{n}'s account is on the {v} plan.", "{n} pays for the {v} plan.", "{n} subscribes to the {v} tier."],
    update: ["{n} changed the account to the {v} plan.", "{n}'s subscription is now {v}.", "{n} moved the account over to the {v} tier.",
      "{n} switched plans and is on {v} now."],
    current: ["Which plan is {n}'s account on?", "What subscription tier does {n} have?", "What plan does {n} pay for?", "Which tier is {n} subscribed to?"],
    asOf: ["Which plan was {n}'s account on {when}?", "What subscription tier did {n} have {when}?", "What plan was {n} paying for {when}?"],
  },
  "user.timezone": {
    values: TIMEZONES,
    first: ["{n}'s timezone is {v}.", "Schedule meetings with {n} in {v} time.", "{n} keeps the calendar on {v}."],
    update: ["{n} changed timezone to {v}.", "{n}'s calendar is set to {v} now.", "{n} is working on {v} time from now on.",
      "{n} updated the profile timezone to {v}."],
    current: ["What timezone is {n} in?", "Which time zone should I use for {n}'s meetings?", "What is {n}'s timezone?", "What clock does {n} schedule by?"],
    asOf: ["What timezone was {n} in {when}?", "Which time zone did {n}'s meetings use {when}?", "What was {n}'s timezone {when}?"],
  },
  "user.favorite_team": {
    values: TEAMS,
    first: ["{n} supports {v}.", "{n}'s favourite team is {v}.", "{n} is a huge fan of {v}."],
    update: ["{n} has switched allegiance to {v}.", "These days {n} cheers for {v}.", "{n}'s favourite team is now {v}.",
      "{n} started following {v} instead."],
    current: ["Which team does {n} support?", "What is {n}'s favourite team?", "What team does {n} root for?", "Which club does {n} follow?"],
    asOf: ["Which team did {n} support {when}?", "What was {n}'s favourite team {when}?", "What team was {n} rooting for {when}?"],
  },
  "user.employer": {
    values: ["Northwind Labs", "Bluefin Analytics", "Orbitale Systems", "Kestrel Logistics", "Marlow Health", "Tidewater Energy",
      "Quillfeather Press", "Ironbark Robotics", "Sunpath Solar", "Granite Peak Bank", "Lumen Grove", "Vellum Software"],
    first: ["{n} works at {v}.", "{n} is employed by {v}.", "{n}'s employer is {v}."],
    update: ["{n} started a new job at {v}.", "{n} joined {v}.", "{n} now works for {v}.", "{n} took an offer from {v}."],
    current: ["Where does {n} work?", "Who is {n}'s employer?", "Which company does {n} work for?", "Who pays {n}'s salary?"],
    asOf: ["Where did {n} work {when}?", "Who was {n}'s employer {when}?", "Which company was {n} working for {when}?"],
  },
  "user.language": {
    values: LANGUAGES,
    first: ["{n} wants replies in {v}.", "{n} prefers to chat in {v}.", "Answer {n} in {v}."],
    update: ["{n} asked to switch the conversation language to {v}.", "{n} would rather get answers in {v} from now on.",
      "{n} now prefers {v} for replies.", "{n} changed the preferred language to {v}."],
    current: ["What language does {n} want replies in?", "Which language should I use with {n}?", "In what language does {n} prefer to chat?",
      "What's {n}'s preferred language?"],
    asOf: ["What language did {n} want replies in {when}?", "Which language did {n} chat in {when}?", "What was {n}'s preferred language {when}?"],
  },
  "account.payment_method": {
    values: ["PayPal", "bank transfer", "Apple Pay", "Google Pay", "a corporate card", "SEPA direct debit", "a debit card", "monthly invoice"],
    first: ["{n} pays with {v}.", "{n}'s payment method is {v}.", "{n} settles the bill with {v}."],
    update: ["{n} changed the payment method to {v}.", "{n} now pays with {v}.", "{n} switched billing over to {v}.",
      "{n}'s account is billed through {v} now."],
    current: ["How does {n} pay?", "What payment method does {n} use?", "How is {n}'s bill paid?", "Which payment method is on {n}'s account?"],
    asOf: ["How did {n} pay {when}?", "What payment method did {n} use {when}?", "How was {n}'s bill paid {when}?"],
  },
};

// Chit-chat without fact_key. The first group is deliberately near an
// attribute (same words or topic); the second is plain small talk.
const DISTRACTORS = [
  "{n} converted a bread recipe from cups to grams.", "{n} asked how many kilometres are in a marathon.",
  "{n}'s sister is visiting from {city} next month.", "{n} is planning a weekend trip to {city}.",
  "{n} tried a new ramen place and loved the broth.", "{n} asked for a quick recipe for lentil soup.",
  "{n} asked how to move funds between two wallets.", "{n} wanted to know how long a wallet transfer usually takes.",
  "{n} asked what the difference is between the Team and Business plans.", "{n} got an invoice and wanted the tax line explained.",
  "{n} has a call with a client in {tz} on Thursday.", "{n} complained about jet lag after a long flight.",
  "{n} watched the match last night and it went to penalties.", "{n} bought a scarf for a friend who supports {team}.",
  "{n}'s old manager sent a recommendation letter.", "{n} is preparing for a performance review next week.",
  "{n} is learning a few phrases of {lang} for a trip.", "{n} asked for a translation of a short poem.",
  "{n} asked why a card payment was declined at a cafe.",
  "{n} set a reminder to renew the car insurance.", "{n} is training for a half marathon in the spring.",
  "{n} adopted a rescue cat called Miso.", "{n} asked for book recommendations about urban history.",
  "{n} is redecorating the living room in shades of green.", "{n} wants a reminder to call the dentist.",
  "{n} enjoyed a documentary about deep sea creatures.", "{n} is thinking about learning the cello.",
  "{n} asked for tips on keeping houseplants alive.", "{n} shared a photo of a sunset from the balcony.",
  "{n} is helping a friend move a sofa this weekend.",
];

// ---------- one fact: a chain of versions ----------
/** Sorted valid_from times: the first in early 2025, then `k` updates spread over the rest of the year. */
function chainTimes(k) {
  const t0 = timeOn(YEAR_START + int(0, 44) * DAY);
  const from = t0 + 20 * DAY;
  const to = Date.UTC(2025, 11, 20);
  const seg = (to - from) / k;
  // one update in the middle 70% of each segment: updates are at least
  // 0.3 segment (18+ days) apart, so every interval has room for an as-of day
  const times = [t0];
  for (let i = 0; i < k; i++) {
    const day = Math.floor((from + i * seg + (0.15 + 0.7 * rnd()) * seg) / DAY) * DAY;
    times.push(timeOn(day));
  }
  return times;
}

/** Version records of one fact; texts are unique within the user (`used`), so content-hash dedup can never merge two. */
function makeChain(user, key, fi, used) {
  const A = ATTRS[key];
  const times = chainTimes(int(UPDATES[0], UPDATES[1]));
  const out = [];
  let prevValue = null;
  let prevTpl = null;
  for (let v = 0; v < times.length; v++) {
    const tpls = v === 0 ? A.first : A.update;
    let text;
    for (let tries = 0; ; tries++) {
      if (tries > 100) throw new Error(`${user.id} ${key}: no fresh text`);
      const value = typeof A.values === "function" ? A.values() : pick(A.values);
      const tpl = pick(tpls);
      if (value === prevValue || tpl === prevTpl) continue;
      text = cap(fill(tpl, { n: user.name, v: value }));
      if (used.has(text)) continue;
      prevValue = value;
      prevTpl = tpl;
      break;
    }
    used.add(text);
    out.push({
      id: `ku-${user.id}-f${fi + 1}-v${v + 1}`,
      user_id: user.id,
      namespace: NAMESPACE,
      fact_key: key,
      valid_from: rfc3339(times[v]),
      text,
      _t: times[v],
    });
  }
  return out;
}

// ---------- questions ----------
/**
 * A moment strictly inside [a, b), a day clear of both ends, and how to say
 * it: "in March 2025" when the whole month lies inside (as_of = the 15th),
 * else "on 14 March 2025" / "as of 14 March 2025" (as_of = that day, noon).
 */
function asOfMoment(a, b) {
  const months = [];
  for (let m = 0; m < 12; m++) {
    const s = Date.UTC(2025, m, 1);
    if (s >= a && Date.UTC(2025, m + 1, 1) <= b) months.push(m);
  }
  if (months.length && rnd() < 0.4) {
    const m = pick(months);
    return { at: Date.UTC(2025, m, 15, 12), when: `in ${MONTHS[m]} 2025` };
  }
  const first = Math.ceil((a + DAY) / DAY) * DAY;
  const last = Math.floor((b - DAY) / DAY) * DAY - DAY; // noon of `last` stays a day before b
  const day = first + int(0, Math.max(0, (last - first) / DAY)) * DAY;
  const at = day + 12 * 3_600_000;
  if (!(at > a + DAY / 2 && at < b - DAY / 2)) throw new Error("as_of too close to a version boundary");
  return { at, when: `${pick(["on", "as of"])} ${longDay(day)}` };
}

function factQuestions(user, key, chain) {
  const A = ATTRS[key];
  const version_ids = chain.map((r) => r.id);
  const base = (kind) => ({ kind, user_id: user.id, fact_key: key });
  const qs = take(A.current, CURRENT_PER_FACT).map((tpl) => ({
    ...base("current"), question: fill(tpl, { n: user.name }), answer_id: chain[chain.length - 1].id, version_ids,
  }));
  for (let i = 0; i < AS_OF_PER_FACT; i++) {
    // mostly a superseded version: that is where latest-only search alone fails
    const v = chain.length > 1 && rnd() < 0.8 ? int(0, chain.length - 2) : chain.length - 1;
    const b = v + 1 < chain.length ? chain[v + 1]._t : YEAR_END;
    const { at, when } = asOfMoment(chain[v]._t, b);
    qs.push({ ...base("as_of"), question: fill(pick(A.asOf), { n: user.name, when }), as_of: rfc3339(at), answer_id: chain[v].id, version_ids });
  }
  return qs;
}

export function generate() {
  // reseeding is done by re-importing: generate() is called once per process
  const records = [];
  const questions = [];
  const keys = Object.keys(ATTRS);
  for (let ui = 0; ui < N_USERS; ui++) {
    const user = { id: `u${String(ui + 1).padStart(2, "0")}`, name: NAMES[ui] };
    const used = new Set();
    take(keys, FACTS_PER_USER).sort().forEach((key, fi) => {
      const chain = makeChain(user, key, fi, used);
      records.push(...chain);
      questions.push(...factQuestions(user, key, chain));
    });
    take(DISTRACTORS, DISTRACTORS_PER_USER).forEach((tpl, di) => {
      const text = fill(tpl, { n: user.name, city: pick(CITIES), tz: pick(TIMEZONES), team: pick(TEAMS), lang: pick(LANGUAGES) });
      used.add(text);
      records.push({ id: `ku-${user.id}-d${di + 1}`, user_id: user.id, namespace: NAMESPACE, created_at: rfc3339(timeOn(YEAR_START + int(0, 364) * DAY)), text });
    });
  }
  // The ingest order: one fixed shuffle of everything.
  const ingest = shuffle(records).map(({ _t, ...r }) => r);
  const numbered = questions.map((q, i) => {
    const { kind, user_id, fact_key, question, as_of, answer_id, version_ids } = q;
    return { qid: `ku-q${String(i + 1).padStart(4, "0")}`, kind, user_id, fact_key, question, ...(as_of ? { as_of } : {}), answer_id, version_ids };
  });
  const jsonl = (rows) => rows.map((r) => JSON.stringify(r)).join("\n") + "\n";
  return { "facts.jsonl": jsonl(ingest), "questions.jsonl": jsonl(numbered) };
}

const here = dirname(fileURLToPath(import.meta.url));
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const files = generate();
  for (const [name, text] of Object.entries(files)) writeFileSync(join(here, name), text);
  console.log(Object.entries(files).map(([n, t]) => `${n}: ${t.split("\n").length - 1} lines`).join(", "));
}
