/**
 * A unified `git diff` parser (pure). Counts come from the bytes actually served, so the
 * numbers on the board always describe the text under review.
 */

/** One line of a hunk. */
export interface DiffLine {
  kind: "add" | "del" | "ctx" | "meta";
  text: string;
  /** Line number in the old file (context and deleted lines). */
  old?: number;
  /** Line number in the new file (context and added lines). */
  new?: number;
}

/** One `@@ … @@` hunk. */
export interface DiffHunk {
  header: string;
  lines: DiffLine[];
}

/** One file of a diff. */
export interface DiffFile {
  /** Path after the change (the old path for a deletion). */
  path: string;
  /** Path before the change when it differs (renames, copies). */
  oldPath?: string;
  status: "added" | "deleted" | "modified" | "renamed" | "copied";
  binary: boolean;
  added: number;
  removed: number;
  hunks: DiffHunk[];
}

/** Totals over all files. */
export interface DiffSummary {
  added: number;
  removed: number;
  files: string[];
}

const HUNK = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/;

function unquote(path: string): string {
  // git quotes paths with unusual bytes as C strings: "a/caf\303\251.txt"
  if (!path.startsWith('"')) return path;
  const body = path.slice(1, -1);
  const bytes: number[] = [];
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c !== "\\") {
      bytes.push(...new TextEncoder().encode(c));
      continue;
    }
    const next = body[++i];
    if (next === undefined) break; // a lone backslash at the end: nothing follows it
    if (/[0-7]/.test(next)) {
      bytes.push(parseInt(body.slice(i, i + 3), 8));
      i += 2;
    } else {
      bytes.push(
        ({ n: 10, t: 9, r: 13, '"': 34, "\\": 92 } as Record<string, number>)[next] ??
          next.charCodeAt(0),
      );
    }
  }
  return new TextDecoder().decode(new Uint8Array(bytes));
}

function stripPrefix(path: string): string {
  const p = unquote(path.trim());
  return p.startsWith("a/") || p.startsWith("b/") ? p.slice(2) : p;
}

/** Where the C-quoted string starting at `rest[0]` ends (its closing quote; an escaped one is not). */
function closingQuote(rest: string): number {
  for (let i = 1; i < rest.length; i++) {
    if (rest[i] === "\\") i++;
    else if (rest[i] === '"') return i;
  }
  return rest.length - 1;
}

function headerPaths(line: string): { a: string; b: string } {
  // "diff --git a/x b/x"; with spaces in names the halves are equal, so split in the middle.
  const rest = line.slice("diff --git ".length);
  if (rest.startsWith('"')) {
    const end = closingQuote(rest);
    return { a: stripPrefix(rest.slice(0, end + 1)), b: stripPrefix(rest.slice(end + 2)) };
  }
  // Only the new name needed quoting (a rename: `a/plain "b/tab\there"`): an unquoted name
  // holds no quote, so the first one opens the new name.
  const quoted = rest.indexOf('"');
  if (quoted > 0) {
    return { a: stripPrefix(rest.slice(0, quoted - 1)), b: stripPrefix(rest.slice(quoted)) };
  }
  const half = (rest.length - 1) / 2;
  if (Number.isInteger(half) && rest[half] === " ") {
    return { a: stripPrefix(rest.slice(0, half)), b: stripPrefix(rest.slice(half + 1)) };
  }
  const space = rest.indexOf(" b/");
  return { a: stripPrefix(rest.slice(0, space)), b: stripPrefix(rest.slice(space + 1)) };
}

/** Parse unified diff text into files, hunks and numbered lines. */
export function parseUnifiedDiff(text: string): DiffFile[] {
  const files: DiffFile[] = [];
  let file: DiffFile | undefined;
  let hunk: DiffHunk | undefined;
  let oldLine = 0, newLine = 0;
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  for (const line of lines) {
    if (line.startsWith("diff --git ")) {
      const { a, b } = headerPaths(line);
      file = { path: b, status: "modified", binary: false, added: 0, removed: 0, hunks: [] };
      if (a !== b) file.oldPath = a;
      files.push(file);
      hunk = undefined;
      continue;
    }
    if (!file) continue;
    if (hunk) {
      const c = line[0];
      if (c === "+") {
        hunk.lines.push({ kind: "add", text: line.slice(1), new: newLine++ });
        file.added++;
        continue;
      }
      if (c === "-") {
        hunk.lines.push({ kind: "del", text: line.slice(1), old: oldLine++ });
        file.removed++;
        continue;
      }
      if (c === " " || line === "") {
        hunk.lines.push({ kind: "ctx", text: line.slice(1), old: oldLine++, new: newLine++ });
        continue;
      }
      if (c === "\\") {
        hunk.lines.push({ kind: "meta", text: line });
        continue;
      }
    }
    const m = HUNK.exec(line);
    if (m) {
      oldLine = Number(m[1]);
      newLine = Number(m[2]);
      hunk = { header: line, lines: [] };
      file.hunks.push(hunk);
      continue;
    }
    hunk = undefined;
    if (line.startsWith("new file mode")) file.status = "added";
    else if (line.startsWith("deleted file mode")) file.status = "deleted";
    else if (line.startsWith("rename from ")) {
      file.status = "renamed";
      file.oldPath = unquote(line.slice("rename from ".length));
    } else if (line.startsWith("rename to ")) file.path = unquote(line.slice("rename to ".length));
    else if (line.startsWith("copy from ")) {
      file.status = "copied";
      file.oldPath = unquote(line.slice("copy from ".length));
    } else if (line.startsWith("copy to ")) file.path = unquote(line.slice("copy to ".length));
    else if (line.startsWith("Binary files ") || line === "GIT binary patch") file.binary = true;
    else if (line.startsWith("+++ ") && line !== "+++ /dev/null") {
      file.path = stripPrefix(line.slice(4));
    } else if (line.startsWith("--- ") && line !== "--- /dev/null" && file.status !== "added") {
      const old = stripPrefix(line.slice(4));
      if (old !== file.path) file.oldPath = old;
    }
  }
  for (const f of files) if (f.status === "deleted" && f.oldPath) f.path = f.oldPath;
  return files;
}

/** Added and removed line counts and the changed paths. */
export function summarizeDiff(files: DiffFile[]): DiffSummary {
  let added = 0, removed = 0;
  for (const f of files) {
    added += f.added;
    removed += f.removed;
  }
  return { added, removed, files: files.map((f) => f.path) };
}
