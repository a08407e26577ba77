#!/usr/bin/env node
// `edgemem`: operate a live agent's memory from a shell, against a Worker
// (`--url`, `--token`) or a store on disk (`--store DIR`). Exit codes and
// `--json` output are for scripts; see `edgemem --help`.
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { COMMANDS } from "./cli_commands.js";
import { CliError, EXIT, HTTP_TIMEOUT_MS, httpTarget, localTarget, usage } from "./cli_transport.js";

/** Options every command takes. */
const GLOBAL = {
  url: { type: "string", help: "the Worker's base URL (env EDGEMEM_URL)" },
  token: { type: "string", help: "its API key, sent as a Bearer token (env EDGEMEM_TOKEN)" },
  store: { type: "string", help: "a local store directory instead of a Worker (env EDGEMEM_STORE)" },
  namespace: { type: "string", help: "the tenant namespace" },
  json: { type: "boolean", help: "print the raw JSON response (JSON Lines for logs)" },
  help: { type: "boolean", short: "h", help: "show help" },
};

const EXIT_HELP = `exit codes: 0 ok, 1 refused, 2 usage, 3 auth (401/403), 4 not found, 5 server or network error (HTTP requests time out after ${HTTP_TIMEOUT_MS / 1000} s)`;

function optionLines(options) {
  return Object.entries(options).map(([name, o]) => {
    const flag = `${o.short ? `-${o.short}, ` : ""}--${name}${o.type === "string" ? ` ${name.toUpperCase().replace(/-/g, "_")}` : ""}`;
    return `  ${flag.padEnd(30)} ${o.help ?? ""}${o.multiple ? " (repeatable)" : ""}`;
  });
}

function topHelp() {
  const lines = ["usage: edgemem [--url URL --token T | --store DIR] [--namespace NS] [--json] COMMAND ...", "", "commands:"];
  for (const [name, g] of Object.entries(COMMANDS)) {
    if (g.sub) for (const [sub, cmd] of Object.entries(g.sub)) lines.push(`  ${`${name} ${sub}`.padEnd(20)} ${cmd.summary}`);
    else lines.push(`  ${name.padEnd(20)} ${g.summary}`);
  }
  return [...lines, "", "options:", ...optionLines(GLOBAL), "", "`edgemem COMMAND --help` shows a command's options.", EXIT_HELP].join("\n");
}

function groupHelp(name, g) {
  return [`usage: edgemem ${name} SUBCOMMAND ...  (${g.summary})`, "", "subcommands:", ...Object.entries(g.sub).map(([sub, cmd]) => `  ${sub.padEnd(12)} ${cmd.summary}`), "", `\`edgemem ${name} SUBCOMMAND --help\` shows its options.`].join("\n");
}

function commandHelp(words, cmd) {
  const opts = cmd.options ?? {};
  const shown = Object.keys(opts).map((n) => {
    const flag = opts[n].type === "boolean" ? `--${n}` : `--${n} ${n.toUpperCase().replace(/-/g, "_")}`;
    return (cmd.required ?? []).includes(n) ? flag : `[${flag}]`;
  });
  return [
    `usage: edgemem ${words.join(" ")}${cmd.args ? ` ${cmd.args}` : ""} ${shown.join(" ")}`.trimEnd(),
    "",
    cmd.summary,
    ...(Object.keys(opts).length ? ["", "options:", ...optionLines(opts)] : []),
    "",
    "global options:",
    ...optionLines(GLOBAL),
    "",
    EXIT_HELP,
  ].join("\n");
}

// parseArgs takes only its own keys; `help` here is ours.
const parseShape = (options) => Object.fromEntries(Object.entries(options).map(([k, { help, ...o }]) => [k, o]));

/**
 * Splits the command words off: they are the first words that are not
 * option values, wherever the global options sit before them.
 */
function commandWords(argv) {
  const words = [];
  const rest = [];
  let i = 0;
  for (; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--") break;
    if (a.startsWith("-")) {
      rest.push(a);
      const name = a.replace(/^--?/, "");
      const o = GLOBAL[name] ?? Object.values(GLOBAL).find((g) => g.short === name);
      if (o?.type === "string" && !a.includes("=") && i + 1 < argv.length) rest.push(argv[++i]);
      continue;
    }
    const group = words.length === 0 ? undefined : COMMANDS[words[0]];
    if (words.length === 0 || (words.length === 1 && group?.sub)) words.push(a);
    else break;
  }
  return { words, rest: [...rest, ...argv.slice(i)] };
}

function wantsHelp(argv) {
  const end = argv.indexOf("--");
  return (end < 0 ? argv : argv.slice(0, end)).some((a) => a === "--help" || a === "-h");
}

// One line per error, so `2> log` stays greppable.
const oneLine = (s) => String(s).replace(/\s*\n\s*/g, " ");

