import assert from "node:assert/strict";
import { knownCommitCounts } from "../git/known_commits.ts";
import { tempRepo, type TestRepo } from "../git/_test_repo.ts";
import { mergeAgentBranches } from "../merge/merge.ts";
import { listRescueRefs, reapWorktree } from "./reap.ts";
import { createWorktree } from "./worktrees.ts";
import { treeRemovalCounts } from "./remove_tree.ts";

const exists = (path: string) => Deno.stat(path).then(() => true, () => false);

Deno.test("reapWorktree() writes a rescue ref before removing a worktree with unmerged work", async () => {
  await using repo = await tempRepo();
  const wt = await createWorktree(repo.root, "s1", await repo.git(["rev-parse", "main"]));
  await repo.write("half-done.txt", "uncommitted agent work\n", wt.path);
  const result = await reapWorktree(repo.root, "s1", { target: "main" });
  assert.equal(result.removed, true);
  assert.equal(result.merged, false);
  assert.equal(result.committed_partial, true);
  assert.equal(result.rescue_ref, "refs/service/rescue/s1");
  assert.equal(await exists(wt.path), false);
  assert.equal(
    await repo.git(["show", "refs/service/rescue/s1:half-done.txt"]),
    "uncommitted agent work",
  );
  assert.equal(
    await repo.git(["rev-parse", "agent/s1"]),
    result.tip,
    "branch kept for a later merge",
  );
  const refs = await listRescueRefs(repo.root);
  assert.equal(refs.length, 1);
  assert.equal(refs[0].session_id, "s1");
  assert.equal(refs[0].commit, result.tip);
  assert.match(refs[0].subject, /partial work of session s1/);
});

/** Session s1's worktree reaped as merged: removed, its branch deleted, no rescue ref. */
async function assertReapedAsMerged(
  repo: TestRepo,
  result: Awaited<ReturnType<typeof reapWorktree>>,
  tip: string,
  path: string,
) {
  assert.deepEqual(result, {
    removed: true,
    merged: true,
    tip,
    committed_partial: false,
    rescue_ref: undefined,
  });
  assert.equal(await exists(path), false);
  assert.equal(await repo.git(["branch", "--list", "agent/s1"]), "");
  assert.deepEqual(await listRescueRefs(repo.root), []);
}

Deno.test("reapWorktree() removes a merged worktree and its branch without a rescue ref", async () => {
  await using repo = await tempRepo();
  const wt = await createWorktree(repo.root, "s1", await repo.git(["rev-parse", "main"]));
  await repo.write("a.txt", "a\n", wt.path);
  const tip = await repo.commitAll("agent work", wt.path);
  await repo.git(["merge", "-q", "--no-edit", "agent/s1"]);
  const result = await reapWorktree(repo.root, "s1", { target: "main" });
  await assertReapedAsMerged(repo, result, tip, wt.path);
});

/** Agent work on `agent/<session>` landed on main by the service's merge train. */
async function landedByTrain(repo: TestRepo, session: string) {
  const base = await repo.git(["rev-parse", "main"]);
  const wt = await createWorktree(repo.root, session, base);
  await repo.write(`${session}.txt`, "work\n", wt.path);
  const tip = await repo.commitAll("agent work", wt.path);
  const [out] = await mergeAgentBranches(repo.root, {
    target: "main",
    members: [{ agent: `agent/${session}`, taskId: `t-${session}` }],
  });
  assert.equal(out.status, "merged");
  return { base, tip, wt };
}

Deno.test("reapWorktree() after the service's train landed the work knows from the target's ref file that it merged: no git asked, the branch deleted, no rescue ref", async () => {
  await using repo = await tempRepo();
  const { tip, wt } = await landedByTrain(repo, "s1");
  const contained = knownCommitCounts.contained;
  const result = await reapWorktree(repo.root, "s1", { target: "main" });
  assert.equal(knownCommitCounts.contained, contained + 1);
  await assertReapedAsMerged(repo, result, tip, wt.path);
});

Deno.test("reapWorktree() keeps work the train landed on a rescue ref once the target moved back before the merge", async () => {
  await using repo = await tempRepo();
  const { base, tip } = await landedByTrain(repo, "s1");
  await repo.git(["update-ref", "refs/heads/main", base]); // someone reset the target
  const result = await reapWorktree(repo.root, "s1", { target: "main" });
  assert.equal(result.merged, false);
  assert.equal(result.rescue_ref, "refs/service/rescue/s1");
  assert.equal(await repo.git(["rev-parse", "refs/service/rescue/s1"]), tip);
  assert.equal(await repo.git(["rev-parse", "agent/s1"]), tip, "branch kept");
});

