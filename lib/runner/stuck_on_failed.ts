/**
 * A resumable run with nothing to run (pure): every unfinished task is BLOCKED, waiting — itself
 * or through other such tasks — only on FAILED ones. Resuming it would start and end at once;
 * `service run` refuses instead, naming which task waits on which failed one and the way out
 * (spec §3.1: an operator unblocks a task by moving the blocking one to CANCELLED or DONE).
 */
import type { Task } from "../tasks/task.ts";

/** What the check needs of a task. */
export type StuckFacts = Pick<Task, "id" | "status"> & { depends_on?: readonly string[] };

/** One stuck task and the FAILED tasks it waits on (directly or through stuck ones), sorted. */
export interface Stuck {
  id: string;
  failed: string[];
}

const SATISFIED = new Set(["DONE", "CLOSED", "CANCELLED"]);

/**
 * The stuck tasks when every one of `unfinished` is stuck, else undefined (something can run,
 * or waits on something this check does not know: a cycle, a task of another run).
 */
export function stuckOnFailed(
  unfinished: readonly StuckFacts[],
  all: readonly StuckFacts[],
): Stuck[] | undefined {
  if (unfinished.length === 0 || unfinished.some((t) => t.status !== "BLOCKED")) return undefined;
  const byId = new Map(all.map((t) => [t.id, t]));
  const roots = new Map<string, Set<string>>(); // stuck task -> the FAILED tasks behind it
  for (let changed = true; changed;) {
    changed = false;
    for (const t of unfinished) {
      if (roots.has(t.id)) continue;
      const behind = new Set<string>();
      const waits = (t.depends_on ?? []).filter((d) => !SATISFIED.has(byId.get(d)?.status ?? ""));
      const ok = waits.length > 0 && waits.every((d) => {
        if (byId.get(d)?.status === "FAILED") return behind.add(d);
        const via = roots.get(d);
        via?.forEach((f) => behind.add(f));
        return via !== undefined;
      });
      if (ok) {
        roots.set(t.id, behind);
        changed = true;
      }
    }
  }
  if (roots.size !== unfinished.length) return undefined;
  return unfinished.map((t) => ({ id: t.id, failed: [...roots.get(t.id)!].sort() }));
}

/** The refusal's words: what waits on what, and the commands that unblock it (pure). */
export function stuckWords(
  runId: string,
  stuck: readonly Stuck[],
): { message: string; fix: string } {
  const failed = [...new Set(stuck.flatMap((s) => s.failed))].sort().join(" ");
  const shown = stuck.slice(0, 6).map((s) =>
    `${s.id} waits on ${s.failed.map((f) => `${f} (FAILED)`).join(", ")}`
  ).join("; ");
  const more = stuck.length > 6 ? ` and ${stuck.length - 6} more` : "";
  return {
    message: `run ${runId} has nothing to run: ${shown}${more}`,
    fix: `\`service retry ${failed}\` tries again, or \`service cancel ${failed}\` lets the ` +
      "tasks waiting on it start without it; then `service run` (`service status` shows why it failed)",
  };
}
