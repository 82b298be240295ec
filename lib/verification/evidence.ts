/**
 * The ledger's evidence flags from what the service observed (spec §2.9, DESIGN.md §10), pure:
 * `tests_run` from the session log's test-runner summaries, `quality_gates_run` when at least
 * one configured quality gate ran on the tree the merge would produce, `completion_signals_checked`
 * when the janitor evaluated at least one of the task's completion signals, whatever the outcome.
 */
import type { SignalResult } from "../janitor/signals.ts";
import type { Evidence } from "./ledger.ts";
import type { TestRunReport } from "./test_run_detector.ts";

/** What the service saw of one completion. */
export interface Observation {
  testRuns: TestRunReport;
  /** The checks evaluated on the merged tree; undefined when they could not run. */
  checks?: readonly SignalResult[];
}

/** The evidence flags of one completion. */
export function observedEvidence(o: Observation): Evidence {
  const checks = o.checks ?? [];
  return {
    tests_run: o.testRuns.tests_run,
    quality_gates_run: checks.some((c) => c.kind === "quality_gate"),
    completion_signals_checked: checks.some((c) => c.kind !== "quality_gate"),
  };
}
