// Writes the convbench conversational retrieval benchmark into this folder:
// dialogs.jsonl (one turn a line) and questions.jsonl (labelled with their
// evidence turns). `node tests/data/convbench/gen.mjs` rewrites the same bytes:
// the only randomness is a mulberry32 PRNG with a fixed seed, and there is no
// clock, network or dependency. The lexicon and templates are in vocab.mjs.
//
// How a dialog is made:
// - A persona (name, two cities, two jobs, partner, sister, friend, pet,
//   purchase, trip, hobby, morning drink) and 6-9 session dates 25-80 days
//   apart, starting somewhere in 2022-2023.
// - Facts are events placed in sessions under ordering constraints (the move
//   and the job change come after the intro; the trip is planned in session t,
//   the race happens the day before session t+1 and the trip is six days
//   after that session, so the race is the week before the trip; the report
//   from the trip comes in session t+2).
// - Each fact is said by one user turn (template picked at random), dated
//   relatively ("two days ago") or absolutely ("on 7 May 2023") against the
//   session date, and acknowledged by an assistant turn that does not repeat
//   the fact's words. Small talk fills the rest of the session.
// - Each fact adds question candidates with the turn objects as evidence, so
//   the labels are exact by construction; per dialog, a fixed number of each
//   kind is drawn from the candidates.
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as V from "./vocab.mjs";

const SEED = 19;
const N_DIALOGS = 24;
const N_DEV = 7; // dialogs 0..6 are dev, the rest test (about 30/70)
const PER_KIND = { single_hop: 8, multi_hop: 5, temporal: 6, adversarial: 3 };

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
// take n distinct items
const take = (xs, n) => shuffle(xs).slice(0, n);

// ---------- dates (UTC days) ----------
const DAY = 86_400_000;
const iso = (d) => new Date(d).toISOString().slice(0, 10);
const long = (d) => { const x = new Date(d); return `${x.getUTCDate()} ${V.MONTHS[x.getUTCMonth()]} ${x.getUTCFullYear()}`; };
const monthYear = (d) => { const x = new Date(d); return `${V.MONTHS[x.getUTCMonth()]} ${x.getUTCFullYear()}`; };
const cap = (s) => s[0].toUpperCase() + s.slice(1);
// a relative or absolute way to say a past day, and that day
const RELS = [["yesterday", 1], ["two days ago", 2], ["three days ago", 3], ["last week", 7], ["about a week ago", 7], ["a couple of weeks ago", 14]];
function when(sessionDate) {
  if (rnd() < 0.35) { const d = sessionDate - int(1, 12) * DAY; return { rel: `on ${long(d)}`, date: d, approx: false }; }
  const [rel, n] = pick(RELS);
  return { rel, date: sessionDate - n * DAY, approx: n >= 7 };
}
const answerDate = (w) => (w.approx ? `around ${iso(w.date)}` : iso(w.date));

function fill(tpl, vars) {
  return tpl.replace(/\{(\w+)\}/g, (_, k) => {
    if (k in vars) return vars[k];
    const lower = k[0].toLowerCase() + k.slice(1);
    if (lower in vars) return cap(vars[lower]);
    throw new Error(`unfilled slot {${k}} in: ${tpl}`);
  });
}

