/**
 * The YAML text of a task spec, written directly instead of through the `yaml` package's
 * document model (which cost ~170 µs a task, a fifth of a task create's CPU under a burst of
 * webhook issues). It covers what a task holds — objects, arrays, strings, integers, booleans,
 * null — in block style, and reads back through any YAML 1.2 parser to exactly the value given
 * (`spec_yaml_test.ts` walks hostile strings and random ones through `yaml`'s parser):
 *
 * - a string is plain only when it cannot be read as anything else (it starts with a letter or
 *   `_`, holds only letters, digits, space, `_ . / - :`, ends with neither space nor `:`, never
 *   has `: ` inside and is no YAML keyword such as `true` or `null`);
 * - a string of several printable lines is a literal block (`|-`, `|`, `|+` keep its line ends
 *   exactly), the way the `yaml` package wrote goals before;
 * - anything else is double-quoted, every character outside YAML's printable set escaped.
 */

/** What a spec holds: JSON values without non-integers. */
type SpecValue = string | number | boolean | null | undefined | SpecValue[] | {
  [key: string]: SpecValue;
};

/** The YAML text of `value` (an object): one `key: value` line per field, nested in blocks. */
export function specYaml(value: Record<string, unknown>): string {
  const out: string[] = [];
  mapping(value as Record<string, SpecValue>, "", out);
  return out.join("");
}

const PLAIN = /^[A-Za-z_](?:[A-Za-z0-9_ ./-]|:(?! ))*$/;
const KEYWORDS = /^(?:true|false|null|yes|no|on|off|y|n)$/i;
/**
 * Characters a literal block may hold as they are: YAML's printable ones less those a parser
 * might take for a line break or a byte order mark (U+0085, U+2028, U+2029, U+FEFF).
 */
const BLOCK_SAFE =
  /^[\t\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\u{10000}-\u{10ffff}]*$/u;
/** Characters a double-quoted scalar may hold as they are. */
const QUOTED_SAFE =
  /[\x20-\x21\x23-\x5b\x5d-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd]/u;

function mapping(map: Record<string, SpecValue>, indent: string, out: string[]): void {
  for (const key of Object.keys(map)) {
    const v = map[key];
    if (v === undefined) continue;
    out.push(indent, scalarKey(key), ":");
    value(v, indent, out);
  }
}

/** The rest of a `key:` or `-` line for `v`, and its nested lines. */
function value(v: SpecValue, indent: string, out: string[]): void {
  if (Array.isArray(v)) {
    if (v.length === 0) return void out.push(" []\n");
    out.push("\n");
    sequence(v, indent, out);
  } else if (v !== null && typeof v === "object") {
    if (Object.keys(v).every((k) => v[k] === undefined)) return void out.push(" {}\n");
    out.push("\n");
    mapping(v, indent + "  ", out);
  } else {
    out.push(" ", scalar(v, indent + "  "), "\n");
  }
}

function sequence(items: SpecValue[], indent: string, out: string[]): void {
  for (const item of items) {
    if (item !== null && typeof item === "object" && !Array.isArray(item)) {
      const keys = Object.keys(item).filter((k) => item[k] !== undefined);
      if (keys.length === 0) {
        out.push(indent, "- {}\n");
        continue;
      }
      // `- first: …` then the other keys under it, two spaces in.
      const inner: string[] = [];
      mapping(item, indent + "  ", inner);
      out.push(indent, "- ", inner.join("").slice(indent.length + 2));
    } else if (Array.isArray(item) && item.length > 0) {
      out.push(indent, "-\n");
      sequence(item, indent + "  ", out);
    } else {
      out.push(indent, "-");
      value(item ?? null, indent, out);
    }
  }
}

function scalarKey(key: string): string {
  return isPlain(key) ? key : quoted(key);
}

/** True when `s` written bare reads back as this string and nothing else. */
function isPlain(s: string): boolean {
  return PLAIN.test(s) && !KEYWORDS.test(s) && !s.endsWith(" ") && !s.endsWith(":");
}

function scalar(v: string | number | boolean | null | undefined, indent: string): string {
  if (v === null || v === undefined) return "null";
  if (typeof v === "boolean") return v ? "true" : "false";
  if (typeof v === "number") {
    if (!Number.isFinite(v)) {
      throw new TypeError(`a task spec holds finite numbers only, not ${v}`);
    }
    return Object.is(v, -0) ? "0" : String(v);
  }
  if (v.includes("\n")) return block(v, indent) ?? quoted(v);
  return isPlain(v) ? v : quoted(v);
}

/** A literal block scalar for a multi-line string, or undefined when it would not read back. */
function block(v: string, indent: string): string | undefined {
  // A first line starting with white space would set the block's indentation itself.
  if (!BLOCK_SAFE.test(v) || /^[ \t]/.test(v) || v.startsWith("\n")) return undefined;
  const trailing = /\n*$/.exec(v)![0].length;
  const chomp = trailing === 0 ? "-" : trailing === 1 ? "" : "+";
  const body = trailing === 0 ? v : v.slice(0, -1);
  const lines = body.split("\n").map((line) => line === "" ? "" : indent + line);
  return `|${chomp}\n${lines.join("\n")}`;
}

/** A double-quoted scalar: `"` and `\` escaped, and every character YAML does not print. */
function quoted(v: string): string {
  let out = '"';
  for (let i = 0; i < v.length; i++) {
    const c = v[i];
    if (QUOTED_SAFE.test(c)) {
      out += c;
      continue;
    }
    const code = v.charCodeAt(i);
    // A surrogate pair is one printable character; a lone surrogate is escaped.
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < v.length) {
      const low = v.charCodeAt(i + 1);
      if (low >= 0xdc00 && low <= 0xdfff) {
        out += c + v[++i];
        continue;
      }
    }
    out += ESCAPES[c] ?? `\\u${code.toString(16).padStart(4, "0")}`;
  }
  return out + '"';
}

const ESCAPES: Record<string, string> = {
  '"': '\\"',
  "\\": "\\\\",
  "\n": "\\n",
  "\t": "\\t",
  "\r": "\\r",
};
