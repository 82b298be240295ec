import assert from "node:assert/strict";
import { AlertLatch } from "./alert_latch.ts";
import type { VerificationNudge } from "./nudge_types.ts";

function nudge(up: boolean): VerificationNudge {
  return {
    total_completions: 4,
    verified_count: up ? 1 : 4,
    unverified_count: up ? 3 : 0,
    unverified_ratio: up ? 0.75 : 0,
    threshold_exceeded: up,
    nudge_threshold: 0.3,
    recent_unverified: [],
  };
}

/** A latch whose reads answer `states` in turn, each after its delay (ms). */
function latch(states: [up: boolean, delayMs: number][]) {
  const trips: number[] = [];
  let reads = 0;
  const l = new AlertLatch({
    read: () => {
      const [up, ms] = states[reads++];
      return new Promise((resolve) => setTimeout(() => resolve(nudge(up)), ms));
    },
    onTrip: () => trips.push(reads),
    warn: () => {},
  });
  return { l, trips, reads: () => reads };
}

Deno.test("AlertLatch trips once when checks asked at once answer out of order", async () => {
  // Baseline down; the first check reads an older ledger slowly (down), the second a newer one
  // fast (up), the third up again, slower than the first: answered in any order they might
  // flap down and up again; read in the order asked, the alert trips once.
  const { l, trips } = latch([[false, 0], [false, 30], [true, 0], [true, 60]]);
  await l.baseline();
  await Promise.all([l.check(), l.check(), l.check()]);
  assert.equal(trips.length, 1);
});

Deno.test("AlertLatch: an alert already up when the process starts does not trip; one that cleared trips again", async () => {
  const { l, trips } = latch([[true, 0], [true, 0], [false, 0], [true, 0]]);
  await l.check(); // reads the baseline first
  assert.equal(trips.length, 0);
  await l.check();
  await l.check();
  assert.equal(trips.length, 1);
});

Deno.test("AlertLatch keeps its state when the summary cannot be read, and says so", async () => {
  const warnings: string[] = [];
  let reads = 0;
  const trips: number[] = [];
  const l = new AlertLatch({
    read:
      () => (reads++ === 1 ? Promise.reject(new Error("disk gone")) : Promise.resolve(nudge(true))),
    onTrip: () => trips.push(reads),
    warn: (w) => warnings.push(w),
  });
  await l.check();
  await l.check();
  assert.equal(trips.length, 0, "the baseline was up already");
  assert.match(warnings[0], /verification summary unreadable: disk gone/);
});
