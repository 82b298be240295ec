import assert from "node:assert/strict";
import { unmergedRescues } from "./rescued.ts";
import type { RescueRef } from "../worktrees/reap.ts";

const ref = (session: string): RescueRef => ({
  session_id: session,
  ref: `refs/service/rescue/${session}`,
  commit: "a".repeat(40),
  committed_at: "2026-01-01T00:00:00Z",
  subject: "work",
});

Deno.test("unmergedRescues() leaves out work the branch holds and work of tasks that merged since", () => {
  const refs = [ref("s-1"), ref("s-2"), ref("s-3"), ref("s-unknown")];
  const left = unmergedRescues(refs, {
    sessionTask: new Map([["s-1", "t1"], ["s-2", "t2"], ["s-3", "t3"]]),
    merged: new Set(["t1"]),
    heldByBranch: new Set(["refs/service/rescue/s-3"]),
  });
  assert.deepEqual(left.map((r) => r.session_id), ["s-2", "s-unknown"]);
});
