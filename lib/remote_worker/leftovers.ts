/**
 * What a worker's earlier process left when it died (issue 35: a restarted worker did not hand
 * back its dead process's sessions; the orchestrator waited a lease and counted an attempt, and
 * the worktree and PID file stayed). Before it registers, the new process ends what is left of
 * those agents (their process groups, their containers), commits what each left in its worktree
 * and pushes it to `agent/<session>` on the remote (with a lease on what is there), then removes
 * the worktree, its branch, its ports and its PID file. The registration names these sessions;
 * the orchestrator takes every lease of the worker's name back at once, no attempt counted, and
 * the next attempt continues from the pushed work.
 */
import { existsSync } from "node:fs";
import { reapPidFiles } from "../agents/pid_files.ts";
import { git } from "../git/git.ts";
import { gitWorktree } from "../git/worktree_admin.ts";
import { type RemoteOptions, remoteTip } from "../git/remote.ts";
import { pushSessionBranch } from "../workers/remote_refs.ts";
import type { WorkspacePaths } from "../workspace.ts";
import { agentBranch, commitPartialWork, worktreePath } from "../worktrees/worktrees.ts";
import type { LeftSession } from "../workers/protocol.ts";
import { isValidId } from "../ids.ts";

/** Options of {@link handBackLeftovers}. */
export interface LeftoverOptions {
  paths: WorkspacePaths;
  remote: RemoteOptions;
  /** The worker's name (in commit messages). */
  name: string;
  /** SIGTERM to SIGKILL grace for agents still running (ms). */
  graceMs: number;
  log: (line: string) => void;
}

/** End, push and remove what an earlier process of this worker left; the sessions handed back. */
export async function handBackLeftovers(o: LeftoverOptions): Promise<LeftSession[]> {
  const root = o.paths.root;
  const agents = await reapPidFiles(
    o.paths,
    o.graceMs,
    (a) => o.log(`worker ${o.name}: ending agent ${a.session_id} that an earlier process left`),
  );
  const tasks = new Map(agents.map((a) => [a.session_id, a.task_id]));
  const sessions = new Set(agents.map((a) => a.session_id));
  try {
    for await (const e of Deno.readDir(o.paths.worktrees)) {
      if (e.isDirectory && isValidId(e.name)) sessions.add(e.name);
    }
  } catch { /* no worktrees */ }
  const left: LeftSession[] = [];
  for (const session of [...sessions].sort()) {
    if (!isValidId(session)) continue;
    const path = worktreePath(root, session);
    let pushed: string | undefined;
    if (existsSync(path)) {
      try {
        const { tip } = await commitPartialWork(
          path,
          `service: work of session ${session} left on ${o.name}`,
        );
        if (await beyondBases(root, tip)) {
          const branch = agentBranch(session);
          const there = await remoteTip(o.remote, branch).catch(() => undefined);
          const out = await pushSessionBranch(o.remote, {
            sessionId: session,
            sha: tip,
            expected: there,
          });
          if (out.pushed) pushed = tip;
        }
      } catch (e) {
        o.log(`worker ${o.name}: work of ${session} not pushed: ${(e as Error).message}`);
      }
      await gitWorktree(root, ["remove", "--force", path], { allowFailure: true });
    }
    await git(["branch", "-D", agentBranch(session)], { cwd: root, allowFailure: true });
    const task = tasks.get(session);
    if (task && isValidId(task)) {
      left.push({ task_id: task, session_id: session, ...(pushed ? { pushed } : {}) });
    }
    o.log(
      `worker ${o.name}: handed back session ${session}${task ? ` of ${task}` : ""} ` +
        (pushed ? `(its work pushed at ${pushed.slice(0, 12)})` : "(no work to push)"),
    );
  }
  await gitWorktree(root, ["prune"], { allowFailure: true });
  return left;
}

/** True when `tip` holds work that no base the worker fetched (nor the remote's branches) has. */
async function beyondBases(root: string, tip: string): Promise<boolean> {
  const r = await git(
    ["for-each-ref", "--contains", tip, "--count=1", "refs/service/base/", "refs/remotes/"],
    { cwd: root, allowFailure: true },
  );
  return r.code === 0 && r.stdout.trim() === "";
}
