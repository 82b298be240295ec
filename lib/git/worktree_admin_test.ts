import assert from "node:assert/strict";
import { join } from "node:path";
import { tempRepo } from "./_test_repo.ts";
import { resolve } from "node:path";
import { serialised } from "../async/serialised.ts";
import { gitWorktree, listWorktrees } from "./worktree_admin.ts";

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

Deno.test("listWorktrees() answers while adds are queued, and lists beside worktrees being made", async () => {
  await using repo = await tempRepo();
  // Hold this process's queue of worktree commands, as a burst of agents' adds does.
  let release!: () => void;
  const held = serialised(
    `git-worktrees:${resolve(repo.root)}`,
    () => new Promise<void>((r) => release = r),
  );
  const queued = gitWorktree(repo.root, [
    "add",
    "-q",
    "--detach",
    "--",
    join(repo.root, ".sdd", "q"),
    "main",
  ]);
  const timeout = new Promise<"queued">((r) => setTimeout(() => r("queued"), 10_000));
  const listed = await Promise.race([listWorktrees(repo.root, ["--porcelain", "-z"]), timeout]);
  assert.notEqual(listed, "queued", "the listing waited for the queued worktree commands");
  if (listed !== "queued") assert.match(listed.stdout, /^worktree /);
  release();
  await held;
  await queued;
  // Adds side by side (git's own, unqueued) while listing: every listing succeeds.
  const adds = Array.from({ length: 8 }, (_, i) =>
    new Deno.Command("git", {
      args: ["worktree", "add", "-q", "--detach", join(repo.root, ".sdd", `p-${i}`), "main"],
      cwd: repo.root,
      stderr: "null",
    }).output());
  const lists = Array.from({ length: 8 }, () => listWorktrees(repo.root, ["--porcelain", "-z"]));
  for (const l of await Promise.all(lists)) assert.equal(l.code, 0);
  await Promise.all(adds);
});
