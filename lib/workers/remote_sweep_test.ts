import assert from "node:assert/strict";
import { claimedSessions, runRefs } from "./remote_sweep.ts";

Deno.test("runRefs() picks only the run's base and its own sessions' agent branches", () => {
  const listed = [
    "aaa\trefs/service/base/run-1",
    "bbb\trefs/service/base/run-2",
    "ccc\trefs/heads/agent/s-1",
    "ddd\trefs/heads/agent/s-9",
    "eee\trefs/heads/agent/s-1-other",
    "",
  ].join("\n");
  assert.deepEqual(runRefs(listed, "run-1", ["s-1", "s-2"]), [
    "refs/service/base/run-1",
    "refs/heads/agent/s-1",
  ]);
});

Deno.test("claimedSessions() reads the claims' sessions and whether a worker ran one; a torn line says nothing", () => {
  const journal = [
    JSON.stringify({ type: "task_claimed", data: { task_id: "a", session_id: "s-1" } }),
    JSON.stringify({
      type: "task_claimed",
      data: { task_id: "b", session_id: "s-2", worker: "w" },
    }),
    JSON.stringify({ type: "task_merged", data: { task_id: "a", session_id: "s-x" } }),
    '{"type":"task_claimed","data":{"session_id":"s-3"',
  ].join("\n");
  const got = claimedSessions(journal);
  assert.deepEqual([...got.sessions], ["s-1", "s-2"]);
  assert.equal(got.remote, true);
  assert.equal(claimedSessions(journal.split("\n")[0]).remote, false);
});
