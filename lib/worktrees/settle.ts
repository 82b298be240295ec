/**
 * Worktrees no run will continue, settled outside a live run (docs/merging.md#worktrees): the
 * worktree of a task an operator cancelled, retried or completed while nothing ran, and what a
 * run killed in the middle of a reap left. Each goes through {@link reapWorktree}, the live
 * run's reap — its work is committed and kept on `refs/service/rescue/<session>` unless merged —
 * and a half-removed `.git/worktrees/<id>` (its `gitdir` gone with its worktree) is pruned once
 * the commit its `HEAD` names is kept.
 */
import { join } from "node:path";
import { git, gitText, resolveCommit } from "../git/git.ts";
import { gitWorktree } from "../git/worktree_admin.ts";
import { readRefFile } from "../git/ref_files.ts";
import { isValidId } from "../ids.ts";
import { workspacePaths } from "../workspace.ts";
import { type ReapResult, reapWorktree, rescueRef } from "./reap.ts";
import { worktreePath } from "./worktrees.ts";
import { pathExists } from "../util/path_exists.ts";

/** Statuses whose session no run continues: their worktrees are reaped (work kept). */
export const SETTLED_STATUSES: ReadonlySet<string> = new Set(["CANCELLED", "FAILED", "CLOSED"]);

/** What {@link settleWorktrees} needs of a task. */
export interface SettlingTask {
  id: string;
  status: string;
  session_id: string | null;
}

/** One leftover worktree: a session's directory under `.sdd/worktrees/` and its task. */
export interface LeftWorktree {
  session_id: string;
  task_id: string;
  status: string;
}

/** The sessions with a directory under `.sdd/worktrees/` (sorted). */
export async function worktreeSessions(root: string): Promise<string[]> {
  try {
    const entries = await Array.fromAsync(Deno.readDir(workspacePaths(root).worktrees));
    return entries.filter((e) => e.isDirectory && isValidId(e.name)).map((e) => e.name).sort();
  } catch {
    return [];
  }
}

/** The worktrees of `sessions` whose task is in a settled status (pure). */
export function settledWorktrees(
  sessions: readonly string[],
  tasks: readonly SettlingTask[],
): LeftWorktree[] {
  const bySession = new Map(tasks.flatMap((t) => t.session_id ? [[t.session_id, t]] : []));
  return sessions.flatMap((session) => {
    const task = bySession.get(session);
    return task && SETTLED_STATUSES.has(task.status)
      ? [{ session_id: session, task_id: task.id, status: task.status }]
      : [];
  });
}

/**
 * `.git/worktrees/<id>` entries a killed removal left: no `gitdir`, not locked (a worktree being
 * made holds `locked`), and no directory `.sdd/worktrees/<id>` (an entry whose worktree is still
 * there is put back when its session is opened, never removed).
 */
export async function halfRemovedEntries(root: string): Promise<string[]> {
  const common = await gitText(["rev-parse", "--path-format=absolute", "--git-common-dir"], {
    cwd: root,
  }).catch(() => undefined);
  if (!common) return [];
  const admin = join(common, "worktrees");
  let entries: Deno.DirEntry[];
  try {
    entries = await Array.fromAsync(Deno.readDir(admin));
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const e of entries) {
    if (!e.isDirectory) continue;
    const has = (f: string) => Deno.lstat(join(admin, e.name, f)).then(() => true, () => false);
    if (await has("gitdir") || await has("locked")) continue;
    if (isValidId(e.name) && await pathExists(worktreePath(root, e.name))) continue;
    out.push(join(admin, e.name));
  }
  return out.sort();
}

/** Options of {@link settleWorktrees}. */
export interface SettleOptions {
  /** The branch work lands on; default the branch checked out at `root`. */
  target?: string;
  /**
   * Sessions whose agent still runs (lib/agents/pid_files.ts, read by the caller): their
   * worktrees are kept until it is ended.
   */
  liveSessions?: () => Promise<ReadonlySet<string>>;
  /** Reap only these sessions' worktrees (default every settled one). */
  sessions?: readonly string[];
  warn?: (line: string) => void;
}

