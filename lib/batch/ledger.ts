/**
 * The batch lane's ledger, `.sdd/runtime/batches.json` (DESIGN.md §15): one entry per task that
 * went through the lane, written before its request is sent (so a stop or crash in between never
 * sends it twice: an entry without `batch_id` is never submitted again), given its batch id once
 * the provider answered, and its outcome once the batch ended. A task is tried in the lane once a
 * run: its entry stays until a later run's task of the same id takes its place. `service run`
 * polls the entries in flight again after a stop; `status` shows them with their age.
 * Whole-file writes, temporary file then rename.
 */
import type { BatchOutcome } from "../journal/events.ts";
import { writeFileAtomic } from "../util/atomic_write.ts";
import type { BatchProvider } from "./provider.ts";

/** One task's request in the lane. */
export interface BatchEntry {
  task_id: string;
  run_id: string;
  /** The session of the task's batch try (its worktree and branch, when the answer came). */
  session_id: string;
  provider: BatchProvider;
  /** The adapter whose provider it is. */
  adapter: string;
  /** The request's `custom_id` in its batch. */
  custom_id: string;
  /** Set once the provider accepted the batch. */
  batch_id?: string;
  /** The commit the request showed the files at (the patch applies there). */
  base: string;
  model: string;
  /** Epoch seconds of the submission. */
  submitted_at: number;
  /** Set once the batch ended for this request. */
  outcome?: BatchOutcome;
  reason?: string;
  ended_at?: number;
}

/** The file's shape. */
export interface BatchLedger {
  version: 1;
  tasks: Record<string, BatchEntry>;
}

/** An empty ledger. */
export function emptyLedger(): BatchLedger {
  return { version: 1, tasks: {} };
}

/** A ledger that is not the lane's JSON. */
export class BatchLedgerError extends Error {
  constructor(path: string) {
    super(`${path} is not the batch lane's ledger (JSON with version 1 and tasks)`);
    this.name = "BatchLedgerError";
  }
}

/**
 * The ledger at `path`; a missing file is empty. An unreadable one is moved aside (the lane starts
 * afresh, nothing is lost), or, with `readOnly` (status), is a {@link BatchLedgerError}.
 */
export async function loadBatchLedger(path: string, readOnly = false): Promise<BatchLedger> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return emptyLedger();
    throw e;
  }
  try {
    const raw = JSON.parse(text);
    if (raw?.version === 1 && raw.tasks && typeof raw.tasks === "object") return raw as BatchLedger;
  } catch { /* below */ }
  if (readOnly) throw new BatchLedgerError(path);
  // Nothing stored is lost: the unreadable file stays beside, and the lane starts afresh.
  await Deno.rename(path, `${path}.unreadable-${Date.now()}`);
  return emptyLedger();
}

/** Write the ledger atomically. */
export async function saveBatchLedger(path: string, ledger: BatchLedger): Promise<void> {
  await writeFileAtomic(path, JSON.stringify(ledger, null, 2) + "\n");
}

/** Entries whose batch is with the provider and has not ended for them. */
export function inFlight(ledger: BatchLedger): BatchEntry[] {
  return Object.values(ledger.tasks).filter((e) => e.batch_id !== undefined && !e.outcome);
}
