/**
 * The gate receipt of the merge step (DESIGN.md §4): the failed checks with their output, for
 * the one constructor of `task_verification_failed` (lib/journal/events.ts).
 */
import type { FailedSignal } from "../journal/events.ts";
import type { GateResult } from "./gates.ts";

/** Characters of a failed check's output kept in the journal. */
const JOURNAL_OUTPUT_CHARS = 2000;

/** The failed checks of a gate evaluation, each `{kind, detail}` plus the tail of its output. */
export function failedSignals(gates: GateResult): FailedSignal[] {
  return gates.signals.filter((s) => !s.passed).map((s) => ({
    kind: s.kind,
    detail: s.detail,
    ...(s.name !== undefined ? { name: s.name } : {}),
    output_tail: s.output_tail.slice(-JOURNAL_OUTPUT_CHARS),
  }));
}
