import assert from "node:assert/strict";
import { DependencyGraph, dependencyMove, movesDependents } from "./graph.ts";
import type { TaskStatus } from "./lifecycle.ts";

/** `[status of the waiting task, its dependencies satisfied, expected move]`. */
const MOVES: [TaskStatus, boolean, "unblock" | "reblock" | undefined][] = [
  ["BLOCKED", true, "unblock"],
  ["BLOCKED", false, undefined],
  ["OPEN", false, "reblock"],
  ["OPEN", true, undefined],
  ["CLAIMED", false, undefined], // started work is never pulled back by the graph
  ["DONE", false, undefined],
];

for (const [status, satisfied, move] of MOVES) {
  Deno.test(`dependencyMove(): a ${status} task whose dependencies are ${satisfied ? "" : "not "}satisfied: ${move ?? "stays"}`, () => {
    assert.equal(dependencyMove(status, satisfied), move);
  });
}

Deno.test("movesDependents(): only a change in whether the task satisfies its dependents releases or holds them", () => {
  assert.equal(movesDependents("DONE", "CLOSED"), false);
  assert.equal(movesDependents("IN_PROGRESS", "DONE"), true);
  assert.equal(movesDependents("DONE", "OPEN"), true); // its work went back: dependents wait again
  assert.equal(movesDependents("OPEN", "CLAIMED"), false);
});

Deno.test("DependencyGraph: dependents by id, readiness read from the statuses as they are now", () => {
  const status = new Map<string, TaskStatus>([["a", "IN_PROGRESS"], ["b", "BLOCKED"]]);
  const graph = new DependencyGraph((id) => status.get(id));
  graph.add({ id: "b", depends_on: ["a"] });
  assert.deepEqual(graph.dependentsOf("a"), ["b"]);
  assert.deepEqual(graph.dependentsOf("b"), []);
  assert.equal(graph.move({ id: "b", status: "BLOCKED", depends_on: ["a"] }), undefined);
  status.set("a", "DONE");
  assert.equal(graph.move({ id: "b", status: "BLOCKED", depends_on: ["a"] }), "unblock");
  assert.equal(graph.satisfied("gone"), false);
});
