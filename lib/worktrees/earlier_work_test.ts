import assert from "node:assert/strict";
import { tempRepo } from "../git/_test_repo.ts";
import { earlierWork, supersedeEarlierWork } from "./earlier_work.ts";
import { reapWorktree } from "./reap.ts";
import { createWorktree } from "./worktrees.ts";

Deno.test("earlierWork() finds a reaped session's kept work and the commit it was cut from, after the target moved on", async () => {
  await using repo = await tempRepo();
  const base = await repo.git(["rev-parse", "main"]);
  const wt = await createWorktree(repo.root, "s1", base);
  await repo.write("half.txt", "half\n", wt.path);
  const reaped = await reapWorktree(repo.root, "s1", { target: "main" });
  await repo.write("other.txt", "other\n");
  const tip = await repo.commitAll("another task landed");
  const found = await earlierWork(repo.root, "s1", tip);
  assert.deepEqual(found, { commit: reaped.tip, base });
  // A new session cut there holds the work; the old refs go, so nothing reads as unmerged twice.
  const next = await createWorktree(repo.root, "s2", found!.commit);
  assert.equal(await repo.read("half.txt", next.path), "half\n");
  await supersedeEarlierWork(repo.root, "s1", found!.commit);
  assert.equal(await repo.git(["for-each-ref", "refs/service/rescue/", "refs/heads/agent/s1"]), "");
  assert.equal(await earlierWork(repo.root, "s1", tip), undefined);
});

Deno.test("earlierWork() has nothing to continue once the target holds the work", async () => {
  await using repo = await tempRepo();
  const wt = await createWorktree(repo.root, "s1", await repo.git(["rev-parse", "main"]));
  await repo.write("a.txt", "a\n", wt.path);
  await repo.commitAll("work", wt.path);
  await repo.git(["merge", "-q", "--no-edit", "agent/s1"]);
  assert.equal(
    await earlierWork(repo.root, "s1", await repo.git(["rev-parse", "main"])),
    undefined,
  );
  assert.equal(
    await earlierWork(repo.root, "s-none", await repo.git(["rev-parse", "main"])),
    undefined,
  );
});
