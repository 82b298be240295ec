/**
 * Strict JSON for request bodies (pure): UTF-8 that decodes without replacement, text that
 * parses, and no object with the same key twice (`JSON.parse` would silently keep the last one,
 * so `{"decision":"bogus","decision":"approve"}` would pass a check a reader sees failing).
 */

/** Why a body was refused: a snake_case code and the words naming the place. */
export interface StrictJsonError {
  code: "invalid_utf8" | "invalid_json" | "duplicate_key";
  message: string;
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/** Decode and parse `bytes`, or say exactly what is wrong with them. */
export function parseStrictJson(
  bytes: Uint8Array,
): { ok: true; value: unknown; text: string } | { ok: false; error: StrictJsonError } {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    const at = firstInvalidUtf8(bytes);
    return {
      ok: false,
      error: {
        code: "invalid_utf8",
        message: `request body is not valid UTF-8 (${
          at < bytes.length
            ? `bad byte 0x${bytes[at].toString(16).padStart(2, "0")} at offset ${at}`
            : "it ends inside a character"
        }): send the JSON encoded as UTF-8`,
      },
    };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return {
      ok: false,
      error: { code: "invalid_json", message: `request body is not JSON: ${(e as Error).message}` },
    };
  }
  const duplicate = findDuplicateKey(text);
  if (duplicate) {
    return {
      ok: false,
      error: {
        code: "duplicate_key",
        message: `request body repeats the key ${JSON.stringify(duplicate.key)} in the object at ${
          duplicate.path || "the top level"
        }: send each field once`,
      },
    };
  }
  return { ok: true, value, text };
}

/** The offset of the first byte starting a sequence that is not UTF-8 (`bytes.length` if none). */
function firstInvalidUtf8(bytes: Uint8Array): number {
  for (let i = 0; i < bytes.length;) {
    const b = bytes[i];
    const need = b < 0x80
      ? 0
      : b >= 0xc2 && b <= 0xdf
      ? 1
      : b >= 0xe0 && b <= 0xef
      ? 2
      : b >= 0xf0 && b <= 0xf4
      ? 3
      : -1;
    if (need < 0) return i;
    // Second-byte ranges that exclude overlongs, surrogates and code points above U+10FFFF.
    const lo = b === 0xe0 ? 0xa0 : b === 0xf0 ? 0x90 : 0x80;
    const hi = b === 0xed ? 0x9f : b === 0xf4 ? 0x8f : 0xbf;
    for (let k = 1; k <= need; k++) {
      const c = bytes[i + k];
      if (c === undefined) return i;
      if (k === 1 ? c < lo || c > hi : c < 0x80 || c > 0xbf) return i; // a broken sequence
    }
    i += need + 1;
  }
  return bytes.length;
}

interface Frame {
  keys: Set<string> | undefined; // undefined for arrays
  expectKey: boolean;
  path: string;
  lastKey?: string;
  index: number;
}

/** The first key repeated within one object of a JSON text (which must parse), or undefined. */
export function findDuplicateKey(text: string): { key: string; path: string } | undefined {
  const stack: Frame[] = [];
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    const top = stack[stack.length - 1];
    if (ch === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      if (top?.keys && top.expectKey) {
        const key = JSON.parse(text.slice(i, j + 1)) as string;
        if (top.keys.has(key)) return { key, path: top.path };
        top.keys.add(key);
        top.lastKey = key;
        top.expectKey = false;
      }
      i = j;
    } else if (ch === "{" || ch === "[") {
      const path = top === undefined
        ? ""
        : top.keys
        ? (top.path ? `${top.path}.` : "") + top.lastKey
        : `${top.path}[${top.index}]`;
      stack.push({
        keys: ch === "{" ? new Set() : undefined,
        expectKey: ch === "{",
        path,
        index: 0,
      });
    } else if (ch === "}" || ch === "]") {
      stack.pop();
    } else if (ch === ",") {
      if (top?.keys) top.expectKey = true;
      else if (top) top.index++;
    }
  }
  return undefined;
}
