/**
 * A small glob matcher for completion signals (pure): `**` (any number of whole path segments,
 * including none), `*` (any run of characters within a segment), `?` (one character), `[...]`
 * (a class; `[!...]` or `[^...]` negates), `\x` (a literal x). Paths use `/`; wildcards never
 * match `/`. Like Python's pathlib, dot files are matched by wildcards.
 */

const MAGIC = /[*?[]/;

/** True when `text` contains glob characters (`*`, `?`, `[`), as Python's `glob.has_magic`. */
export function hasGlobChars(text: string): boolean {
  return MAGIC.test(text);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

function segmentToRegExp(segment: string): string {
  let out = "";
  for (let i = 0; i < segment.length; i++) {
    const c = segment[i];
    if (c === "\\" && i + 1 < segment.length) {
      out += escapeRegExp(segment[++i]);
    } else if (c === "*") {
      while (segment[i + 1] === "*") i++;
      out += "[^/]*";
    } else if (c === "?") {
      out += "[^/]";
    } else if (c === "[") {
      const close = segment.indexOf("]", i + 2);
      if (close === -1) {
        out += "\\[";
        continue;
      }
      let body = segment.slice(i + 1, close);
      const negate = body[0] === "!" || body[0] === "^";
      if (negate) body = body.slice(1);
      const cls = body.replace(/[\\\]^]/g, "\\$&");
      out += negate ? `(?!/)[^${cls}]` : `[${cls}]`;
      i = close;
    } else {
      out += escapeRegExp(c);
    }
  }
  return out;
}

/** Compile a glob to an anchored regular expression over `/`-separated relative paths. */
export function globToRegExp(pattern: string): RegExp {
  const segments = pattern.replace(/^\.\//, "").split("/").filter((s, i, all) =>
    s !== "" || i === all.length - 1
  );
  let out = "";
  segments.forEach((segment, i) => {
    const last = i === segments.length - 1;
    if (segment === "**") out += last ? ".*" : "(?:[^/]+/)*";
    else out += segmentToRegExp(segment) + (last ? "" : "/");
  });
  return new RegExp(`^${out}$`, "s");
}

/** True when the relative path `path` matches `pattern`. */
export function matchGlob(pattern: string, path: string): boolean {
  return globToRegExp(pattern).test(path);
}

/**
 * The fuzzy fallback pattern of a literal path (spec §4.5): `**\/<stem>*<suffix>` from its
 * basename, with stem and suffix split like Python's pathlib (`a/b/helpers.test.ts` →
 * `**\/helpers.test*.ts`).
 */
export function fuzzyPattern(literal: string): string {
  const base = literal.replace(/\/+$/, "").split("/").pop() ?? "";
  const dot = base.lastIndexOf(".");
  const hasSuffix = dot > 0 && dot < base.length - 1;
  const stem = hasSuffix ? base.slice(0, dot) : base;
  const suffix = hasSuffix ? base.slice(dot) : "";
  const esc = (s: string) => s.replace(/[*?[\\]/g, "\\$&");
  return `**/${esc(stem)}*${esc(suffix)}`;
}