Deno.test("reapWorktree() asks git when the target's file does not answer (packed) or names a commit the service never wrote: still merged", async () => {
  for (const move of ["packed", "a user's commit on top"]) {
    await using repo = await tempRepo();
    const { tip } = await landedByTrain(repo, "s1");
    if (move === "packed") await repo.git(["pack-refs", "--all", "--prune"]);
    else await repo.commitAll("the user's commit");
    const contained = knownCommitCounts.contained;
    const result = await reapWorktree(repo.root, "s1", { target: "main" });
    assert.equal(knownCommitCounts.contained, contained, move);
    assert.equal(result.merged, true, move);
    assert.equal(result.tip, tip, move);
    assert.equal(result.rescue_ref, undefined, move);
  }
});

Deno.test("reapWorktree() keeps the worktree when its work cannot be committed", async () => {
  await using repo = await tempRepo();
  const wt = await createWorktree(repo.root, "s1", await repo.git(["rev-parse", "main"]));
  await repo.write("x.txt", "x\n", wt.path);
  // Its branch cannot move: another writer's lock (a directory, so it stays).
  await Deno.mkdir(`${repo.root}/.git/refs/heads/agent/s1.lock`);
  const result = await reapWorktree(repo.root, "s1", { target: "main" });
  assert.equal(result.removed, false);
  assert.match(result.reason ?? "", /s1\.lock/);
  assert.equal(await exists(`${wt.path}/x.txt`), true);
});

Deno.test("reapWorktree() puts back a worktree whose .git file was broken, then keeps its work", async () => {
  await using repo = await tempRepo();
  const wt = await createWorktree(repo.root, "s1", await repo.git(["rev-parse", "main"]));
  await repo.write("x.txt", "x\n", wt.path);
  await Deno.writeTextFile(`${wt.path}/.git`, "gitdir: /nonexistent\n"); // an agent's doing
  const warned: string[] = [];
  const result = await reapWorktree(repo.root, "s1", {
    target: "main",
    warn: (l) => warned.push(l),
  });
  assert.equal(result.removed, true, result.reason ?? "");
  assert.equal(result.committed_partial, true);
  assert.equal(await repo.git(["show", "refs/service/rescue/s1:x.txt"]), "x");
  assert.match(warned.join("\n"), /git files were put back \(\.git file changed\)/);
});

Deno.test("reapWorktree() removes a merged worktree and its git directory without a `git worktree` process: git lists none left", async () => {
  await using repo = await tempRepo();
  const wt = await createWorktree(repo.root, "s1", await repo.git(["rev-parse", "main"]));
  await repo.write("done.txt", "work\n", wt.path);
  await repo.commitAll("work", wt.path);
  await repo.git(["merge", "-q", "--ff-only", "agent/s1"]);
  const { inProcess, byGit } = { ...treeRemovalCounts };
  const result = await reapWorktree(repo.root, "s1", { target: "main" });
  assert.equal(result.removed, true, result.reason ?? "");
  assert.equal(result.merged, true);
  assert.deepEqual(
    { inProcess: treeRemovalCounts.inProcess - inProcess, byGit: treeRemovalCounts.byGit - byGit },
    { inProcess: 1, byGit: 0 },
  );
  assert.equal(await exists(wt.path), false);
  assert.equal(await exists(`${repo.root}/.git/worktrees`), false, "no empty worktrees directory");
  assert.equal(
    (await repo.git(["worktree", "list", "--porcelain"])).match(/^worktree /gm)?.length,
    1,
  );
  assert.equal(await repo.git(["worktree", "prune", "-n", "-v"]), "", "nothing left to prune");
  assert.equal(await repo.git(["branch", "--list", "agent/s1"]), "");
});

Deno.test("reapWorktree() leaves a worktree a teardown changed to `git worktree remove`: its .git file pointed elsewhere, git refuses and says why, nothing is removed", async () => {
  await using repo = await tempRepo();
  const moved = await createWorktree(repo.root, "s2", await repo.git(["rev-parse", "main"]));
  const byGit = treeRemovalCounts.byGit;
  const refused = await reapWorktree(repo.root, "s2", {
    target: "main",
    beforeRemove: () => Deno.writeTextFile(`${moved.path}/.git`, "gitdir: /elsewhere\n"),
  });
  assert.equal(refused.removed, false);
  assert.match(refused.reason ?? "", /validation failed|does not point back|not a .git file/);
  assert.equal(await exists(`${moved.path}/README.md`), true, "nothing of it removed");
  assert.equal(treeRemovalCounts.byGit, byGit + 1);
});
