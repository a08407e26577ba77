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

// JSON.stringify writes -0 as 0; a stored number must come back exactly as
// sent, so -0 is written as a marker string that cannot occur in user data
// (it carries a random nonce) and turned into the literal -0 afterwards. The
// extra pass runs only when a -0 was seen.
const NEG_ZERO = `\u0000edgemem-neg-zero-${Math.random().toString(36).slice(2)}-${Date.now().toString(36)}`;
const NEG_ZERO_JSON = JSON.stringify(NEG_ZERO);

// JSON.stringify would turn NaN and Infinity into null silently; refuse them.
export function toJson(value, field) {
  if (value === undefined) return "{}";
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw invalid(field, "must be an object");
  }
  let negZero = false;
  const text = JSON.stringify(value, (key, v) => {
    if (typeof v === "number") {
      if (!Number.isFinite(v)) throw invalid(key ? `${field}.${key}` : field, `${v} is not a finite number`);
      if (v === 0 && 1 / v < 0) {
        negZero = true;
        return NEG_ZERO;
      }
    }
    if (typeof v === "bigint") throw invalid(key ? `${field}.${key}` : field, "BigInt is not JSON");
    return v;
  });
  return negZero ? text.replaceAll(NEG_ZERO_JSON, "-0") : text;
}

export function checkId(id, field = "sessionId") {
  if (typeof id !== "string") throw invalid(field, "must be a string");
  return id;
}

export function checkCount(n, field, min, max) {
  if (!Number.isInteger(n) || n < min || n > max) throw invalid(field, `must be an integer from ${min} to ${max}`);
  return n;
}

