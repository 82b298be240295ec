/**
 * A full disk (or quota) is the machine's problem, not the task's (pure). When one of the
 * service's own steps of an attempt fails on it — cutting the worktree, committing what the agent
 * left — the attempt is not counted: the task keeps its work and the run stops with the reason,
 * so the retries are not used up while the disk stays full (lib/orchestrator/core/on_exit.ts).
 * An agent whose own writes failed so has ended by its own exit, which counts as any other; its
 * reason then says that the disk was full, so the operator frees space before retrying.
 */
import { StorageFullError } from "../errors.ts";
import { clipLine } from "./last_error_line.ts";
import { printable } from "./printable.ts";

/** The diagnosis kind of an attempt a full disk interrupted (no attempt counted). */
export const DISK_FULL = "disk_full";

/** How every reason of {@link diskFullDiagnosis} begins (a task ORPHANED so is known by it). */
export const DISK_FULL_SAID = "the disk is full: ";

/** How programs say the disk or quota is full: the kernel's words, git's, Node's and Deno's codes. */
const FULL_WORDS =
  /No space left on device|Out of diskspace|Disk quota exceeded|\bENOSPC\b|\bEDQUOT\b|os error 28\b|os error 122\b/i;

/** The first line of `text` that says the disk is full, clipped; undefined when none does. */
export function diskFullSaid(text: string): string | undefined {
  const line = text.split("\n").find((l) => FULL_WORDS.test(l));
  return line === undefined ? undefined : printable(clipLine(line.trim()) ?? line.trim());
}

/** Whether `error` (a write's, a git command's) failed because the disk or quota is full. */
export function isDiskFull(error: unknown): boolean {
  if (error instanceof StorageFullError) return true;
  const code = (error as { code?: unknown } | null)?.code;
  if (code === "ENOSPC" || code === "EDQUOT") return true;
  return error instanceof Error && diskFullSaid(error.message) !== undefined;
}

/**
 * The diagnosis of an attempt whose service step `step` (e.g. "committing the agent's work")
 * failed on a full disk under `where`; `said` is what the failing program said.
 */
export function diskFullDiagnosis(
  step: string,
  where: string,
  said: string,
): { kind: typeof DISK_FULL; reason: string; retryable: true } {
  return {
    kind: DISK_FULL,
    reason:
      `the disk is full: ${step} failed in ${where} (${
        diskFullSaid(said) ?? printable(clipLine(said) ?? said)
      }); ` +
      "no attempt counted, the task's work is kept and the run stops. Free space on that disk " +
      `(\`df -h ${where}\`), then \`service run\` resumes it`,
    retryable: true,
  };
}
