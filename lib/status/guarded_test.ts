import assert from "node:assert/strict";
import { foldActivity, initialActivity } from "../board/activity.ts";
import type { JournalEvent } from "../journal/row.ts";
import { guardedTasks } from "./guarded.ts";
import { formatStatus, guardedLines } from "./format.ts";

function activity(rows: JournalEvent[]) {
  const state = initialActivity();
  rows.forEach((row, i) => foldActivity(state, row, i));
  return state;
}

const claim = (id: string, session: string): JournalEvent => ({
  type: "task_claimed",
  data: { task_id: id, session_id: session },
});

Deno.test("guardedTasks() names the current attempt's protected paths and owned files left; landed tasks and earlier attempts are left out", () => {
  const state = activity([
    claim("a", "s1"),
    { type: "task_protected_paths", data: { task_id: "a", paths: ["service.yaml"] } },
    { type: "task_completed", data: { task_id: "a" } },
    claim("b", "s2"),
    {
      type: "task_owned_files_exceeded",
      data: { task_id: "b", paths: ["README.md"], owned_files: ["x.ts"], enforced: true },
    },
    claim("c", "s3"),
    { type: "task_protected_paths", data: { task_id: "c", paths: ["CODEOWNERS"] } },
    { type: "task_merged", data: { task_id: "c" } },
    claim("d", "s4"),
    { type: "task_protected_paths", data: { task_id: "d", paths: ["plan.yaml"] } },
    { type: "task_retried", data: { task_id: "d" } },
    claim("d", "s5"), // a new attempt: what the last one touched is history
  ]);
  assert.deepEqual(guardedTasks(state), [
    { task_id: "a", state: "needs_review", protected_paths: ["service.yaml"] },
    {
      task_id: "b",
      state: "running",
      owned_files_exceeded: { paths: ["README.md"], owned_files: ["x.ts"], enforced: true },
    },
  ]);
});

Deno.test("service status names protected paths and refused files, escaped like every line", () => {
  const plain = (s: string) => s;
  const lines = formatStatus(
    {
      workspace: "/w",
      run: { run_id: "r1", status: "running", alive: true, url: "http://x", waiting: {} },
      guarded: [
        { task_id: "a", state: "needs_review", protected_paths: ["service.yaml", "\x1b[2Kx.yml"] },
        {
          task_id: "b",
          state: "failed",
          owned_files_exceeded: { paths: ["README.md"], owned_files: ["x.ts"], enforced: true },
        },
      ],
    },
    "test",
    { red: plain, yellow: plain, green: plain, bold: plain },
  );
  const text = lines.join("\n");
  assert.match(
    text,
    /a PROTECTED: its diff changes service\.yaml, \\x1b\[2Kx\.yml; it waits for an operator's merge on the board/,
  );
  assert.match(
    text,
    /b OUTSIDE OWNED FILES: its diff changes README\.md outside owned_files \(x\.ts\); refused \(enforce_owned_files\)/,
  );
  assert.deepEqual(guardedLines(undefined), []);
});
