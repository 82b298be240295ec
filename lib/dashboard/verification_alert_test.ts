import assert from "node:assert/strict";
import { type AlertMemory, alertWords, FRESH_ALERT, nextAlert } from "./verification_alert.ts";

/** Sequences of `threshold_exceeded` read by an open page, and where a toast shows. */
const CASES: { name: string; reads: boolean[]; toasts: boolean[] }[] = [
  {
    name: "opened with no alert, then it trips",
    reads: [false, true, true],
    toasts: [false, true, false],
  },
  { name: "opened with the alert on: indicator only", reads: [true, true], toasts: [false, false] },
  {
    name: "opened with it on, it clears, it trips",
    reads: [true, false, true],
    toasts: [false, false, true],
  },
  {
    name: "trips twice: one toast per page",
    reads: [false, true, false, true],
    toasts: [false, true, false, false],
  },
  { name: "never trips", reads: [false, false], toasts: [false, false] },
];

for (const c of CASES) {
  Deno.test(`nextAlert(): ${c.name}`, () => {
    let memory: AlertMemory = FRESH_ALERT;
    const toasts = c.reads.map((exceeded) => {
      const next = nextAlert(memory, { threshold_exceeded: exceeded });
      memory = next.memory;
      return next.toast;
    });
    assert.deepEqual(toasts, c.toasts);
  });
}

Deno.test("alertWords() names the counts, the ratio against the threshold and recent tasks", () => {
  assert.equal(
    alertWords({
      total_completions: 4,
      verified_count: 1,
      unverified_count: 3,
      unverified_ratio: 0.75,
      threshold_exceeded: true,
      nudge_threshold: 0.3,
      recent_unverified: ["c", "b", "a"],
    }),
    "ALERT: 3 of 4 completions unverified (75.0% > threshold 30.0%). Recent: c, b, a.",
  );
});
