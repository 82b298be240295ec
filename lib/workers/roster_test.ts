/** The workers a server has heard of: names bound to principals, connected within a lease, forgotten. */
import assert from "node:assert/strict";
import { FORGET_AFTER_MS, WorkerRoster } from "./roster.ts";

const BOX1 = { principal: "box-1", scope: "worker" as const };
const BOX2 = { principal: "box-2", scope: "worker" as const };

Deno.test("WorkerRoster: a name is its first principal's; another's token is 403 worker_name_taken", () => {
  const roster = new WorkerRoster(() => 0);
  roster.heard("w1", BOX1, { free: 2 });
  assert.throws(() => roster.heard("w1", BOX2), (e: Error & { code?: string }) => {
    assert.equal(e.code, "worker_name_taken");
    assert.match(e.message, /belongs to principal "box-1"; give this worker its own --name/);
    return true;
  });
  roster.left("w1", BOX2);
  assert.equal(roster.connected().length, 1, "another principal cannot make it leave");
  roster.left("w1", BOX1);
  assert.equal(roster.connected().length, 0);
  roster.heard("w1", BOX2);
  assert.equal(roster.connected()[0].principal, "box-2", "a name that left is free again");
});

Deno.test("WorkerRoster: connected within a lease, free slots as last said, forgotten after long silence", () => {
  let now = 0;
  const roster = new WorkerRoster(() => now);
  roster.setLease(30);
  roster.heard("w1", BOX1, { free: 4 });
  roster.heard("w2", BOX2, { free: 1 });
  roster.heard("w1", BOX1, { free: 1 }); // it claimed three
  roster.touched("w2", { draining: true });
  assert.deepEqual(
    roster.connected().map((w) => [w.name, w.free, w.draining]),
    [["w1", 1, false], ["w2", 1, true]],
  );
  now = 31_000;
  roster.touched("w1");
  assert.deepEqual(
    roster.connected().map((w) => w.name),
    ["w1"],
    "w2 was not heard of for a lease",
  );
  assert.throws(() => roster.heard("w2", BOX1), /worker_name_taken|belongs/, "still bound");
  now = 31_000 + FORGET_AFTER_MS + 1;
  roster.heard("w3", BOX1);
  roster.heard("w2", BOX1); // forgotten: the name is free
  assert.equal(roster.connected().find((w) => w.name === "w2")?.principal, "box-1");
  roster.touched("nobody");
  assert.equal(roster.connected().some((w) => w.name === "nobody"), false);
});

Deno.test("WorkerRoster: lost leases are counted", () => {
  const roster = new WorkerRoster();
  roster.leaseLost();
  roster.leaseLost();
  assert.equal(roster.leasesLost, 2);
});
