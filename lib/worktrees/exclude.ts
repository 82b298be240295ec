/**
 * Keep the service's files out of the user's `git status` and out of every `git add -A`:
 * `.sdd/` (state and worktrees) and injected skill files `.claude/skills/<prefix>*` are listed in
 * the repository's `info/exclude`.
 *
 * The file is resolved with `git rev-parse --git-path info/exclude` from inside the worktree. In
 * git 2.39 that resolves to the *common* `.git/info/exclude`: git does not read a per-worktree
 * `.git/worktrees/<id>/info/exclude` (tested in exclude_test.ts), so one entry covers the main
 * checkout and every agent worktree.
 */
import { isAbsolute, join } from "node:path";
import { gitText } from "../git/git.ts";

/** The prefix of the skill files the service injects under `.claude/skills/`. */
export const SKILL_PREFIX = "service-";

/** The exclude line that keeps the service's state directory out of git. */
const SDD_EXCLUDE = ".sdd/";

/** The exclude line for injected skill files with `prefix` (anchored at the worktree root). */
function skillExcludeLine(prefix: string = SKILL_PREFIX): string {
  return `/.claude/skills/${prefix}*`;
}

const done = new Set<string>();

/** The `info/exclude` file git reads for the worktree or repository at `cwd`. */
async function excludeFilePath(cwd: string): Promise<string> {
  const path = await gitText(["rev-parse", "--git-path", "info/exclude"], { cwd });
  return isAbsolute(path) ? path : join(cwd, path);
}

/**
 * Make sure every line of `lines` is in the exclude file of `cwd`, keeping what is there
 * (idempotent; appends only the missing lines). Returns the file's path.
 */
export async function ensureExcludeLines(cwd: string, lines: readonly string[]): Promise<string> {
  const path = await excludeFilePath(cwd);
  let text = "";
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
    await Deno.mkdir(join(path, ".."), { recursive: true });
  }
  const present = new Set(text.split(/\r?\n/).map((l) => l.trim()));
  const missing = lines.filter((l) => !present.has(l));
  if (missing.length > 0) {
    const lead = text === "" || text.endsWith("\n") ? "" : "\n";
    await Deno.writeTextFile(path, lead + missing.join("\n") + "\n", { append: true });
  }
  return path;
}

/**
 * On first use per process and root: list `.sdd/` and the injected skill files
 * (`/.claude/skills/<prefix>*`) in the repository's exclude file. Later calls cost nothing.
 */
export async function ensureServiceExcluded(
  root: string,
  prefix: string = SKILL_PREFIX,
): Promise<void> {
  const key = `${root}\0${prefix}`;
  if (done.has(key)) return;
  await ensureExcludeLines(root, [SDD_EXCLUDE, skillExcludeLine(prefix)]);
  done.add(key);
}

/**
 * List the injected skill files (`/.claude/skills/<prefix>*`) in the exclude file git reads for
 * `worktree`, so `git add -A` there never stages them. Returns the exclude file's path.
 */
export function ensureSkillFilesExcluded(
  worktree: string,
  prefix: string = SKILL_PREFIX,
): Promise<string> {
  return ensureExcludeLines(worktree, [skillExcludeLine(prefix)]);
}
