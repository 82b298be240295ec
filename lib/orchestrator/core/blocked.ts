/**
 * Why BLOCKED tasks wait (pure), and whether they can ever start on their own: a task whose
 * dependency FAILED — or waits on such a task — is stuck until an operator retries or cancels
 * the failed one (spec §3.1). The reason names every dependency it still waits on, with its
 * state, then every failed task to act on and the commands.
 */
import { SATISFIES_DEPENDENCY } from "../../tasks/lifecycle.ts";
import type { TaskView } from "./state.ts";

/** Why one BLOCKED task waits. */
export interface BlockedReason {
  /** It cannot start until an operator acts. */
  stuck: boolean;
  /** The FAILED tasks at the roots of its stuck chains (empty when it is not stuck). */
  failed: string[];
  /** Every unsatisfied dependency with its state, then the way out when it is stuck. */
  reason: string;
}

/** The reasons of every BLOCKED task of `tasks` (dependencies outside `tasks` count as pending). */
export function blockedReasons(tasks: ReadonlyMap<string, TaskView>): Map<string, BlockedReason> {
  const pendingOf = (task: TaskView) =>
    task.depends_on.filter((d) => {
      const dep = tasks.get(d);
      return !dep || !SATISFIES_DEPENDENCY.has(dep.status);
    });
  const memo = new Map<string, string[]>();
  // Every FAILED task a task's chains of unsatisfied dependencies end at (cycles: none).
  const failedRoots = (id: string, path: Set<string>): string[] => {
    if (memo.has(id)) return memo.get(id)!;
    const task = tasks.get(id);
    if (!task || path.has(id)) return [];
    if (task.status === "FAILED") return [id];
    if (task.status !== "BLOCKED") return [];
    path.add(id);
    const found = [...new Set(pendingOf(task).flatMap((dep) => failedRoots(dep, path)))];
    path.delete(id);
    memo.set(id, found);
    return found;
  };
  const out = new Map<string, BlockedReason>();
  for (const task of tasks.values()) {
    if (task.status !== "BLOCKED") continue;
    // A DONE dependency satisfies the store, but this task still starts only after it merged.
    const unmerged = task.depends_on.filter((d) => tasks.get(d)?.status === "DONE");
    const waitsOn = [...pendingOf(task), ...unmerged].map((d) => {
      const status = tasks.get(d)?.status;
      const behind = status === "BLOCKED" ? failedRoots(d, new Set()) : [];
      if (behind.length > 0) return `${d} (BLOCKED behind ${behind.join(", ")}, which FAILED)`;
      return status === "DONE" ? `${d} (DONE, to merge)` : `${d} (${status ?? "not in this run"})`;
    });
    const failed = failedRoots(task.id, new Set());
    const reason = `blocked: waits on ${waitsOn.join(", ")}`;
    if (failed.length === 0) {
      out.set(task.id, { stuck: false, failed, reason });
      continue;
    }
    const [names, them] = [failed.join(" "), failed.length === 1 ? "it" : "them"];
    out.set(task.id, {
      stuck: true,
      failed,
      reason: `${reason}; \`service retry ${names}\` tries ${them} again, ` +
        `\`service cancel ${names}\` lets this one start without ${them}`,
    });
  }
  return out;
}
