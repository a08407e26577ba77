#!/usr/bin/env node
// `edgemem`: operate a live agent's memory from a shell, against a Worker
// (`--url`, `--token`) or a store on disk (`--store DIR`). Exit codes and
// `--json` output are for scripts; see `edgemem --help`.
import { readFileSync, realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { COMMANDS } from "./cli_commands.js";
import { CliError, EXIT, HTTP_TIMEOUT_MS, httpTarget, localTarget, usage } from "./cli_transport.js";

/** Options every command takes. */
const GLOBAL = {
  url: { type: "string", help: "the Worker's base URL (env EDGEMEM_URL)" },
  token: { type: "string", help: "its API key, sent as a Bearer token (env EDGEMEM_TOKEN)" },
  store: { type: "string", help: "a local store directory instead of a Worker (env EDGEMEM_STORE)" },
  "privacy-key-file": { type: "string", meta: "FILE", help: "with --store: a file holding the store's privacy key (env EDGEMEM_PRIVACY_KEY)" },
  "encryption-key-file": { type: "string", meta: "FILE", help: "a file holding the encryption key: a Worker tenant's (base64url, 32 bytes), or a store's passphrase (env EDGEMEM_ENCRYPTION_KEY)" },
  namespace: { type: "string", help: "the tenant namespace" },
  json: { type: "boolean", help: "print the raw JSON response (JSON Lines for logs); errors as JSON on stderr" },
  help: { type: "boolean", short: "h", help: "show help (also: edgemem help [COMMAND])" },
  version: { type: "boolean", help: "print the package version" },
};

const EXIT_HELP = [
  "exit codes:",
  "  0  ok",
  "  1  refused: a rule, quota, consent, conflict or invalid input (403 consent_required and *_quota_exceeded too)",
  "  2  usage: bad or missing arguments",
  "  3  auth: 401, or a key that may not do this (unauthorized, scope_forbidden, namespace_forbidden, auth_not_configured)",
  "  4  not found (memory forget --id: none of the ids existed)",
  `  5  server or network error (HTTP requests time out after ${HTTP_TIMEOUT_MS / 1000} s)`,
  'with --json an error is one line on stderr: {"error":{"code","detail","exit"}}',
].join("\n");

const metavar = (name, o) => o.meta ?? name.toUpperCase().replace(/-/g, "_");

function optionLines(options) {
  return Object.entries(options).map(([name, o]) => {
    const flag = `${o.short ? `-${o.short}, ` : ""}--${name}${o.type === "string" ? ` ${metavar(name, o)}` : ""}`;
    return `  ${flag.padEnd(30)} ${o.help ?? ""}${o.multiple ? " (repeatable)" : ""}`;
  });
}

function topHelp() {
  const lines = ["usage: edgemem [--url URL --token T | --store DIR] [--namespace NS] [--json] COMMAND ...", "", "commands:"];
  for (const [name, g] of Object.entries(COMMANDS)) {
    if (g.sub) for (const [sub, cmd] of Object.entries(g.sub)) lines.push(`  ${`${name} ${sub}`.padEnd(20)} ${cmd.summary}`);
    else lines.push(`  ${name.padEnd(20)} ${g.summary}`);
  }
  return [...lines, "", "options:", ...optionLines(GLOBAL), "", "`edgemem COMMAND --help` shows a command's options.", "", EXIT_HELP].join("\n");
}

function groupHelp(name, g) {
  return [`usage: edgemem ${name} SUBCOMMAND ...  (${g.summary})`, "", "subcommands:", ...Object.entries(g.sub).map(([sub, cmd]) => `  ${sub.padEnd(12)} ${cmd.summary}`), "", `\`edgemem ${name} SUBCOMMAND --help\` shows its options.`].join("\n");
}

function commandHelp(words, cmd) {
  const opts = cmd.options ?? {};
  const shown = Object.keys(opts).map((n) => {
    const flag = opts[n].type === "boolean" ? `--${n}` : `--${n} ${metavar(n, opts[n])}`;
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

// parseArgs takes only its own keys; `help` and `meta` here are ours.
const parseShape = (options) => Object.fromEntries(Object.entries(options).map(([k, { help, meta, ...o }]) => [k, o]));

/**
 * Splits the command words off: they are the first words that are not
 * option values, wherever the global options sit before them.
 */
function commandWords(argv) {
  const words = [];
  // `edgemem help prompt set` names its command after the word `help`.
  const first = () => (words[0] === "help" ? 1 : 0);
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
    const group = words.length === first() ? undefined : COMMANDS[words[first()]];
    if (words.length === first() || (words.length === first() + 1 && group?.sub)) words.push(a);
    else break;
  }
  return { words, rest: [...rest, ...argv.slice(i)] };
}

/** Whether one of `flags` is given before `--` (before parsing, which may fail). */
function hasFlag(argv, ...flags) {
  const end = argv.indexOf("--");
  return (end < 0 ? argv : argv.slice(0, end)).some((a) => flags.includes(a));
}

function packageVersion() {
  return JSON.parse(readFileSync(new URL("./package.json", import.meta.url), "utf8")).version;
}

/**
 * The local store's privacy key: `--privacy-key-file` (one trailing
 * newline dropped, as `echo` and editors leave one), else
 * EDGEMEM_PRIVACY_KEY. A Worker holds its own key: naming a file for one
 * is a mistake worth stopping.
 */
function privacyKeyOf(v, env, local) {
  const path = v["privacy-key-file"];
  if (path === undefined) return env.EDGEMEM_PRIVACY_KEY || undefined;
  if (!local) throw usage("--privacy-key-file is for a local store (--store); a Worker holds its own key");
  try {
    return readFileSync(path, "utf8").replace(/\r?\n$/, "");
  } catch (err) {
    throw usage(`cannot read --privacy-key-file ${path}: ${err.code ?? err.message}`);
  }
}

/** The encryption key: `--encryption-key-file` (one trailing newline dropped), else EDGEMEM_ENCRYPTION_KEY. */
function encryptionKeyOf(v, env) {
  const path = v["encryption-key-file"];
  if (path === undefined) return env.EDGEMEM_ENCRYPTION_KEY || undefined;
  try {
    return readFileSync(path, "utf8").replace(/\r?\n$/, "");
  } catch (err) {
    throw usage(`cannot read --encryption-key-file ${path}: ${err.code ?? err.message}`);
  }
}

// One line per error, so `2> log` stays greppable.
const oneLine = (s) => String(s).replace(/\s*\n\s*/g, " ");

/** Picks the target: flags first, then the environment; never both kinds. */
function target(v, env, cmd) {
  const url = v.url ?? (v.store === undefined ? env.EDGEMEM_URL : undefined);
  const dir = v.store ?? (v.url === undefined ? env.EDGEMEM_STORE : undefined);
  if (url && dir) throw usage("give a Worker (--url / EDGEMEM_URL) or a store (--store / EDGEMEM_STORE), not both");
  const namespace = v.namespace ?? undefined;
  const privacyKey = privacyKeyOf(v, env, Boolean(dir));
  const encryptionKey = encryptionKeyOf(v, env);
  if (url) return httpTarget({ url, token: v.token ?? env.EDGEMEM_TOKEN, namespace, encryptionKey });
  if (dir) return localTarget({ dir, namespace, privacyKey, passphrase: encryptionKey, readOnly: cmd.local === "read" && v.follow === true });
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
  // Touched only by `--file -`: process.stdin is not even created otherwise.
  const stdin = io.stdin ?? { [Symbol.asyncIterator]: () => process.stdin[Symbol.asyncIterator]() };
  const json = hasFlag(argv, "--json");
  const fail = (exit, code, detail) => {
    err(json ? JSON.stringify({ error: { code, detail: String(detail), exit } }) : `error: ${oneLine(detail)} (${code})`);
    return exit;
  };
  let t;
  try {
    if (hasFlag(argv, "--version")) return out(packageVersion()), EXIT.OK;
    const { words, rest } = commandWords(argv);
    let help = hasFlag(argv, "--help", "-h");
    if (words[0] === "help") {
      words.shift();
      help = true;
    }
    const group = COMMANDS[words[0]];
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
    await cmd.run({ t, v: parsed.values, args, json: parsed.values.json === true, out, err, signal, stdin });
    return EXIT.OK;
  } catch (e) {
    if (e instanceof CliError) return fail(e.exit, e.code, e.detail);
    // A bug or an unexpected failure: say so, as a server-side error would.
    return fail(EXIT.SERVER, typeof e?.code === "string" ? e.code : "internal", e?.message ?? e);
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
  // The reader went away (`| head`): what it did not read is not wanted,
  // so stop as on a signal and print nothing more. Exit 0: the command did
  // not fail, and a stack trace or 1 would break `set -o pipefail` scripts.
  let closed = false;
  process.stdout.on("error", (err) => {
    if (err.code !== "EPIPE") throw err;
    if (closed) return;
    closed = true;
    stop.abort();
    setTimeout(() => process.exit(EXIT.OK), SIGNAL_GRACE_MS).unref();
  });
  const out = (s) => void (closed || process.stdout.write(s + "\n"));
  main(process.argv.slice(2), { signal: stop.signal, out }).then((code) => {
    process.exitCode = closed ? EXIT.OK : code;
  });
}
