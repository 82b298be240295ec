/**
 * The service's verdict on a completion, as the task store takes it (a `Verdict`): the ledger
 * record (spec §2.9) and the task's `verification_count` / `flagged_unverified` change together,
 * the record durable first (spec §4.3 rule 1: one record per completion).
 */
import type { Verdict } from "../tasks/store.ts";
import type { WorkspacePaths } from "../workspace.ts";
import { appendLedgerRecord, type Evidence, ledgerRecord, verificationCount } from "./ledger.ts";

const NO_EVIDENCE: Evidence = {
  tests_run: false,
  quality_gates_run: false,
  completion_signals_checked: false,
};

/** The verdict of `sessionId`'s completion on what the service observed (`evidence`). */
export function ledgerVerdict(
  paths: WorkspacePaths,
  sessionId: string,
  evidence: Evidence,
): Verdict {
  return (draft, _from, nowMs) => {
    draft.verification_count = verificationCount(evidence);
    draft.flagged_unverified = draft.verification_count === 0;
    const record = ledgerRecord(evidence, { taskId: draft.id, sessionId, nowMs });
    return () => appendLedgerRecord(paths, record);
  };
}

/**
 * The verdict of a completion through the task API. When no agent's work will be landed (a task
 * outside any run — the task API, external workers — or one an operator completed without any
 * claimant) nothing more will be observed, so it is recorded at once from what the service saw:
 * nothing. A run's claimed task waits: the run records it after the janitor and the gates.
 * `sessionId` is the body's, for a task that names none.
 */
export function completionVerdict(paths: WorkspacePaths, sessionId?: string): Verdict {
  return (draft, from, nowMs) => {
    const claimed = from === "CLAIMED" || from === "IN_PROGRESS";
    if (draft.run_id !== null && claimed) return undefined;
    const session = draft.session_id ?? sessionId ?? "operator";
    return ledgerVerdict(paths, session, NO_EVIDENCE)(draft, from, nowMs);
  };
}