// ---------- one dialog ----------
function makeDialog(di) {
  const id = `d${String(di + 1).padStart(2, "0")}`;
  const name = V.NAMES[di];
  const [cityA, cityB] = take(V.CITIES, 2);
  const [compA, compB] = take(V.COMPANIES, 2);
  const [[roleA, roleAq], [roleB, roleBq]] = take(V.ROLES, 2);
  const [petSaid, petAsked, petKind] = pick(V.PETS);
  const breed = pick(V.BREEDS[petKind]);
  const petName = pick(V.PET_NAMES);
  const [dest, activity, highlight, highlightAsked] = pick(V.TRIPS);
  const [fdest, , fhigh, fhighAsked] = pick(V.TRIPS.filter((t) => t[0] !== dest));
  const [race, raceAsked] = pick(V.RACES);
  const [itemSaid, itemAsked, brand] = pick(V.PURCHASES);
  const [drinkA, drinkB, drinkBq] = pick(V.DRINKS);
  const [hobby, hobbyAsked] = pick(V.HOBBIES);
  const weekday = pick(V.WEEKDAYS);
  const pn = pick(V.PARTNERS);
  const [pjob, pjobAsked] = pick(V.PARTNER_JOBS);
  const sis = pick(V.SIBLINGS);
  const fr = pick(V.FRIENDS);
  const [sisFact, sisAsked, sisAnswer] = pick(V.SIS_FACTS);
  const [genre, title, author] = pick(V.BOOKS);
  const vars = { name, cityA, cityB, compA, compB, roleA, roleB, petSaid, breed, petName, dest, activity, highlight,
    race, itemSaid, brand, drinkA, drinkB, hobby, weekday, pn, pjob, sis, fr, sisFact, fdest, fhigh, genre, title, author };

  // session dates
  const S = int(6, 9);
  const dates = [Date.UTC(2022, 0, 10) + int(0, 420) * DAY];
  for (let s = 1; s < S; s++) dates.push(dates[s - 1] + int(25, 80) * DAY);

  // sessions hold event blocks; a block is a list of turns
  const events = Array.from({ length: S }, () => []);
  const cands = []; // question candidates {kind, question, ev:[turn], answer}
  const U = (text) => ({ role: "user", text });
  const A = (text) => ({ role: "assistant", text });
  const Q = (kind, question, ev, answer) => cands.push({ kind, question, ev, answer });
  const say = (key, extra = {}) => fill(pick(V.T[key]), { ...vars, ...extra });
  const ack = () => A(pick(V.ACKS));
  const put = (s, ...turns) => { events[s].push(turns); return turns; };

  // session 0: who the user is
  const tIntro = U(say("intro"));
  const tJob = U(say("job"));
  const tPartner = U(say("partner"));
  const tDrinkA = U(say("drinkA"));
  put(0, tIntro, A(`Nice to meet you, ${name}! How can I help today?`));
  put(0, tJob, A("Sounds like a demanding role. How do you like it?"));
  put(0, tPartner, A("Shift work is tough on both of you."));
  put(0, tDrinkA, A("A morning ritual matters."));
  Q("single_hop", pick(["Which firm did I first tell you I was employed by?", "Who was my employer when we started chatting?"]), [tJob], compA);
  Q("single_hop", pick([`What line of work is ${pn} in?`, `What does ${pn} do for a living?`]), [tPartner], `${pn} is a ${pjob} (${pjobAsked}).`);

  // the move: session m >= 2
  const m = int(2, S - 1);
  const wMove = when(dates[m]);
  const tMove = U(say("move", { rel: wMove.rel }));
  put(m, tMove, ack());
  Q("single_hop", pick(["Which city am I based in these days?", "Where is home for me now?", "What town did I end up relocating to?"]), [tMove], cityB);
  Q("multi_hop", pick(["Where did I live before my current city?", "Which city did I leave behind when I changed homes?"]), [tIntro, tMove], `${cityA} (later ${cityB})`);
  Q("temporal", pick([`When did I move to ${cityB}?`, `On what date did I settle in ${cityB}?`, "When did I change cities?"]), [tMove], answerDate(wMove));
  Q("adversarial", pick([`Why did my sister ${sis} relocate to ${cityB}?`, `When did ${sis} move to ${cityB}?`]), [tMove],
    `${sis} did not move there; it was the user who moved to ${cityB} (${answerDate(wMove)}).`);

  // the job change: session j >= 2, different from m when possible
  let j = int(2, S - 1);
  if (j === m && S > 3) j = m === S - 1 ? m - 1 : m + 1;
  const wJob = when(dates[j]);
  const tJobB = U(say("jobB", { rel: wJob.rel }));
  put(j, tJobB, A("A fresh start at work! How was the team?"));
  Q("single_hop", pick(["Who is my current employer?", "Which company pays my salary now?"]), [tJobB], compB);
  Q("multi_hop", pick([`What was my job title before I joined ${compB}?`, `Before working at ${compB}, what role did I have?`]), [tJob, tJobB], `${roleA} (${roleAq}) at ${compA}`);
  Q("temporal", pick([`When did I begin working at ${compB}?`, "When was my first day in the new position?"]), [tJobB], answerDate(wJob));
  Q("adversarial", pick([`When did ${pn} start as a ${roleB} at ${compB}?`, `Which company hired ${pn} as a ${roleB}?`]), [tJobB],
    `Not ${pn}: the user joined ${compB} as a ${roleB}.`);

  // the pet
  const p = int(1, S - 1);
  const wPet = when(dates[p]);
  const tPet = U(say("pet", { rel: wPet.rel }));
  put(p, tPet, A(`Aww! What a lucky ${petAsked === "dog" ? "pup" : "animal"}. How is ${petName} settling in?`));
  Q("single_hop", pick([`What did I name my ${petAsked}?`, `What is my ${petAsked} called?`]), [tPet], petName);
  Q("single_hop", pick([`What breed is ${petName}?`, `What kind of ${petAsked} did we get?`]), [tPet], breed);
  Q("temporal", pick([`When did ${petName} join the family?`, `When did we bring home our ${petAsked}?`]), [tPet], answerDate(wPet));
  if (p !== j) Q("temporal", `Did ${petName} arrive before or after I started at ${compB}?`, [tPet, tJobB],
    wPet.date < wJob.date ? "before" : "after");
  if (p !== m) Q("multi_hop", `Which city was I living in when we got our ${petAsked}?`, p < m ? [tIntro, tPet, tMove] : [tMove, tPet],
    p < m ? cityA : cityB);

  // trip planned in t, race the day before session t+1, trip 6 days after it, report in t+2
  const t = int(1, S - 3);
  const dTrip = dates[t + 1] + 6 * DAY;
  const tTrip = U(say("tripPlan", { dLong: long(dTrip) }));
  put(t, tTrip, A("How exciting! Let me know if you want help with an itinerary."));
  const tRace = U(say("race"));
  put(t + 1, tRace, A("Well done! Make sure to rest up."));
  const tBack = U(say("tripBack"));
  put(t + 2, tBack, A("Welcome home! Sounds like it was worth it."));
  Q("temporal", pick([`When did I fly out to ${dest}?`, `What day did my ${dest} holiday start?`]), [tTrip], iso(dTrip));
  Q("temporal", pick([`Where did I travel in ${monthYear(dTrip)}?`, `Which trip did I take in ${monthYear(dTrip)}?`]), [tTrip], dest);
  Q("temporal", pick([`What did I do the week before I went to ${dest}?`, `The week before my ${dest} journey, what event did I take part in?`]),
    [tTrip, tRace], `${raceAsked}: the user ${race.replace(/\bmy\b/g, "their")} on ${iso(dates[t + 1] - DAY)}`);
  Q("single_hop", pick([`What was my favourite moment in ${dest}?`, `What did I enjoy most about ${dest}?`]), [tBack], `${highlight} (${highlightAsked})`);
  Q("multi_hop", pick([`On the trip I took in ${monthYear(dTrip)}, what was the best part?`, `What stood out on my holiday in ${monthYear(dTrip)}?`]),
    [tTrip, tBack], `${highlight}, in ${dest}`);

  // purchase
  const b = int(1, S - 1);
  const wBuy = when(dates[b]);
  const tBuy = U(say("purchase", { rel: wBuy.rel }));
  put(b, tBuy, A("Enjoy it, you've earned it."));
  Q("single_hop", pick([`Which ${itemAsked} did I get?`, `What make and model is my ${itemAsked}?`]), [tBuy], brand.replace(/^an? /, ""));
  Q("temporal", pick([`When did I get my ${itemAsked}?`, `When did I purchase the ${itemAsked}?`]), [tBuy], answerDate(wBuy));

  // morning drink change, session >= 2
  const c = int(2, S - 1);
  const wDrink = when(dates[c]);
  const tDrinkB = U(say("drinkB", { rel: wDrink.rel }));
  put(c, tDrinkB, A("That's a big change. How are the mornings going?"));
  Q("single_hop", pick(["What do I have in the morning now?", "What is my current morning beverage?"]), [tDrinkB], `${drinkB} (${drinkBq})`);
  Q("multi_hop", pick(["What did I used to drink each morning before I cut out caffeine?", "Before switching my morning routine, what was my usual order?"]),
    [tDrinkA, tDrinkB], drinkA);

  // hobby
  const h = int(1, S - 1);
  const wHobby = when(dates[h]);
  const tHobby = U(say("hobby", { rel: wHobby.rel }));
  put(h, tHobby, A("Trying something new is great. Enjoy the classes!"));
  Q("single_hop", pick([`What do I do on ${weekday} evenings?`, `Which class takes up my ${weekday}s?`]), [tHobby], `${hobby} (${hobbyAsked})`);
  Q("temporal", pick([`When did I take up ${hobbyAsked}?`, `When was my first ${hobbyAsked} session?`]), [tHobby], answerDate(wHobby));

  // engagement, session >= 2
  const e = int(2, S - 1);
  const wEng = when(dates[e]);
  const tEng = U(say("engaged", { rel: wEng.rel }));
  put(e, tEng, A("Congratulations to you both! That's wonderful."));
  Q("temporal", pick([`When did ${pn} pop the question?`, "When did my partner and I decide to get married?"]), [tEng], answerDate(wEng));
  Q("multi_hop", pick(["What does my future spouse do for work?", "What's the profession of the person I'm engaged to?"]), [tPartner, tEng], `${pjob} (${pn})`);
  Q("adversarial", pick([`When did my sister ${sis} get engaged?`, `Who proposed to ${sis}?`]), [tEng],
    `Nothing says ${sis} got engaged; the user and ${pn} got engaged (${answerDate(wEng)}).`);

  // the sister's news and the friend's trip
  const sSis = int(1, S - 1);
  const tSis = U(say("sister"));
  put(sSis, tSis, A(`Wow, good for ${sis}!`));
  Q("single_hop", pick([`What's the latest with my sister?`, `What did ${sis} do recently?`]), [tSis], `${sis} ${sisAnswer}.`);
  Q("adversarial", `When did I ${sisAsked}?`, [tSis], `The user did not; their sister ${sis} ${sisAnswer} (mentioned on ${iso(dates[sSis])}).`);
  const sFr = int(0, S - 1);
  const tFr = U(say("friendTrip"));
  put(sFr, tFr, A("Sounds like a great trip. Tempted to go yourself?"));
  Q("adversarial", pick([`What did I love most about my visit to ${fdest}?`, `When was I in ${fdest}?`]), [tFr],
    `The user was not in ${fdest}; their friend ${fr} went, and raved about ${fhigh} (${fhighAsked}).`);

  // the assistant's book recommendation, followed up later
  const r = int(0, S - 2);
  const tAsk = U(say("askBook"));
  const tRec = A(say("recBook"));
  put(r, tAsk, tRec, U("Thanks, I'll look for it."), A("Let me know what you think."));
  const tRead = U(say("readBook"));
  put(int(r + 1, S - 1), tRead, A(`I'm so glad! ${author} has more if you want another.`));
  Q("adversarial", pick(["Which book did I recommend to you?", `What ${genre} novel did I suggest you read?`]), [tRec],
    `The user did not recommend a book; the assistant recommended '${title}' by ${author}.`);
  Q("single_hop", pick([`Who wrote the ${genre} book you suggested to me?`, "Which author did you point me to for evening reading?"]), [tRec], author);
  Q("multi_hop", pick(["Did I finish the novel you suggested, and what was its title?", "What was the book I read on your advice?"]),
    [tRec, tRead], `Yes: '${title}' by ${author}`);

  // lay out sessions: greeting, events in random slots among small talk, goodbye
  const turns = [];
  const smallPool = shuffle(V.SMALL);
  let sp = 0;
  for (let s = 0; s < S; s++) {
    const sid = `${id}-s${s + 1}`;
    const blocks = events[s];
    const evTurns = blocks.reduce((n, bl) => n + bl.length, 0);
    const target = int(14, 22);
    const nSmall = Math.max(2, Math.ceil((target - 4 - evTurns) / 2));
    const body = [];
    for (let i = 0; i < nSmall; i++) { const [u, a] = smallPool[sp++ % smallPool.length]; body.push([U(u), A(a)]); }
    // insert event blocks, in order, at increasing random positions
    let pos = 0;
    for (const bl of blocks) { pos = int(pos, body.length); body.splice(pos, 0, bl); pos++; }
    const [hu, ha] = s === 0 ? ["Hi! I'd like some help with a few things.", "Of course, happy to help. What's up?"] : pick(V.HELLO);
    const [bu, ba] = pick(V.BYE);
    const all = [U(hu), A(fill(ha, vars)), ...body.flat(), U(bu), A(fill(ba, vars))];
    all.forEach((tn, k) => {
      tn.turn_id = `${sid}-t${String(k + 1).padStart(2, "0")}`;
      turns.push({ dialog_id: id, session_id: sid, session_date: iso(dates[s]), turn_id: tn.turn_id,
        speaker: tn.role === "user" ? name : "assistant", role: tn.role, text: tn.text });
    });
  }

  // draw the questions
  const split = di < N_DEV ? "dev" : "test";
  const qs = [];
  for (const [kind, n] of Object.entries(PER_KIND)) {
    const pool = cands.filter((q) => q.kind === kind);
    if (pool.length < n) throw new Error(`${id}: only ${pool.length} ${kind} candidates`);
    for (const q of take(pool, n)) qs.push(q);
  }
  const questions = qs.map((q, k) => ({ qid: `${id}-q${String(k + 1).padStart(2, "0")}`, dialog_id: id, split, kind: q.kind,
    question: q.question, evidence: [...new Set(q.ev.map((x) => x.turn_id))].sort(), answer: q.answer }));
  return { turns, questions };
}

export function generate() {
  // reseeding is done by re-importing: generate() is called once per process
  const turns = [];
  const questions = [];
  for (let i = 0; i < N_DIALOGS; i++) { const d = makeDialog(i); turns.push(...d.turns); questions.push(...d.questions); }
  const jsonl = (rows) => rows.map((r) => JSON.stringify(r)).join("\n") + "\n";
  return { "dialogs.jsonl": jsonl(turns), "questions.jsonl": jsonl(questions) };
}

const here = dirname(fileURLToPath(import.meta.url));
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const files = generate();
  for (const [name, text] of Object.entries(files)) writeFileSync(join(here, name), text);
  console.log(Object.entries(files).map(([n, t]) => `${n}: ${t.split("\n").length - 1} lines`).join(", "));
}
