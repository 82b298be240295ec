import assert from "node:assert/strict";
import { join } from "node:path";
import { appendEvents } from "../journal/journal_file.ts";
import { journalPath, workspacePaths } from "../workspace.ts";
import { findMergeCommit, landingComment } from "./write_back.ts";

Deno.test("landingComment() says when the work landed without a report, and how", () => {
  const base = { taskId: "t", commit: "abc123" };
  assert.match(landingComment(base), /^Landed: task `t` was verified and merged in abc123\.$/);
  assert.match(
    landingComment({ ...base, unreported: "exited" }),
    /^Landed without a report: task `t`'s agent exited without reporting; .* merged in abc123\./,
  );
  assert.match(
    landingComment({ ...base, unreported: "interrupted" }),
    /^Landed without a report: .* interrupted .* \(recovery\.land_unreported\)/,
  );
});

Deno.test("landingComment() links the pull request the work landed through", () => {
  assert.match(
    landingComment({ taskId: "t", commit: "abc123", pr: "https://github.com/a/b/pull/3" }),
    /^Landed: task `t` was verified and merged in abc123 through https:\/\/github.com\/a\/b\/pull\/3\.$/,
  );
});

Deno.test("findMergeCommit() reads the merge and whether the completion it landed was reported", async () => {
  const root = await Deno.makeTempDir();
  try {
    const paths = workspacePaths(root);
    const path = journalPath(paths, "run-1");
    await Deno.mkdir(join(path, ".."), { recursive: true });
    await appendEvents(path, [
      { type: "task_completed", data: { task_id: "a" } },
      { type: "task_completed", data: { task_id: "b", recovered: true } },
      { type: "task_merged", data: { task_id: "b", commit: "c-b" } },
      { type: "task_merged", data: { task_id: "a", commit: "c-a" } },
      { type: "task_completed", data: { task_id: "c", recovered: true, interrupted: true } },
      { type: "task_merged", data: { task_id: "c", commit: "c-c" } },
      { type: "task_completed", data: { task_id: "p" } },
      { type: "task_merged", data: { task_id: "p", commit: "c-p", pr: "https://gh/pull/3" } },
    ]);
    assert.deepEqual(await findMergeCommit(paths, "p"), {
      runId: "run-1",
      commit: "c-p",
      pr: "https://gh/pull/3",
    });
    assert.deepEqual(await findMergeCommit(paths, "a"), { runId: "run-1", commit: "c-a" });
    assert.deepEqual(await findMergeCommit(paths, "b"), {
      runId: "run-1",
      commit: "c-b",
      unreported: "exited",
    });
    assert.equal((await findMergeCommit(paths, "c"))?.unreported, "interrupted");
    assert.equal(await findMergeCommit(paths, "d"), undefined);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
