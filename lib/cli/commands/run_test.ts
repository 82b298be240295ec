import assert from "node:assert/strict";
import { warningsOf } from "./run.ts";

Deno.test("a detached run's start hands its warnings, each with its fix, to the terminal", () => {
  const log = [
    "warning: node_modules/ is in your checkout but ignored by git …",
    "  fix: share it …",
    "run run-1: 5 to do from plan.yaml, landing on main",
    "  fix: not a warning's",
    "warning: an MCP server …",
  ];
  assert.deepEqual(warningsOf(log), [log[0], log[1], log[4]]);
});
