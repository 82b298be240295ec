/** `/healthz` and `/readyz` decided from facts, one row per situation. */
import assert from "node:assert/strict";
import { type HealthFacts, liveness, readiness, stuckAfterMs } from "./health.ts";

const NOW = 1_000_000;
const fresh = { at: NOW - 1000, everyMs: 1000 };
const stale = { at: NOW - 61_000, everyMs: 1000 };

Deno.test("liveness() is stuck only when a tick is a minute overdue (or three slow intervals)", () => {
  const base: HealthFacts = { now: NOW, closing: false, runStarting: false };
  const rows: [string, Partial<HealthFacts>, string][] = [
    ["a server that just started", {}, "ok"],
    ["a server whose tick is fresh", { serverTick: fresh }, "ok"],
    ["a server whose tick hangs", { serverTick: stale }, "stuck"],
    ["a run loop that ticks", { serverTick: fresh, runTick: fresh }, "ok"],
    ["a run loop that stopped ticking", { serverTick: fresh, runTick: stale }, "stuck"],
    [
      "a slow tick interval of 30 s, 61 s ago",
      { runTick: { at: NOW - 61_000, everyMs: 30_000 } },
      "ok",
    ],
    [
      "a slow tick interval of 30 s, 91 s ago",
      { runTick: { at: NOW - 91_000, everyMs: 30_000 } },
      "stuck",
    ],
  ];
  for (const [what, facts, word] of rows) {
    const a = liveness({ ...base, ...facts });
    assert.equal(a.word, word, what);
    assert.equal(a.ok, word === "ok", what);
  }
  assert.equal(stuckAfterMs(1000), 60_000);
});

Deno.test("readiness() waits for the run's loop under `service run` and says stopping on shutdown", () => {
  const base: HealthFacts = { now: NOW, closing: false, runStarting: false };
  const rows: [string, Partial<HealthFacts>, string][] = [
    ["`service serve`", {}, "ready"],
    ["`service run` before its journal is open", { runStarting: true }, "starting"],
    ["`service run` with its loop live", { runStarting: true, runTick: fresh }, "ready"],
    ["a server shutting down", { closing: true, runTick: fresh }, "stopping"],
  ];
  for (const [what, facts, word] of rows) {
    const a = readiness({ ...base, ...facts });
    assert.equal(a.word, word, what);
    assert.equal(a.ok, word === "ready", what);
  }
});
