import assert from "node:assert/strict";
import {
  afterStartFailure,
  canStart,
  leaseView,
  type WorkerRecord,
  workerSlots,
  workerView,
} from "./fleet.ts";

const rec = (over: Partial<WorkerRecord> = {}): WorkerRecord => ({
  name: "box-1",
  principal: "box-1",
  slots: 2,
  registered_at: "2026-01-01T00:00:00.000Z",
  last_seen: 100_000,
  free: 2,
  running: 0,
  start_failures: 0,
  failures_total: 0,
  ...over,
});

Deno.test("workerView(): idle, busy, silent after two missed heartbeats, gone after a lease; a cordon or drain shows while connected", () => {
  const cases: [Partial<WorkerRecord>, number, string, boolean][] = [
    [{}, 100_000 + 1_000, "idle", true],
    [{ running: 1 }, 100_000 + 1_000, "busy", true],
    [{ running: 1 }, 100_000 + 31_000, "silent", true],
    [{}, 100_000 + 45_000, "gone", false],
    [{ cordoned: { reason: "r", by: "ops", at: "" } }, 100_000, "cordoned", true],
    [{ draining: { by: "ops", at: "" } }, 100_000, "draining", true],
    [{ cordoned: { reason: "r", by: "ops", at: "" } }, 200_000, "gone", false],
  ];
  for (const [over, now, state, connected] of cases) {
    const v = workerView(rec(over), now, 45);
    assert.equal(v.state, state, JSON.stringify(over));
    assert.equal(v.connected, connected);
  }
  assert.equal(workerView(rec(), 112_400, 45).heartbeat_age_s, 12);
});

Deno.test("afterStartFailure() counts failures in a row and cordons at the third, never over an operator's cordon", () => {
  let r = rec();
  for (let i = 1; i <= 2; i++) {
    r = afterStartFailure(r, "binary not found", "t");
    assert.equal(r.start_failures, i);
    assert.equal(r.cordoned, undefined);
  }
  r = afterStartFailure(r, "binary not found", "t");
  assert.equal(r.failures_total, 3);
  assert.deepEqual(r.cordoned, {
    reason: "3 agents in a row did not start on it; the last: binary not found",
    by: "service",
    at: "t",
  });
  const ops = { reason: "maintenance", by: "ops", at: "x" };
  const held = afterStartFailure(rec({ start_failures: 5, cordoned: ops }), "again", "t");
  assert.deepEqual(held.cordoned, ops);
});

Deno.test("workerSlots() offers only the adapters a worker can start; cordoned and draining ones are closed", () => {
  const [w] = workerSlots([rec({
    adapters: [
      { name: "claude", ready: false, problem: "API key not set" },
      { name: "generic", ready: true, isolation: "worktree" },
    ],
    cordoned: { reason: "r", by: "ops", at: "" },
  })]);
  assert.deepEqual(w.adapters, ["generic"]);
  assert.equal(w.closed, true);
  assert.equal(canStart(w, "claude"), false);
  assert.equal(canStart(w, "generic"), true);
  assert.equal(canStart({}, "anything"), true, "a worker that named none offers any");
});

Deno.test("leaseView(): a remote agent's heartbeat age, silent after two missed heartbeats, expired after a lease", () => {
  const at = "2026-01-01T00:00:00.000Z";
  const t0 = Date.parse(at);
  assert.deepEqual(leaseView(at, t0 + 5_000, 45), { heartbeat_age_s: 5, state: "running" });
  assert.deepEqual(leaseView(at, t0 + 31_000, 45), { heartbeat_age_s: 31, state: "silent" });
  assert.deepEqual(leaseView(at, t0 + 45_000, 45), {
    heartbeat_age_s: 45,
    state: "lease expired",
  });
  assert.deepEqual(leaseView(null, t0, 45), { heartbeat_age_s: null, state: "running" });
});
