/**
 * Why BLOCKED tasks wait (pure), and whether they can ever start on their own: a task whose
 * dependency FAILED — or waits on such a task — is stuck until an operator retries or cancels
 * the failed one (spec §3.1). The reason names the task to act on and the commands.
 */
import { SATISFIES_DEPENDENCY } from "../../tasks/lifecycle.ts";
import type { TaskView } from "./state.ts";

/** Why one BLOCKED task waits. */
export interface BlockedReason {
  /** It cannot start until an operator acts. */
  stuck: boolean;
  /** The failed task at the root of a stuck chain. */
  failed?: string;
  reason: string;
}

/** The reasons of every BLOCKED task of `tasks` (dependencies outside `tasks` count as pending). */
export function blockedReasons(tasks: ReadonlyMap<string, TaskView>): Map<string, BlockedReason> {
  const memo = new Map<string, string | null>();
  // The FAILED task a task's chain of unsatisfied dependencies ends at, if any (cycles: none).
  const failedRoot = (id: string, path: Set<string>): string | null => {
    if (memo.has(id)) return memo.get(id)!;
    const task = tasks.get(id);
    if (!task || path.has(id)) return null;
    if (task.status === "FAILED") return id;
    if (task.status !== "BLOCKED") return null;
    path.add(id);
    let found: string | null = null;
    for (const dep of task.depends_on) {
      const d = tasks.get(dep);
      if (d && SATISFIES_DEPENDENCY.has(d.status)) continue;
      found = failedRoot(dep, path);
      if (found) break;
    }
    path.delete(id);
    memo.set(id, found);
    return found;
  };
  const out = new Map<string, BlockedReason>();
  for (const task of tasks.values()) {
    if (task.status !== "BLOCKED") continue;
    const pending = task.depends_on.filter((d) => {
      const dep = tasks.get(d);
      return !dep || !SATISFIES_DEPENDENCY.has(dep.status);
    });
    const failed = failedRoot(task.id, new Set());
    if (failed) {
      const direct = pending.includes(failed) ? "" : ` (through ${pending.join(", ")})`;
      out.set(task.id, {
        stuck: true,
        failed,
        reason: `blocked: waits on ${failed}, which FAILED${direct}; ` +
          `\`service retry ${failed}\` tries it again, \`service cancel ${failed}\` lets this one start without it`,
      });
      continue;
    }
    const states = pending.map((d) => `${d} (${tasks.get(d)?.status ?? "not in this run"})`);
    out.set(task.id, { stuck: false, reason: `blocked: waits on ${states.join(", ")}` });
  }
  return out;
}
