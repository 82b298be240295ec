/**
 * `service run` stops before it journals anything while a task spec under `.sdd/backlog/` cannot
 * be read (garbage, a torn write, an id that is not its file's): the store skips such a file, so
 * a run would otherwise start, or resume, without that task and end "completed".
 */
import { RunError } from "./run_checks.ts";

/** Throws a {@link RunError} naming each unreadable spec file (with why) and the fix. */
export function refuseUnreadableSpecs(problems: readonly string[]): void {
  if (problems.length === 0) return;
  throw new RunError(
    `${problems.length} task spec file(s) cannot be read; a run would leave their tasks out: ` +
      problems.join("; "),
    1,
    "restore each file from a backup, or move it out of .sdd/backlog/ to drop its task; " +
      "then `service run`",
  );
}
