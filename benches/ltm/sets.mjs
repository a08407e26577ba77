// The data sets of the retrieval benchmark and the `--set` switch.
//
//   node benches/ltm/retrieval.mjs                  # rustdocs (default)
//   node benches/ltm/retrieval.mjs --set convbench  # tests/data/convbench
//
// Each set names its loader and the runner module that benchmarks it, so
// retrieval.mjs only picks one; a new set is a new entry here plus a runner.
// rustdocs lives in ../shared/data/rustdocs (common.mjs DATA); convbench is
// committed in tests/data/convbench (dialogs, questions, MiniLM vectors).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as C from "./common.mjs";

export const CONVBENCH_DIR = join(C.ROOT, "tests/data/convbench");

function loadRustdocs() {
  return { passages: C.loadJsonl("passages.jsonl"), allQueries: C.loadJsonl("queries.jsonl"), vectors: C.loadVectors() };
}

const jsonl = (path) => readFileSync(path, "utf8").trimEnd().split("\n").map((l) => JSON.parse(l));

function f32(path, rows) {
  const b = readFileSync(path);
  if (b.length !== rows * C.DIM * 4) throw new Error(`${path}: ${b.length} bytes, expected ${rows} x ${C.DIM} x 4 (regenerate it, see tests/data/convbench/README.md)`);
  return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
}

/**
 * convbench: turns (one per line of dialogs.jsonl, with `row`, `turn_index`
 * within its session, `created_at` = session date at 12:00Z), questions
 * (with `row` and `reference_time`), dialogs (id -> its turns in order) and
 * the MiniLM rows of both.
 */
function loadConvbench() {
  const turns = jsonl(join(CONVBENCH_DIR, "dialogs.jsonl"));
  const questions = jsonl(join(CONVBENCH_DIR, "questions.jsonl"));
  const T = f32(join(CONVBENCH_DIR, "turns.minilm.f32"), turns.length);
  const Q = f32(join(CONVBENCH_DIR, "questions.minilm.f32"), questions.length);
  const dialogs = new Map();
  const perSession = new Map();
  turns.forEach((t, row) => {
    t.row = row;
    t.turn_index = perSession.get(t.session_id) ?? 0;
    perSession.set(t.session_id, t.turn_index + 1);
    t.created_at = `${t.session_date}T12:00:00.000Z`;
    if (!dialogs.has(t.dialog_id)) dialogs.set(t.dialog_id, []);
    dialogs.get(t.dialog_id).push(t);
  });
  // The README puts a question's own time after its dialog's last session;
  // the data holds no exact moment, so: the day after, at 12:00Z.
  const lastDate = new Map([...dialogs].map(([id, list]) => [id, list[list.length - 1].session_date]));
  questions.forEach((q, row) => {
    q.row = row;
    const d = new Date(`${lastDate.get(q.dialog_id)}T12:00:00.000Z`);
    d.setUTCDate(d.getUTCDate() + 1);
    q.reference_time = d.toISOString();
  });
  return {
    turns,
    questions,
    dialogs,
    vectors: {
      T,
      Q,
      turn: (row) => T.subarray(row * C.DIM, (row + 1) * C.DIM),
      question: (row) => Q.subarray(row * C.DIM, (row + 1) * C.DIM),
    },
  };
}

export const SETS = {
  rustdocs: { runner: "./retrieval-rustdocs.mjs", load: loadRustdocs },
  convbench: { runner: "./retrieval-convbench.mjs", load: loadConvbench },
};

/** The set named by `--set NAME` or `--set=NAME` (default rustdocs); an unknown name throws. */
export function setFromArgv(argv = process.argv.slice(2)) {
  let name = "rustdocs";
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--set") name = argv[++i];
    else if (argv[i].startsWith("--set=")) name = argv[i].slice("--set=".length);
  }
  if (!Object.hasOwn(SETS, name ?? "")) throw new Error(`unknown --set ${name}: one of ${Object.keys(SETS).join(", ")}`);
  return { name, ...SETS[name] };
}

export const loadSet = (name) => SETS[name].load();
