/**
 * A run resumes only onto a journal that verifies and holds its history (an empty one was cut
 * away: lib/runs/journal_damage.ts): every row a resume writes is refused on a
 * broken chain (lib/journal/journal_file.ts), so `service run` says so before it journals or
 * spawns anything — which line is bad, how many before it verify, and the way out — instead of
 * failing on its first append. A journal that stops verifying while its run is live ends the run
 * with the same words ({@link journalBrokeWhileRunning}).
 */
import { relative } from "node:path";
import { IncrementalJournal, NO_SINK } from "../journal/incremental.ts";
import { type JournalPoisonedError, readJournal } from "../journal/journal_file.ts";
import { damageFix, damageOf, journalDamage, MISSING_JOURNAL } from "../runs/journal_damage.ts";
import { RunError } from "./run_checks.ts";

/** What {@link refuseUnverifiedJournal} checks. */
export interface ResumeJournalOptions {
  root: string;
  runId: string;
  journal: string;
  /** The run's tasks still to do (named in the way out). */
  unfinished: readonly string[];
  /** The run's plan file (absolute), when known. */
  planFile?: string;
}

/** Throws a {@link RunError} when the journal of the run to resume is missing or does not verify. */
export async function refuseUnverifiedJournal(o: ResumeJournalOptions): Promise<void> {
  const present = await Deno.stat(o.journal).then((s) => s.isFile, () => false);
  const snapshot = present
    ? await readJournal(o.journal, new IncrementalJournal(NO_SINK))
    : undefined;
  const damage = snapshot
    ? damageOf(snapshot.walker.firstFault, snapshot.byteLength)
    : MISSING_JOURNAL;
  if (!damage) return;
  throw new RunError(
    `run ${o.runId} cannot be resumed: its journal (${
      relative(o.root, o.journal)
    }) does not verify: ${damage.words}`,
    1,
    damageFix(o.unfinished, o.planFile ? relative(o.root, o.planFile) : undefined),
  );
}

/**
 * The run's own journal stopped verifying while it ran: something other than the service wrote
 * to it (its appends re-read the chain under the lock: lib/journal/journal_file.ts). The run
 * cannot write another row, so it ends — with what happened, who can do it, and the way out.
 */
export function journalBrokeWhileRunning(
  o: Omit<ResumeJournalOptions, "journal"> & { error: JournalPoisonedError },
): RunError {
  return new RunError(
    `run ${o.runId} stopped: its journal (${relative(o.root, o.error.path)}) stopped verifying ` +
      `while the run was live: ${journalDamage(o.error.fault).words}. Something other than this ` +
      "run wrote to it — most likely an agent run as a host process, which can write anywhere " +
      "you can (`isolation: container` mounts only its worktree: docs/security.md), or another " +
      "process cut off mid-write. Its agents were ended; their work stays in their worktrees " +
      "for the next run.",
    1,
    damageFix(o.unfinished, o.planFile ? relative(o.root, o.planFile) : undefined),
  );
}
