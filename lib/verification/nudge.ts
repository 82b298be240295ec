/**
 * The verification summary (spec §2.10, §3.3; DESIGN.md §6): computed from the ledger as it is
 * at request time. Strict `>` on the unrounded ratio; the reported ratio is rounded to 3
 * decimals; a record's own `verified` field is authoritative; `recent_unverified` is newest first.
 */
import type { WorkspacePaths } from "../workspace.ts";
import { ledgerPath } from "./ledger.ts";
import type { VerificationNudge } from "./nudge_types.ts";

/** Thresholds (spec §2.11 defaults 0.3 and 3). */
export interface NudgeSettings {
  threshold: number;
  min_completions: number;
  /** Records older than this many hours are left out (ageing out of the alert, spec §3.3). */
  max_age_hours?: number;
}

/** How many unverified task ids `recent_unverified` lists at most. */
const RECENT_UNVERIFIED_LIMIT = 10;

/**
 * Summarise ledger text (pure). Lines that do not parse as records are skipped, and so are
 * records older than `max_age_hours` before `nowMs`. `recent_unverified` lists distinct task ids.
 */
export function summarizeLedger(
  text: string,
  settings: NudgeSettings,
  nowMs: number = Date.now(),
): VerificationNudge {
  const oldest = settings.max_age_hours === undefined
    ? -Infinity
    : nowMs / 1000 - settings.max_age_hours * 3600;
  let total = 0;
  let verified = 0;
  const unverifiedIds: string[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    let record: Record<string, unknown>;
    try {
      record = JSON.parse(line);
    } catch {
      continue;
    }
    if (!record || typeof record !== "object" || typeof record.task_id !== "string") continue;
    if (typeof record.timestamp === "number" && record.timestamp < oldest) continue;
    total++;
    const isVerified = typeof record.verified === "boolean"
      ? record.verified
      : Boolean(record.tests_run || record.quality_gates_run || record.completion_signals_checked);
    if (isVerified) verified++;
    else unverifiedIds.push(record.task_id);
  }
  const unverified = total - verified;
  const ratio = total === 0 ? 0 : unverified / total;
  return {
    total_completions: total,
    verified_count: verified,
    unverified_count: unverified,
    unverified_ratio: Math.round(ratio * 1000) / 1000,
    threshold_exceeded: total >= settings.min_completions && ratio > settings.threshold,
    nudge_threshold: settings.threshold,
    recent_unverified: [...new Set(unverifiedIds.reverse())].slice(0, RECENT_UNVERIFIED_LIMIT),
  };
}

/** Read the ledger now (a missing file is an empty ledger) and summarise it. */
export async function readVerificationNudge(
  paths: WorkspacePaths,
  settings: NudgeSettings,
): Promise<VerificationNudge> {
  let text = "";
  try {
    text = await Deno.readTextFile(ledgerPath(paths));
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  return summarizeLedger(text, settings);
}
