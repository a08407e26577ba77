// The agent's own state: per-agent profiles (`memory.profiles`) and user
// schema versions with migration chains (`memory.schemas`).
//
// A chain is either declarative (`schemas.set`: rename, move, set_default,
// remove; it runs inside the store, so the Worker runs the same) or JS
// functions (`schemas.register`: npm only). Either runs on read when the
// stored state is older, and is written back once; a migration that throws
// leaves the stored state untouched.
import { EdgememError, checkId, invalid, toJson } from "./util.js";
import { LIMITS } from "./limits.js";

const KINDS = ["session_data", "profile"];

function checkKind(kind) {
  if (!KINDS.includes(kind)) throw new EdgememError("not_found", `schema kind ${JSON.stringify(kind)} not found (one of ${KINDS.join(", ")})`);
  return kind;
}

/** User schemas (`memory.schemas`). */
export class Schemas {
  #api;
  /** kind -> {version, steps: Map<from, fn>} registered as JS functions. */
  #chains = new Map();

  constructor(api) {
    this.#api = api;
  }

  /**
   * Registers a declarative chain that runs inside the store:
   * `{version, migrations: [{from, steps: [{rename: {from, to}} | {move: {from: [...], to: [...]}} | {set_default: {path, value}} | {remove: {path}}]}]}`.
   */
  async set(kind, schema) {
    return this.#api("PUT", `/v1/schemas/${checkKind(kind)}`, "", schema);
  }

  /** The declarative schema of `kind`, or `null`. */
  async get(kind) {
    try {
      return await this.#api("GET", `/v1/schemas/${checkKind(kind)}`);
    } catch (err) {
      if (err.code === "not_found") return null;
      throw err;
    }
  }

  /**
   * Registers a chain of JS functions: `migrations[v]` turns state of
   * version `v` into version `v + 1` (it may be async), for each `v` from 1
   * to `version - 1`.
   */
  register(kind, { version, migrations = {} } = {}) {
    checkKind(kind);
    if (!Number.isInteger(version) || version < 1 || version > LIMITS.USER_SCHEMA_VERSION_MAX) throw invalid("version", `must be an integer from 1 to ${LIMITS.USER_SCHEMA_VERSION_MAX}`);
    for (let v = 1; v < version; v++) {
      if (typeof migrations[v] !== "function") throw invalid(`migrations[${v}]`, "must be a function (state) => state");
    }
    this.#chains.set(kind, { version, migrations });
  }

  /** The newest version a JS chain reaches, or `undefined`. */
  newest(kind) {
    return this.#chains.get(kind)?.version;
  }

  /**
   * Runs the JS chain of `kind` on `state` at `from`; `undefined` when no
   * chain applies. Throws `schema_version_too_new` or `migration_failed`.
   */
  async run(kind, state, from) {
    const chain = this.#chains.get(kind);
    if (!chain || from === chain.version) return undefined;
    if (from > chain.version) throw new EdgememError("schema_version_too_new", `${kind} is at version ${from}; the newest migration reaches ${chain.version}`);
    let out = structuredClone(state ?? {});
    for (let v = from; v < chain.version; v++) {
      try {
        out = await chain.migrations[v](out);
      } catch (err) {
        throw new EdgememError("migration_failed", `migration of ${kind} v${v} failed, nothing was written: ${err?.message ?? err}`);
      }
      if (out === null || typeof out !== "object" || Array.isArray(out)) throw new EdgememError("migration_failed", `migration of ${kind} v${v} returned ${Array.isArray(out) ? "an array" : typeof out}, not an object; nothing was written`);
    }
    return { state: out, to: chain.version };
  }
}

const profilePath = (agentId, leaf = "") => `/v1/agents/${encodeURIComponent(checkId(agentId, "agentId"))}/profile${leaf}`;

/** Per-agent profiles (`memory.profiles`). */
export class Profiles {
  #api;
  #schemas;

  constructor(api, schemas) {
    this.#api = api;
    this.#schemas = schemas;
  }

  /** `{agent_id, fields, schema_version, created_at, updated_at}`, migrated to the newest version; `null` when there is none. */
  async get(agentId) {
    let p;
    try {
      p = await this.#api("GET", profilePath(agentId));
    } catch (err) {
      if (err.code === "not_found") return null;
      throw err;
    }
    const migrated = await this.#schemas.run("profile", p.fields, p.schema_version);
    if (!migrated) return p;
    try {
      return await this.#api("POST", profilePath(agentId, "/migrate"), "", { from_version: p.schema_version, to_version: migrated.to, fields: migrated.state });
    } catch (err) {
      // Someone else migrated or wrote it meanwhile: read what they wrote.
      if (err.code === "schema_version_changed") return this.get(agentId);
      throw err;
    }
  }

  /** A deep-frozen copy of the profile (or `null`), safe to hand around. */
  async snapshot(agentId) {
    const freeze = (v) => {
      if (v && typeof v === "object") {
        Object.values(v).forEach(freeze);
        Object.freeze(v);
      }
      return v;
    };
    return freeze(await this.get(agentId));
  }

  /** Merges `fields` (a `null` removes one), or with `replace` replaces them all. */
  async set(agentId, fields, { replace = false, schemaVersion } = {}) {
    if (fields === null || typeof fields !== "object" || Array.isArray(fields)) throw invalid("fields", "must be an object");
    const version = schemaVersion ?? this.#schemas.newest("profile");
    if (!replace && this.#schemas.newest("profile") !== undefined) await this.get(agentId);
    const body = toJson({ fields, replace, ...(version === undefined ? {} : { schema_version: version }) }, "profile");
    return this.#api("PUT", profilePath(agentId), "", body);
  }

  /**
   * Adds `by` to a field atomically and resolves to the new value: decimal
   * strings add exactly as decimals, integers as integers; a non-integer
   * number is refused (`invalid_input`), never rounded.
   */
  async increment(agentId, field, by = 1) {
    return (await this.#api("POST", profilePath(agentId, "/increment"), "", { field, by })).value;
  }

  /** Deletes the profile; resolves to whether it existed. */
  async delete(agentId) {
    return (await this.#api("DELETE", profilePath(agentId))).deleted;
  }
}
