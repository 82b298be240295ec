/**
 * The patterns git takes from an exclude file, as it takes them (dir.c's
 * `add_patterns_from_buffer` in git 2.x): a UTF-8 byte-order mark skipped, one pattern a line, a
 * carriage return before the line's end dropped, empty lines and lines starting with `#` skipped,
 * trailing spaces trimmed unless escaped with a backslash. Used to hand the service's exclude file
 * to git as command-line patterns (lib/worktrees/keep_out.ts), which git applies exactly as the
 * same lines read from the file — only ahead of every `.gitignore`.
 */

/** Bytes of patterns handed to git on a command line at most (an argument's limit is 128 KiB). */
export const MAX_PATTERN_BYTES = 64 * 1024;

/** Trim the trailing spaces of a pattern that no backslash escapes (git's `trim_trailing_spaces`). */
export function trimTrailingSpaces(line: string): string {
  let lastSpace = -1;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === " ") {
      if (lastSpace < 0) lastSpace = i;
    } else if (c === "\\") {
      i++;
      if (i >= line.length) return line;
      lastSpace = -1;
    } else {
      lastSpace = -1;
    }
  }
  return lastSpace < 0 ? line : line.slice(0, lastSpace);
}

/**
 * The patterns of an exclude file's bytes, or undefined when they cannot be handed to git on a
 * command line with the same meaning: a negation (`!…`, which ahead of every `.gitignore` would
 * re-include what the user's rules exclude), a NUL byte, bytes that are not UTF-8, or more than
 * {@link MAX_PATTERN_BYTES}. Pure.
 */
export function positivePatterns(bytes: Uint8Array): string[] | undefined {
  if (bytes.length > MAX_PATTERN_BYTES || bytes.includes(0)) return undefined;
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return undefined;
  }
  if (text.startsWith("\uFEFF")) text = text.slice(1);
  const patterns: string[] = [];
  // Git ends the last line itself; a line is taken only once its newline is seen.
  const lines = (text.endsWith("\n") ? text : text + "\n").split("\n").slice(0, -1);
  for (const raw of lines) {
    if (raw === "" || raw.startsWith("#")) continue;
    const pattern = trimTrailingSpaces(raw.endsWith("\r") ? raw.slice(0, -1) : raw);
    if (pattern.startsWith("!")) return undefined;
    patterns.push(pattern);
  }
  return patterns;
}
