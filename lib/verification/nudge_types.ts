/**
 * The verification nudge as `GET /status` serves it. A type only, importing nothing, so the
 * browser bundle's alert names it without reaching the ledger (lib/import_graph_test.ts keeps it
 * so).
 */

/** The `verification_nudge` object of `/status` (spec §2.10). */
export interface VerificationNudge {
  total_completions: number;
  verified_count: number;
  unverified_count: number;
  unverified_ratio: number;
  threshold_exceeded: boolean;
  nudge_threshold: number;
  recent_unverified: string[];
}
