/**
 * The verification summary (spec §2.10, §3.3; DESIGN.md §6): computed from the ledger as it is
 * at request time. Strict `>` on the unrounded ratio; the reported ratio is rounded to 3
 * decimals; a record's own `verified` field is authoritative; `recent_unverified` is newest first
 * (lib/verification/ledger_tally.ts).
 */
import type { WorkspacePaths } from "../workspace.ts";
import { ledgerPath } from "./ledger.ts";
import type { VerificationNudge } from "./nudge_types.ts";
import { LedgerTally } from "./ledger_tally.ts";
import { LedgerFollower } from "./ledger_follow.ts";

/** Thresholds (spec §2.11 defaults 0.3 and 3). */
export interface NudgeSettings {
  threshold: number;
  min_completions: number;
  /** Records older than this many hours are left out (ageing out of the alert, spec §3.3). */
  max_age_hours?: number;
}

/**
 * Summarise ledger text (pure). Lines that do not parse as records are skipped, and so are
 * records older than `max_age_hours` before `nowMs`. `recent_unverified` lists distinct task ids.
 */
export function summarizeLedger(
  text: string,
  settings: NudgeSettings,
  nowMs: number = Date.now(),
): VerificationNudge {
  const tally = new LedgerTally();
  tally.addLines(text.split("\n"));
  return tally.summary(settings, nowMs);
}

/** Each ledger followed so far, by path (one per workspace). */
const followers = new Map<string, LedgerFollower>();

/**
 * Read the ledger now (a missing file is an empty ledger) and summarise it. Only what was
 * appended since the last read is parsed (lib/verification/ledger_follow.ts).
 */
export async function readVerificationNudge(
  paths: WorkspacePaths,
  settings: NudgeSettings,
): Promise<VerificationNudge> {
  const path = ledgerPath(paths);
  let follower = followers.get(path);
  if (!follower) followers.set(path, follower = new LedgerFollower(path));
  return (await follower.read()).summary(settings);
}
