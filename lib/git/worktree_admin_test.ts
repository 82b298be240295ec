import assert from "node:assert/strict";
import { join } from "node:path";
import { tempRepo } from "./_test_repo.ts";
import { gitWorktree } from "./worktree_admin.ts";

Deno.test("gitWorktree(): adds, lists and removes side by side all succeed (git alone fails on a half-made worktree's commondir)", async () => {
  await using repo = await tempRepo();
  const paths = Array.from({ length: 10 }, (_, i) => join(repo.root, ".sdd", `side-${i}`));
  await Promise.all(
    paths.map((p) => gitWorktree(repo.root, ["add", "-q", "--detach", "--", p, "main"])),
  );
  const listed = await Promise.all(
    paths.map(() => gitWorktree(repo.root, ["list", "--porcelain"])),
  );
  for (const l of listed) assert.equal(l.stdout.match(/^worktree /gm)?.length, 11);
  await Promise.all(paths.map((p) => gitWorktree(repo.root, ["remove", "--force", p])));
  const after = await gitWorktree(repo.root, ["list", "--porcelain"]);
  assert.equal(after.stdout.match(/^worktree /gm)?.length, 1);
});

Deno.test("gitWorktree(): a real failure is a GitError naming the command, or the result with allowFailure", async () => {
  await using repo = await tempRepo();
  await assert.rejects(
    gitWorktree(repo.root, ["remove", join(repo.root, "nowhere")]),
    /git worktree remove .*nowhere/,
  );
  const r = await gitWorktree(repo.root, ["remove", join(repo.root, "nowhere")], {
    allowFailure: true,
  });
  assert.notEqual(r.code, 0);
});
