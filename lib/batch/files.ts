/**
 * The files a batch request shows (DESIGN.md §15): the task's `owned_files` plus
 * `batch.context_files`, read from the commit its patch will apply to (globs match the commit's
 * tracked files). A named file that does not exist is shown as new; binary and oversized files
 * are named with the reason their text is left out.
 */
import { git } from "../git/git.ts";
import { hasGlobChars, matchGlob } from "../janitor/glob.ts";
import type { ShownFile } from "./prompt.ts";

/** The largest file whose text a request carries. */
const MAX_FILE_BYTES = 200_000;
/** The most text a request carries in all (a model's context is finite and paid for). */
const MAX_TOTAL_BYTES = 600_000;

function normalise(path: string): string {
  return path.replace(/^\.\//, "").replace(/\/+$/, "");
}

/** The paths `patterns` name among `tracked` (a literal that is no file stays, as a new file). */
export function namedPaths(patterns: readonly string[], tracked: readonly string[]): string[] {
  const out: string[] = [];
  const add = (p: string) => {
    if (!out.includes(p)) out.push(p);
  };
  for (const raw of patterns) {
    const pattern = normalise(raw);
    if (hasGlobChars(pattern)) {
      for (const t of tracked) if (matchGlob(pattern, t)) add(t);
      continue;
    }
    const under = tracked.filter((t) => t.startsWith(pattern + "/"));
    if (under.length > 0) under.forEach(add); // a directory
    else add(pattern);
  }
  return out;
}

/** The files `patterns` name, as they are at `commit` of the repository at `root`. */
export async function filesAt(
  root: string,
  commit: string,
  patterns: readonly string[],
): Promise<ShownFile[]> {
  if (patterns.length === 0) return [];
  const ls = await git(["ls-tree", "-r", "-z", "--name-only", commit], { cwd: root });
  const tracked = ls.stdout.split("\0").filter((p) => p !== "");
  const exists = new Set(tracked);
  let total = 0;
  const files: ShownFile[] = [];
  for (const path of namedPaths(patterns, tracked)) {
    if (!exists.has(path)) {
      files.push({ path });
      continue;
    }
    const bytes = (await git(["cat-file", "blob", `${commit}:${path}`], { cwd: root })).bytes;
    if (bytes.includes(0)) files.push({ path, omitted: "binary file: its text is not shown" });
    else if (bytes.length > MAX_FILE_BYTES || total + bytes.length > MAX_TOTAL_BYTES) {
      files.push({ path, omitted: `${bytes.length} bytes: too large to show in a request` });
    } else {
      total += bytes.length;
      files.push({ path, text: new TextDecoder().decode(bytes) });
    }
  }
  return files;
}
