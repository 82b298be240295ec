import assert from "node:assert/strict";
import { join } from "node:path";
import { tempRepo } from "../git/_test_repo.ts";
import { halfRemovedEntries, settledWorktrees, settleWorktrees } from "./settle.ts";
import { createWorktree } from "./worktrees.ts";

const exists = (path: string) => Deno.lstat(path).then(() => true, () => false);

Deno.test("settledWorktrees() picks only worktrees whose task is CANCELLED, FAILED or CLOSED", () => {
  const tasks = [
    { id: "a", status: "CANCELLED", session_id: "s-a" },
    { id: "b", status: "ORPHANED", session_id: "s-b" }, // a resumed run continues it
    { id: "c", status: "IN_PROGRESS", session_id: "s-c" },
    { id: "d", status: "FAILED", session_id: "s-d" },
    { id: "e", status: "CLOSED", session_id: "s-e" },
    { id: "f", status: "DONE", session_id: "s-f" }, // lands at the next run
    { id: "g", status: "CANCELLED", session_id: null },
  ];
  const left = settledWorktrees(["s-a", "s-b", "s-c", "s-d", "s-e", "s-f", "s-x"], tasks);
  assert.deepEqual(left.map((l) => l.task_id), ["a", "d", "e"]);
});

Deno.test("settleWorktrees() reaps a cancelled task's worktree and keeps its uncommitted work on the rescue ref", async () => {
  await using repo = await tempRepo();
  const wt = await createWorktree(repo.root, "s1", await repo.git(["rev-parse", "main"]));
  await repo.write("half.txt", "agent work\n", wt.path);
  const out = await settleWorktrees(repo.root, [
    { id: "t1", status: "CANCELLED", session_id: "s1" },
  ]);
  assert.equal(await exists(wt.path), false);
  assert.equal(await repo.git(["show", "refs/service/rescue/s1:half.txt"]), "agent work");
  assert.doesNotMatch(await repo.git(["worktree", "list"]), /s1/);
  assert.match(
    out.lines[0],
    /t1 \(CANCELLED\): worktree of s1 removed; its unmerged work is kept at refs\/service\/rescue\/s1/,
  );
});

Deno.test("settleWorktrees() says of a worktree with no work of its own that nothing in it is unmerged, never that its work merged", async () => {
  await using repo = await tempRepo();
  const wt = await createWorktree(repo.root, "s2", await repo.git(["rev-parse", "main"]));
  const out = await settleWorktrees(repo.root, [
    { id: "t2", status: "CANCELLED", session_id: "s2" },
  ]);
  assert.equal(await exists(wt.path), false);
  assert.equal(
    out.lines[0],
    "t2 (CANCELLED): worktree of s2 removed (nothing in it is unmerged: merged, or no work of its own)",
  );
});

// What `kill -9` during `git worktree remove` leaves: git deletes the worktree's directory, then
// the files of `.git/worktrees/<id>` one by one; cut short, the entry has no `gitdir` left.
async function cutShortRemoval(repo: { root: string }, id: string) {
  const admin = join(repo.root, ".git/worktrees", id);
  await Deno.remove(join(repo.root, ".sdd/worktrees", id), { recursive: true });
  await Deno.remove(join(admin, "gitdir"));
  return admin;
}

Deno.test("settleWorktrees() prunes an entry a killed removal left without gitdir, keeping the detached commit its HEAD names", async () => {
  await using repo = await tempRepo();
  const main = await repo.git(["rev-parse", "main"]);
  const wt = await createWorktree(repo.root, "s2", main);
  await repo.write("w.txt", "work\n", wt.path);
  await repo.git(["add", "-A"], wt.path);
  await repo.git(["commit", "-qm", "agent work"], wt.path);
  const work = await repo.git(["rev-parse", "HEAD"], wt.path);
  await repo.git(["checkout", "-q", "--detach", "HEAD"], wt.path);
  await repo.git(["branch", "-D", "agent/s2"]); // only the entry's HEAD names the work now
  const admin = await cutShortRemoval(repo, "s2");
  assert.deepEqual(await halfRemovedEntries(repo.root), [admin]);
  const out = await settleWorktrees(repo.root, []);
  assert.equal(await exists(admin), false, "the half-removed entry is pruned");
  assert.deepEqual(out.pruned, [admin]);
  assert.equal(await repo.git(["rev-parse", "refs/service/rescue/s2"]), work, "no commit lost");
});

Deno.test("settleWorktrees() leaves an entry without gitdir alone while its worktree still holds work", async () => {
  await using repo = await tempRepo();
  const wt = await createWorktree(repo.root, "s3", await repo.git(["rev-parse", "main"]));
  await repo.write("keep.txt", "uncommitted\n", wt.path);
  const admin = join(repo.root, ".git/worktrees/s3");
  await Deno.remove(join(admin, "gitdir"));
  assert.deepEqual(await halfRemovedEntries(repo.root), []);
  await settleWorktrees(repo.root, [{ id: "t3", status: "IN_PROGRESS", session_id: "s3" }]);
  assert.equal(await exists(admin), true);
  assert.equal(await Deno.readTextFile(join(wt.path, "keep.txt")), "uncommitted\n");
});
