import assert from "node:assert/strict";
import type { SignalResult } from "../janitor/signals.ts";
import { observedEvidence } from "./evidence.ts";
import { ledgerRecord, verificationCount } from "./ledger.ts";

const check = (kind: SignalResult["kind"], passed: boolean): SignalResult => ({
  kind,
  detail: kind === "quality_gate" ? "deno lint" : "src/x.ts",
  passed,
  output_tail: "",
  duration_ms: 1,
});
const sighting = {
  runner: "deno test",
  outcome: "failed" as const,
  line: "FAILED | 1 passed | 1 failed (3ms)",
  logLine: 9,
  source: "plain" as const,
};

// Every combination of the three observations, each check passing or failing (a failed gate
// or a failing test run is still evidence that verification happened).
for (const tests of [false, true]) {
  for (const gate of [undefined, true, false]) {
    for (const signal of [undefined, true, false]) {
      const name = `tests ${tests}, gate ${gate ?? "none"}, signal ${signal ?? "none"}`;
      Deno.test(`observedEvidence(): ${name}`, () => {
        const checks: SignalResult[] = [];
        if (signal !== undefined) checks.push(check("path_exists", signal));
        if (gate !== undefined) checks.push(check("quality_gate", gate));
        const evidence = observedEvidence({
          testRuns: { tests_run: tests, sightings: tests ? [sighting] : [] },
          checks,
        });
        assert.deepEqual(evidence, {
          tests_run: tests,
          quality_gates_run: gate !== undefined,
          completion_signals_checked: signal !== undefined,
        });
        const expected = Number(tests) + Number(gate !== undefined) + Number(signal !== undefined);
        assert.equal(verificationCount(evidence), expected);
        const record = ledgerRecord(evidence, {
          taskId: "t1",
          sessionId: "s1",
          nowMs: 1_700_000_000_000,
        });
        assert.equal(record.verified, expected > 0);
        assert.equal(record.timestamp, 1_700_000_000);
      });
    }
  }
}

Deno.test("observedEvidence(): gates that could not run (a conflict) observe nothing", () => {
  assert.deepEqual(observedEvidence({ testRuns: { tests_run: false, sightings: [] } }), {
    tests_run: false,
    quality_gates_run: false,
    completion_signals_checked: false,
  });
});