/** What {@link settleWorktrees} did, one line each for the terminal. */
export interface Settled {
  reaped: (LeftWorktree & { result: ReapResult })[];
  /** Half-removed admin entries pruned. */
  pruned: string[];
  lines: string[];
}

/**
 * Reap the worktrees of settled `tasks` (their work kept as a live reap keeps it), then prune
 * half-removed admin entries once the commit each one's `HEAD` names is kept.
 */
export async function settleWorktrees(
  root: string,
  tasks: readonly SettlingTask[],
  options: SettleOptions = {},
): Promise<Settled> {
  const settled: Settled = { reaped: [], pruned: [], lines: [] };
  let left = settledWorktrees(await worktreeSessions(root), tasks);
  if (options.sessions) left = left.filter((l) => options.sessions!.includes(l.session_id));
  const target = left.length > 0 ? options.target ?? await checkedOutBranch(root) : undefined;
  const live = left.length > 0 ? await options.liveSessions?.() ?? new Set() : new Set();
  for (const l of left) {
    if (live.has(l.session_id)) {
      // An agent a killed run left still writes there: reaped once it is ended.
      settled.lines.push(
        `${l.task_id}: worktree ${worktreePath(root, l.session_id)} kept: its agent still runs ` +
          "(`service stop` ends it; `service run` ends it and reaps the worktree)",
      );
      continue;
    }
    if (!target) {
      settled.lines.push(
        `${l.task_id}: worktree ${worktreePath(root, l.session_id)} kept: no branch is checked ` +
          "out to tell whether its work merged (check one out and run `service run` or `service doctor`)",
      );
      continue;
    }
    const result = await reapWorktree(root, l.session_id, {
      target,
      message: `service: leftovers of ${l.task_id}`,
      warn: options.warn,
    });
    settled.reaped.push({ ...l, result });
    settled.lines.push(reapLine(l, result));
  }
  const half = await halfRemovedEntries(root);
  if (half.length > 0) {
    for (const entry of half) await keepHead(root, entry);
    await gitWorktree(root, ["prune"]);
    for (const entry of half) {
      if (await pathExists(entry)) continue;
      settled.pruned.push(entry);
      settled.lines.push(`pruned ${entry}: a worktree removal cut short left it (no gitdir)`);
    }
  }
  return settled;
}

/** The terminal's line for one reap (pure). */
export function reapLine(l: LeftWorktree, r: ReapResult): string {
  const what = `${l.task_id} (${l.status}): worktree of ${l.session_id}`;
  if (!r.removed) return `${what} kept: ${r.reason}`;
  if (r.rescue_ref) return `${what} removed; its unmerged work is kept at ${r.rescue_ref}`;
  return `${what} removed${
    r.merged ? " (nothing in it is unmerged: merged, or no work of its own)" : ""
  }`;
}

/**
 * Keep the commit a half-removed entry's `HEAD` names (read as data, never followed) at
 * `refs/service/rescue/<id>` when no ref holds it already: a pruned entry loses no commit.
 */
async function keepHead(root: string, entry: string): Promise<void> {
  const head = await readRefFile(join(entry, "HEAD")).catch(() => undefined);
  if (!head || head.kind !== "commit") return; // a branch's own ref keeps what it names
  const id = entry.split("/").at(-1)!;
  if (!isValidId(id)) return;
  const o = { cwd: root, allowFailure: true };
  const commit = await resolveCommit(head.oid, { cwd: root });
  if (!commit) return;
  const holders = await git(["for-each-ref", "--count=1", "--contains", commit], o);
  if (holders.code === 0 && holders.stdout.trim() !== "") return;
  await git(
    ["update-ref", "-m", "service: rescue a half-removed worktree", rescueRef(id), commit],
    {
      cwd: root,
    },
  );
}

/** The branch checked out at `root` (`refs/heads/…`), undefined when HEAD is detached. */
async function checkedOutBranch(root: string): Promise<string | undefined> {
  const out = await git(["symbolic-ref", "--quiet", "HEAD"], { cwd: root, allowFailure: true });
  return out.code === 0 ? out.stdout.trim() : undefined;
}
