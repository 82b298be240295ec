/**
 * Why an agent process could not be started, and whether another attempt could start it (pure).
 * A template error, a binary that is gone or not executable, or a command line the operating
 * system refuses as too long (E2BIG: Linux takes at most 128 KiB in one argument, and an agent
 * CLI gets its whole prompt as one) fails the same way every time: no attempt is retried for it.
 */

/** What {@link startFailure} says of an error thrown while starting an agent. */
export interface StartFailure {
  reason: string;
  retryable: boolean;
}

/** The most bytes Linux passes in one command-line argument (`MAX_ARG_STRLEN`). */
const ARGUMENT_MAX_BYTES = 128 * 1024;

/** The reason and retry verdict of `err`, thrown while spawning an agent. */
export function startFailure(err: Error): StartFailure {
  if ((err as { code?: unknown }).code === "E2BIG") {
    return {
      reason: "could not start the agent: its command line is longer than the operating system " +
        `accepts (E2BIG: at most ${ARGUMENT_MAX_BYTES / 1024} KiB in one argument, and the ` +
        "prompt with the task's goal is one); shorten the task's goal, or move the long text " +
        "into a file of the repository and name that file in the goal",
      retryable: false,
    };
  }
  const permanent = err.name === "TemplateError" || err instanceof Deno.errors.NotFound ||
    err instanceof Deno.errors.PermissionDenied;
  return { reason: `could not start the agent: ${err.message}`, retryable: !permanent };
}
