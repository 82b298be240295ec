/** The verification ledger (spec §2.9): one JSON record per completion, append-only. */
import { join } from "node:path";
import type { WorkspacePaths } from "../workspace.ts";
import { appendStateLines } from "../util/locked_append.ts";

/** One ledger record (spec §2.9). */
export interface LedgerRecord {
  task_id: string;
  session_id: string;
  timestamp: number;
  tests_run: boolean;
  quality_gates_run: boolean;
  completion_signals_checked: boolean;
  verified: boolean;
}

/** Evidence flags of one completion. */
export interface Evidence {
  tests_run: boolean;
  quality_gates_run: boolean;
  completion_signals_checked: boolean;
}

/** `.sdd/metrics/verification_nudges.jsonl`. */
export function ledgerPath(paths: WorkspacePaths): string {
  return paths.verificationNudges;
}

/** Whose completion a ledger record is, and when. */
export interface CompletionOf {
  taskId: string;
  sessionId: string;
  /** Epoch milliseconds (recorded in seconds). */
  nowMs: number;
}

/** The record of one completion (pure): `verified` is the OR of the evidence flags. */
export function ledgerRecord(
  evidence: Evidence,
  { taskId, sessionId, nowMs }: CompletionOf,
): LedgerRecord {
  return {
    task_id: taskId,
    session_id: sessionId,
    timestamp: nowMs / 1000,
    tests_run: evidence.tests_run,
    quality_gates_run: evidence.quality_gates_run,
    completion_signals_checked: evidence.completion_signals_checked,
    verified: evidence.tests_run || evidence.quality_gates_run ||
      evidence.completion_signals_checked,
  };
}

/** Number of evidence types present (0 to 3). */
export function verificationCount(evidence: Evidence): number {
  return Number(evidence.tests_run) + Number(evidence.quality_gates_run) +
    Number(evidence.completion_signals_checked);
}

/** Append one record as one whole line, durably (a failed append leaves the file as it was). */
export function appendLedgerRecord(paths: WorkspacePaths, record: LedgerRecord): Promise<void> {
  return appendStateLines(ledgerPath(paths), JSON.stringify(record) + "\n");
}

/**
 * Reset the summary by moving the ledger aside (never deleting it) to
 * `verification_nudges.<UTC time>.jsonl` beside it. Returns the new path, or null when there was
 * no ledger.
 */
export async function moveLedgerAside(
  paths: WorkspacePaths,
  now: Date = new Date(),
): Promise<string | null> {
  const from = ledgerPath(paths);
  const stamp = now.toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z");
  for (let n = 0; n < 1000; n++) {
    const to = join(paths.metrics, `verification_nudges.${stamp}${n ? `-${n}` : ""}.jsonl`);
    try {
      await Deno.lstat(to);
      continue; // taken: never overwrite an earlier reset
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
    try {
      await Deno.rename(from, to);
      return to;
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return null;
      throw e;
    }
  }
  throw new Error(`too many ledger resets at ${stamp}`);
}
