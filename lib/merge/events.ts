/** Journal rows of the merge step (DESIGN.md §4) and the retry rule for conflicts (spec §3.1). */
import { taskVerificationFailed } from "../journal/events.ts";
import type { JournalEvent } from "../journal/row.ts";
import type { GateResult } from "./gates.ts";

/** Characters of a failed check's output kept in the journal. */
export const JOURNAL_OUTPUT_CHARS = 2000;

/**
 * `task_verification_failed {task_id, signals}`: the failed checks of a gate evaluation, each
 * `{kind, detail}` plus the tail of its output as evidence.
 */
export function taskVerificationFailedEvent(taskId: string, gates: GateResult): JournalEvent {
  const signals = gates.signals.filter((s) => !s.passed).map((s) => ({
    kind: s.kind,
    detail: s.detail,
    output_tail: s.output_tail.slice(-JOURNAL_OUTPUT_CHARS),
  }));
  return taskVerificationFailed({ task_id: taskId, signals });
}

/** What to do after a merge conflict. */
export interface ConflictVerdict {
  action: "retry" | "fail";
  reason: string;
}

/**
 * After conflict number `attempt` (1-based): retry later (once other agents have finished) until
 * `maxAttempts`, then fail the task naming the files.
 */
export function conflictVerdict(
  attempt: number,
  files: readonly string[],
  maxAttempts = 3,
): ConflictVerdict {
  const named = files.join(", ");
  if (attempt < maxAttempts) {
    return {
      action: "retry",
      reason: `merge conflict in ${named} (attempt ${attempt} of ${maxAttempts}); retrying later`,
    };
  }
  return {
    action: "fail",
    reason: `merge conflict in ${named} after ${attempt} attempts; ` +
      "declare owned_files and depends_on so agents do not edit the same files",
  };
}
