/**
 * The one retry/fail policy (pure). Every way an attempt can fail — the agent crashed, exited at
 * once, timed out or was lost, its start failed, the gates failed on the merged tree, or its
 * merge still conflicted after a rebase — asks {@link afterFailure} whether the task gets a new
 * attempt or is FAILED for good. Waits that are not the task's fault (a rate limit, an
 * operator's request for changes, a checkout that cannot take the merge yet) do not come here.
 */

/**
 * Failed attempts a task gets before it is FAILED. Attempts that end without failing (an
 * operator's request for changes, a rate limit, a stop) do not count, so the words say "failed
 * attempt n of 3" — an attempt's own number (its claim's, lib/board/activity.ts) can be higher.
 */
export const MAX_ATTEMPTS = 3;

/** What the policy needs to know of a failed attempt. */
export interface FailedAttempt {
  /** Failed attempts so far, this one included (the task store's count). */
  attempts: number;
  /** False when the same start would fail again (bad credentials, missing binary, untrusted folder). */
  retryable: boolean;
  /** What went wrong, in one line. */
  reason: string;
}

/** The verdict: a new attempt, or FAILED with the reason the user reads. */
export type FailureVerdict =
  | { action: "retry"; reason: string }
  | { action: "fail"; reason: string };

/** Decide what follows a failed attempt. */
export function afterFailure(
  failed: FailedAttempt,
  maxAttempts: number = MAX_ATTEMPTS,
): FailureVerdict {
  if (!failed.retryable) {
    return { action: "fail", reason: `${failed.reason} (not retried: it would fail the same way)` };
  }
  if (failed.attempts >= maxAttempts) {
    return {
      action: "fail",
      reason: `${failed.reason} (after ${failed.attempts} failed attempt${
        failed.attempts === 1 ? "" : "s"
      })`,
    };
  }
  return {
    action: "retry",
    reason: `${failed.reason} (failed attempt ${failed.attempts} of ${maxAttempts}; retrying)`,
  };
}
