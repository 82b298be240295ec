/**
 * Canonical JSON (DESIGN.md §3): the bytes Python writes with
 * `json.dumps(value, sort_keys=True, separators=(",", ":"))`.
 *
 * Keys sorted by code point, no white space, every character outside printable
 * ASCII (space..tilde) escaped as lower-case `\uXXXX` (surrogate pairs above
 * U+FFFF, DEL included), integers written plainly. Non-integers, NaN and
 * Infinity are rejected so that every hash can be recomputed exactly.
 */
import type { JsonValue } from "../json.ts";

/** Thrown when a value has no canonical form (non-integer number, unsafe integer, undefined…). */
export class CanonicalJsonError extends Error {
  constructor(readonly path: string, reason: string) {
    super(`canonical JSON: ${reason} at ${path || "$"}`);
    this.name = "CanonicalJsonError";
  }
}

/** The JSON value space that canonical JSON can encode (defined in lib/json.ts). */
export type { JsonValue };

// Python's ensure_ascii escapes everything outside ' '..'~'. JSON.stringify already
// escapes '"', '\\', control characters (with Python's short forms \b \f \n \r \t and
// lower-case \u00XX) and lone surrogates; what it leaves raw is DEL and non-ASCII.
const NEEDS_ASCII_ESCAPE = /[\u007f-\uffff]/g;
const HAS_NON_ASCII = /[\u007f-\uffff]/;

function escapeToAscii(ch: string): string {
  return "\\u" + ch.charCodeAt(0).toString(16).padStart(4, "0");
}

/** Encode one string exactly as Python's `json.dumps` with `ensure_ascii=True`. */
function canonicalString(value: string): string {
  const json = JSON.stringify(value);
  // Fast path: pure printable ASCII needs no further work.
  for (let i = 0; i < json.length; i++) {
    if (json.charCodeAt(i) >= 0x7f) return json.replace(NEEDS_ASCII_ESCAPE, escapeToAscii);
  }
  return json;
}

/** Order two strings by Unicode code point, as Python sorts `str`. */
export function compareCodePoints(a: string, b: string): number {
  // Python sorts str keys by code point; JS `<` compares UTF-16 code units, which
  // differs only when a surrogate pair meets a BMP character above U+D7FF.
  if (a === b) return 0;
  const la = a.length, lb = b.length;
  const n = la < lb ? la : lb;
  for (let i = 0; i < n; i++) {
    const ca = a.codePointAt(i)!, cb = b.codePointAt(i)!;
    if (ca !== cb) return ca < cb ? -1 : 1;
    if (ca > 0xffff) i++;
  }
  return la - lb;
}

function sortedKeys(obj: Record<string, unknown>): string[] {
  const keys = Object.keys(obj);
  let ascii = true;
  for (const k of keys) {
    for (let i = 0; i < k.length; i++) {
      if (k.charCodeAt(i) >= 0xd800) {
        ascii = false;
        break;
      }
    }
    if (!ascii) break;
  }
  return ascii ? keys.sort() : keys.sort(compareCodePoints);
}

function encode(value: unknown, path: string, out: string[]): void {
  switch (typeof value) {
    case "string":
      out.push(canonicalString(value));
      return;
    case "number":
      if (!Number.isInteger(value)) {
        throw new CanonicalJsonError(
          path,
          `non-integer number ${value} (use integer units, e.g. micro-USD)`,
        );
      }
      if (!Number.isSafeInteger(value)) {
        throw new CanonicalJsonError(
          path,
          `integer ${value} is outside the exactly representable range`,
        );
      }
      out.push(value === 0 ? "0" : String(value));
      return;
    case "boolean":
      out.push(value ? "true" : "false");
      return;
    case "object": {
      if (value === null) {
        out.push("null");
        return;
      }
      if (Array.isArray(value)) {
        out.push("[");
        for (let i = 0; i < value.length; i++) {
          if (i > 0) out.push(",");
          encode(value[i], `${path}[${i}]`, out);
        }
        out.push("]");
        return;
      }
      const obj = value as Record<string, unknown>;
      out.push("{");
      let first = true;
      for (const key of sortedKeys(obj)) {
        const v = obj[key];
        if (v === undefined) throw new CanonicalJsonError(`${path}.${key}`, "undefined value");
        if (!first) out.push(",");
        first = false;
        out.push(canonicalString(key), ":");
        encode(v, `${path}.${key}`, out);
      }
      out.push("}");
      return;
    }
    default:
      throw new CanonicalJsonError(path, `a ${typeof value} has no JSON form`);
  }
}

/**
 * True when `JSON.stringify(value)` already is its canonical form up to the ASCII escaping:
 * plain objects whose keys ascend by code unit with nothing at or above U+D800 (where code-unit
 * and code-point order part) and no leading digit (V8 moves integer-like keys first), arrays,
 * strings, booleans, null and safe integers only.
 */
export function stringifiesCanonically(value: unknown): boolean {
  switch (typeof value) {
    case "string":
    case "boolean":
      return true;
    case "number":
      return Number.isSafeInteger(value);
    case "object": {
      if (value === null) return true;
      if (Array.isArray(value)) {
        for (const item of value) if (!stringifiesCanonically(item)) return false;
        return true;
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) return false;
      let last: string | undefined;
      for (const key in value) {
        if (last !== undefined && !(last < key)) return false;
        const first = key.charCodeAt(0);
        if (first >= 0x30 && first <= 0x39) return false;
        for (let i = 0; i < key.length; i++) if (key.charCodeAt(i) >= 0xd800) return false;
        last = key;
        if (!stringifiesCanonically((value as Record<string, unknown>)[key])) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

/** Canonical JSON text of `value`; throws {@link CanonicalJsonError} on values with no canonical form. */
export function canonicalJson(value: unknown): string {
  // The common case (values built in key order, like every board and row) costs one native
  // stringify; anything else takes the exact encoder, which also names what has no form.
  return stringifiesCanonically(value) ? canonicalJsonOfOrdered(value) : canonicalJsonExact(value);
}

/**
 * Canonical JSON of a value the caller built in canonical key order throughout (so only the
 * ASCII escaping is left to do): one native stringify, no walk. For anything else, use
 * {@link canonicalJson}.
 */
export function canonicalJsonOfOrdered(value: unknown): string {
  const json = JSON.stringify(value);
  return HAS_NON_ASCII.test(json) ? json.replace(NEEDS_ASCII_ESCAPE, escapeToAscii) : json;
}

/** The exact encoder alone (what {@link canonicalJson} falls back to; tests compare the two). */
export function canonicalJsonExact(value: unknown): string {
  const out: string[] = [];
  encode(value, "", out);
  return out.join("");
}

/** UTF-8 bytes of the canonical JSON of `value` (pure ASCII by construction). */
export function canonicalBytes(value: unknown): Uint8Array {
  return new TextEncoder().encode(canonicalJson(value));
}
