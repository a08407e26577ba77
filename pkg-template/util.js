// Argument checks and error plumbing shared by every module of the package.

/** Every error edgemem throws. `code` is stable; see the README for the list. */
export class EdgememError extends Error {
  constructor(code, message) {
    super(message);
    this.name = "EdgememError";
    this.code = code;
  }
}

export function rethrow(err) {
  if (err instanceof EdgememError) throw err;
  if (err && err.name === "EdgememError" && typeof err.code === "string") {
    throw new EdgememError(err.code, err.message);
  }
  throw err;
}

export async function call(promiseFactory) {
  try {
    return await promiseFactory();
  } catch (err) {
    rethrow(err);
  }
}

export function invalid(field, reason) {
  return new EdgememError("invalid_input", `invalid ${field}: ${reason}`);
}

// JSON.stringify writes -0 as 0 and cannot write a number a double does not
// hold (1234.567890123456789, a BigInt); a stored number must come back
// exactly as sent. Such numbers are written as marker strings that cannot
// occur in user data (they carry a random nonce) and turned into their
// literal digits afterwards. The extra pass runs only when one was seen.
const NONCE = `${Math.random().toString(36).slice(2)}-${Date.now().toString(36)}`;
const NUMBER_MARK = `\u0000edgemem-number-${NONCE}:`;
const NUMBER_MARK_JSON = JSON.stringify(NUMBER_MARK).slice(0, -1);
const NUMBER_LITERAL = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/;

/**
 * A JSON number kept as its exact decimal text, for values a double cannot
 * hold. Pass one anywhere in stored data; read them back with
 * `{ exactNumbers: true }`.
 */
export class ExactNumber {
  /** @param {string} text a JSON number literal */
  constructor(text) {
    if (typeof text !== "string" || !NUMBER_LITERAL.test(text)) throw invalid("ExactNumber", `${JSON.stringify(text)} is not a JSON number literal`);
    this.text = text;
    Object.freeze(this);
  }
  toString() {
    return this.text;
  }
  /** The nearest double (inexact, as any double). */
  valueOf() {
    return Number(this.text);
  }
}

// JSON.stringify would turn NaN and Infinity into null silently; refuse them.
export function toJson(value, field) {
  if (value === undefined) return "{}";
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw invalid(field, "must be an object");
  }
  let marked = false;
  const text = JSON.stringify(value, (key, v) => {
    if (typeof v === "number") {
      if (!Number.isFinite(v)) throw invalid(key ? `${field}.${key}` : field, `${v} is not a finite number`);
      if (v === 0 && 1 / v < 0) {
        marked = true;
        return NUMBER_MARK + "-0";
      }
    }
    if (typeof v === "bigint") {
      marked = true;
      return NUMBER_MARK + v.toString();
    }
    if (v instanceof ExactNumber) {
      marked = true;
      return NUMBER_MARK + v.text;
    }
    return v;
  });
  if (!marked) return text;
  // A marker string is `"<mark><digits>"`: its JSON form has no escapes past the mark.
  return text.replace(new RegExp(`${escapeRegExp(NUMBER_MARK_JSON)}([-+.0-9eE]+)"`, "g"), "$1");
}

function escapeRegExp(s) {
  return s.replace(/[\\^$.*+?()[\]{}|]/g, "\\$&");
}

/** A JSON number literal's value as `[sign, digits, exponent]`, digits without leading or trailing zeros. */
function decimalParts(text) {
  const m = /^(-?)([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$/.exec(text);
  let digits = m[2] + (m[3] ?? "");
  let exp = Number(m[4] ?? 0) - (m[3] ?? "").length;
  const lead = digits.search(/[1-9]/);
  if (lead < 0) return ["", "0", 0];
  digits = digits.slice(lead);
  const trail = digits.length - digits.replace(/0+$/, "").length;
  return [m[1], digits.slice(0, digits.length - trail), exp + trail];
}

const JSON_TOKEN = /"(?:[^"\\]|\\.)*"|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/g;

/**
 * Parses JSON text; numbers a double does not hold exactly come back as
 * {@link ExactNumber}s, every other number as a number.
 */
export function parseExact(text) {
  let marked = false;
  const rewritten = text.replace(JSON_TOKEN, (tok) => {
    if (tok[0] === '"') return tok;
    const back = Number(tok);
    if (Number.isFinite(back)) {
      const a = decimalParts(tok);
      const b = decimalParts(Object.is(back, -0) ? "-0" : String(back).replace(/e\+/, "e"));
      if (a[0] === b[0] && a[1] === b[1] && a[2] === b[2]) return tok;
    }
    marked = true;
    return JSON.stringify(NUMBER_MARK + tok);
  });
  if (!marked) return JSON.parse(text);
  return JSON.parse(rewritten, (_key, v) => (typeof v === "string" && v.startsWith(NUMBER_MARK) ? new ExactNumber(v.slice(NUMBER_MARK.length)) : v));
}

/** JSON text to a value: {@link parseExact} when `exact`, else `JSON.parse`. */
export function fromJson(text, exact) {
  return exact ? parseExact(text) : JSON.parse(text);
}

export function checkId(id, field = "sessionId") {
  if (typeof id !== "string") throw invalid(field, "must be a string");
  return id;
}

export function checkCount(n, field, min, max) {
  if (!Number.isInteger(n) || n < min || n > max) throw invalid(field, `must be an integer from ${min} to ${max}`);
  return n;
}

