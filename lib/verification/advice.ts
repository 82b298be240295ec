/**
 * What the verification alert advises (spec §3.3: the CLI's red ALERT, the board's toast), from
 * the configuration the unverified completions ran under (pure). Telling a user whose tasks have
 * quality gates to "add quality_gates" sends them the wrong way: for them an unverified
 * completion means its gates never ran (lib/verification/completion.ts: the work conflicted
 * before a merged tree existed, or its worktree was gone), and the reason is on the task.
 */

/** The words when nothing is known of the configuration, and when no gate applies. */
export const ADD_EVIDENCE =
  "Add quality_gates or completion signals, or have agents run the tests (docs/verification.md).";

/** How the alert learns which gates apply to a task. */
export interface AdviceContext {
  /** The role of a task, when the store knows it. */
  roleOf: (taskId: string) => string | undefined;
  /** How many quality gates apply to a task of `role` (the top-level ones and the role's). */
  gatesOf: (role: string) => number;
}

/** The advice for the unverified completions `recent` (task ids, newest first). */
export function verificationAdvice(recent: string[], context?: AdviceContext): string {
  if (!context || recent.length === 0) return ADD_EVIDENCE;
  const roles = new Set<string>();
  for (const id of recent) {
    const role = context.roleOf(id);
    if (role === undefined) return ADD_EVIDENCE; // a task the store no longer holds
    roles.add(role);
  }
  const ungated = [...roles].filter((role) => context.gatesOf(role) === 0).sort();
  if (ungated.length > 0) {
    return `Add quality_gates (none apply to role${ungated.length > 1 ? "s" : ""} ` +
      `${ungated.join(", ")}) or completion signals, or have agents run the tests ` +
      "(docs/verification.md).";
  }
  return "Their quality gates are configured but never ran on these completions: the work " +
    "conflicted with the target before a merged tree existed, or its worktree was gone — each " +
    "task's reason is in `service status` and on its card. Completion signals, or agents that " +
    "run the tests, count as evidence too (docs/verification.md).";
}
