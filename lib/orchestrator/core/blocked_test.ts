import assert from "node:assert/strict";
import type { TaskStatus } from "../../tasks/lifecycle.ts";
import { blockedReasons } from "./blocked.ts";
import type { TaskView } from "./state.ts";

function tasks(specs: [string, TaskStatus, string[]?][]): Map<string, TaskView> {
  return new Map(specs.map(([id, status, depends_on = []], seq) => [id, {
    id,
    status,
    title: id,
    role: "dev",
    priority: 2,
    seq,
    owned_files: [],
    depends_on,
    attempts: 0,
    summary: null,
  }]));
}

Deno.test("blockedReasons() names every blocker with its state, and every failed task to act on", () => {
  const table: { name: string; specs: [string, TaskStatus, string[]?][]; reason: string }[] = [
    {
      name: "one running dependency",
      specs: [["a", "IN_PROGRESS"], ["d", "BLOCKED", ["a"]]],
      reason: "blocked: waits on a (IN_PROGRESS)",
    },
    {
      name: "a failed and a running dependency",
      specs: [["f", "FAILED"], ["a", "IN_PROGRESS"], ["d", "BLOCKED", ["f", "a"]]],
      reason: "blocked: waits on f (FAILED), a (IN_PROGRESS); `service retry f` tries it again, " +
        "`service cancel f` lets this one start without it",
    },
    {
      name: "two failed dependencies, one landed and one still to merge",
      specs: [["f1", "FAILED"], ["f2", "FAILED"], ["ok", "CLOSED"], ["m", "DONE"], [
        "d",
        "BLOCKED",
        ["f1", "ok", "m", "f2"],
      ]],
      reason: "blocked: waits on f1 (FAILED), f2 (FAILED), m (DONE, to merge); `service retry " +
        "f1 f2` tries them again, `service cancel f1 f2` lets this one start without them",
    },
    {
      name: "behind a blocked dependency whose own dependency failed",
      specs: [["f", "FAILED"], ["b", "BLOCKED", ["f"]], ["d", "BLOCKED", ["b", "x"]]],
      reason: "blocked: waits on b (BLOCKED behind f, which FAILED), x (not in this run); " +
        "`service retry f` tries it again, `service cancel f` lets this one start without it",
    },
  ];
  for (const c of table) {
    const reason = blockedReasons(tasks(c.specs)).get("d");
    assert.equal(reason?.reason, c.reason, c.name);
    assert.equal(reason?.stuck, c.reason.includes("FAILED"), c.name);
  }
});