/** Picks the target: flags first, then the environment; never both kinds. */
function target(v, env, cmd) {
  const url = v.url ?? (v.store === undefined ? env.EDGEMEM_URL : undefined);
  const dir = v.store ?? (v.url === undefined ? env.EDGEMEM_STORE : undefined);
  if (url && dir) throw usage("give a Worker (--url / EDGEMEM_URL) or a store (--store / EDGEMEM_STORE), not both");
  const namespace = v.namespace ?? undefined;
  if (url) return httpTarget({ url, token: v.token ?? env.EDGEMEM_TOKEN, namespace });
  if (dir) return localTarget({ dir, namespace, readOnly: cmd.local === "read" && v.follow === true });
  if (cmd.local === "none") return { kind: "none", request: async () => ({ status: 200, json: {} }), close: async () => {} };
  throw usage("no target: pass --url URL (with --token) or --store DIR, or set EDGEMEM_URL or EDGEMEM_STORE");
}

/**
 * Runs the CLI on `argv` (without `node cli.js`) and resolves to the exit
 * code. `io` carries the streams, the environment and an abort signal
 * (SIGINT/SIGTERM), so it can run in process too.
 */
export async function main(argv, io = {}) {
  const { out = (s) => process.stdout.write(s + "\n"), err = (s) => process.stderr.write(s + "\n"), env = process.env, signal = new AbortController().signal } = io;
  let t;
  try {
    const { words, rest } = commandWords(argv);
    const group = COMMANDS[words[0]];
    const help = wantsHelp(argv);
    if (words.length === 0) {
      if (help) return out(topHelp()), EXIT.OK;
      throw usage("no command given (edgemem --help lists them)");
    }
    if (!group) throw usage(`unknown command ${JSON.stringify(words[0])} (edgemem --help lists them)`);
    if (group.sub && words.length < 2) {
      if (help) return out(groupHelp(words[0], group)), EXIT.OK;
      throw usage(`edgemem ${words[0]} needs a subcommand: ${Object.keys(group.sub).join(", ")}`);
    }
    const cmd = group.sub ? group.sub[words[1]] : group;
    if (!cmd) throw usage(`unknown command ${JSON.stringify(words.join(" "))}: ${words[0]} takes ${Object.keys(group.sub).join(", ")}`);
    if (help) return out(commandHelp(words, cmd)), EXIT.OK;
    let parsed;
    try {
      parsed = parseArgs({ args: rest, options: parseShape({ ...GLOBAL, ...(cmd.options ?? {}) }), allowPositionals: true, strict: true });
    } catch (e) {
      throw usage(e.message);
    }
    const args = parsed.positionals;
    const wanted = cmd.args ? cmd.args.split(" ").length : 0;
    if (args.length !== wanted) throw usage(`edgemem ${words.join(" ")} takes ${cmd.args ? cmd.args : "no positional arguments"}, got ${args.length ? args.map((a) => JSON.stringify(a)).join(" ") : "none"}`);
    const absent = (cmd.required ?? []).filter((n) => parsed.values[n] === undefined || parsed.values[n] === "");
    if (absent.length) throw usage(`edgemem ${words.join(" ")} needs ${absent.map((n) => `--${n}`).join(" and ")}`);
    t = target(parsed.values, env, cmd);
    await cmd.run({ t, v: parsed.values, args, json: parsed.values.json === true, out, err, signal });
    return EXIT.OK;
  } catch (e) {
    if (e instanceof CliError) {
      err(`error: ${oneLine(e.detail)} (${e.code})`);
      return e.exit;
    }
    // A bug or an unexpected failure: say so, as a server-side error would.
    err(`error: ${oneLine(e?.message ?? e)} (${e?.code ?? "internal"})`);
    return EXIT.SERVER;
  } finally {
    await t?.close().catch(() => {});
  }
}

/** How long a command may take to wind down after SIGINT/SIGTERM. */
const SIGNAL_GRACE_MS = 2_000;
// The shell's convention for "ended by a signal".
const EXIT_SIGNALLED = 130;

function isMain() {
  // npm's bin is a symlink (or a .cmd shim) to this file: compare real paths.
  try {
    return realpathSync(process.argv[1] ?? "") === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

// Run when executed, not when imported.
if (isMain()) {
  // A signal asks the command to stop cleanly (a `--follow` exits 0); one
  // that does not finish within the grace, or a second signal, exits 130.
  const stop = new AbortController();
  for (const sig of ["SIGINT", "SIGTERM"]) {
    process.on(sig, () => {
      if (stop.signal.aborted) process.exit(EXIT_SIGNALLED);
      stop.abort();
      setTimeout(() => process.exit(EXIT_SIGNALLED), SIGNAL_GRACE_MS).unref();
    });
  }
  main(process.argv.slice(2), { signal: stop.signal }).then((code) => {
    process.exitCode = code;
  });
}
