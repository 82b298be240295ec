/**
 * What of the user's checkout a worktree environment takes (DESIGN.md §13):
 * - copy: the untracked files — ignored ones too, that is the point (`.env`) — that the `copy`
 *   patterns and the workspace's `.worktreeinclude` match, with git's own gitignore matching
 *   (`git ls-files --others --ignored --exclude-from`), so the patterns mean exactly what they
 *   mean in a `.gitignore`. Tracked files are never copied (the worktree has them from its
 *   commit); nothing under `.git/` or `.sdd/` and nothing inside a linked directory is listed.
 * - link: the paths the `symlink` entries name (one `*` per segment expands among the
 *   checkout's entries, never through a link), unless the repository tracks them.
 */
import { join } from "node:path";
import { git, splitZ } from "../git/git.ts";
import { globToRegExp, hasGlobChars } from "../janitor/glob.ts";

/** The file at the workspace root whose patterns add to `copy` (as Claude Code reads it). */
export const WORKTREE_INCLUDE = ".worktreeinclude";

/** The pattern lines of the workspace's `.worktreeinclude` (no blanks, no comments; [] without one). */
export async function readWorktreeInclude(root: string): Promise<string[]> {
  let text: string;
  try {
    text = await Deno.readTextFile(join(root, WORKTREE_INCLUDE));
  } catch {
    return [];
  }
  return text.split(/\r?\n/).map((l) => l.replace(/\s+$/, "")).filter((l) =>
    l !== "" && !l.startsWith("#")
  );
}

/** True for a path inside `.git/` or `.sdd/` (never copied or linked). */
function isServiceOrGit(path: string): boolean {
  const first = path.split("/")[0];
  return first === ".git" || first === ".sdd";
}

/** Options of {@link copySources}. */
export interface CopySourcesOptions {
  /** Paths linked instead (as {@link linkSources} found them): nothing inside them is copied. */
  linked?: readonly string[];
  /** Ends the `git ls-files` it runs. */
  signal?: AbortSignal;
}

/**
 * The untracked files of the checkout at `root` that `patterns` (gitignore syntax, in order, so
 * a later `!pattern` takes an earlier match back) match, sorted; nothing inside the `linked`
 * paths.
 */
export async function copySources(
  root: string,
  patterns: readonly string[],
  { linked = [], signal }: CopySourcesOptions = {},
): Promise<string[]> {
  if (patterns.length === 0) return [];
  const file = await Deno.makeTempFile({ prefix: "service-copy-", suffix: ".patterns" });
  try {
    await Deno.writeTextFile(file, patterns.join("\n") + "\n");
    const out = await git([
      "ls-files",
      "-z",
      "--others",
      "--ignored",
      `--exclude-from=${file}`,
      "--",
      ".",
      ":(exclude,top).sdd",
      ":(exclude,top).git",
      ...linked.map((p) => `:(exclude,top,literal)${p}`),
    ], { cwd: root, signal, timeoutMs: 120_000 });
    return splitZ(out.stdout).filter((p) => !isServiceOrGit(p)).sort();
  } finally {
    await Deno.remove(file).catch(() => {});
  }
}

/** What the `symlink` entries name in the checkout. */
export interface LinkSources {
  /** Paths to link, sorted. */
  found: string[];
  /** Entries that name nothing in the checkout. */
  missing: string[];
  /** Paths the repository tracks: the worktree has them from its commit, so they are not linked. */
  tracked: string[];
}

/** The paths of the checkout at `root` that one entry names (`*` expands within a segment). */
async function expand(root: string, entry: string): Promise<string[]> {
  let found = [""];
  const segments = entry.split("/");
  for (const [i, segment] of segments.entries()) {
    const last = i === segments.length - 1;
    const next: string[] = [];
    for (const dir of found) {
      if (!hasGlobChars(segment)) {
        const path = dir === "" ? segment : `${dir}/${segment}`;
        const info = await Deno.lstat(join(root, path)).catch(() => undefined);
        if (info && (last || info.isDirectory)) next.push(path);
        continue;
      }
      const match = globToRegExp(segment);
      let entries: Deno.DirEntry[] = [];
      try {
        entries = await Array.fromAsync(Deno.readDir(join(root, dir)));
      } catch { /* not a directory */ }
      for (const e of entries) {
        // An intermediate segment is never followed through a link.
        if (match.test(e.name) && (last || e.isDirectory)) {
          next.push(dir === "" ? e.name : `${dir}/${e.name}`);
        }
      }
    }
    found = next;
  }
  return found.filter((p) => p !== "" && !isServiceOrGit(p));
}

/** Expand the `symlink` entries in the checkout at `root`. */
export async function linkSources(
  root: string,
  entries: readonly string[],
  signal?: AbortSignal,
): Promise<LinkSources> {
  const found = new Set<string>();
  const missing: string[] = [];
  for (const entry of entries) {
    const paths = await expand(root, entry);
    if (paths.length === 0) missing.push(entry);
    for (const p of paths) found.add(p);
  }
  if (found.size === 0) return { found: [], missing, tracked: [] };
  const listed = splitZ(
    (await git(["--literal-pathspecs", "ls-files", "-z", "--", ...found], {
      cwd: root,
      signal,
    })).stdout,
  );
  const isTracked = (p: string) => listed.some((f) => f === p || f.startsWith(p + "/"));
  const all = [...found].sort();
  return {
    found: all.filter((p) => !isTracked(p)),
    missing,
    tracked: all.filter(isTracked),
  };
}
