/**
 * The lines the service itself writes into an agent's session log (where the agent runs, its
 * worktree's setup, what a capped log left out) begin with {@link SERVICE_LINE_PREFIX}. They are
 * the service's words, never the agent's: a reason quoting "the agent's last line" skips them, so
 * an agent that said nothing is not reported as having said the container header. Pure.
 */

/** How each line the service writes into a session log begins. */
export const SERVICE_LINE_PREFIX = "──── service: ";

/** `tail` without the service's own lines. */
export function agentLines(tail: readonly string[]): string[] {
  return tail.filter((line) => !line.trimStart().startsWith(SERVICE_LINE_PREFIX));
}
