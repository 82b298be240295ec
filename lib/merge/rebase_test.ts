import assert from "node:assert/strict";
import { tempRepo } from "../git/_test_repo.ts";
import { createWorktree } from "../worktrees/worktrees.ts";
import { mergeAgentBranch } from "./merge.ts";
import { rebaseOnto } from "./rebase.ts";

const LINES = "a\nb\nc\nd\ne\n";

Deno.test("rebaseOnto() lands work whose merge conflicted because the target holds part of it", async () => {
  await using repo = await tempRepo({ "f.txt": LINES });
  const base = await repo.git(["rev-parse", "main"]);
  const wt = await createWorktree(repo.root, "s1", base);
  // The agent fixes line b, then improves it further, in two commits.
  await repo.write("f.txt", LINES.replace("b\n", "B\n"), wt.path);
  await repo.commitAll("fix b", wt.path);
  await repo.write("f.txt", LINES.replace("b\n", "B!\n"), wt.path);
  await repo.commitAll("improve b", wt.path);
  // Meanwhile the same fix of b landed on main.
  await repo.write("f.txt", LINES.replace("b\n", "B\n"));
  const onto = await repo.commitAll("fix b elsewhere");
  const merged = await mergeAgentBranch(repo.root, {
    target: "main",
    agent: "agent/s1",
    taskId: "t",
  });
  assert.equal(merged.status, "conflict", "the three-way merge of the branch conflicts");

  const out = await rebaseOnto({ worktree: wt.path, base, onto, root: repo.root });
  assert.equal(out.kind, "rebased");
  if (out.kind !== "rebased") return;
  assert.equal(out.diffChanged, true, "the duplicate commit was dropped");
  assert.equal(await repo.git(["merge-base", out.tip, "main"]), onto);
  const again = await mergeAgentBranch(repo.root, {
    target: "main",
    agent: "agent/s1",
    taskId: "t",
  });
  assert.equal(again.status, "merged");
  assert.equal(await repo.read("f.txt"), LINES.replace("b\n", "B!\n"));
});

Deno.test("rebaseOnto() reports a real conflict with the files and the other change, changing nothing", async () => {
  await using repo = await tempRepo({ "f.txt": LINES, "g.txt": "g\n" });
  const base = await repo.git(["rev-parse", "main"]);
  const wt = await createWorktree(repo.root, "s1", base);
  await repo.write("f.txt", LINES.replace("c\n", "agent\n"), wt.path);
  const agentTip = await repo.commitAll("agent edits c", wt.path);
  await repo.write("f.txt", LINES.replace("c\n", "other\n"));
  const onto = await repo.commitAll("other task edits c");
  const out = await rebaseOnto({ worktree: wt.path, base, onto, root: repo.root });
  assert.equal(out.kind, "conflict");
  if (out.kind !== "conflict") return;
  assert.deepEqual(out.files, ["f.txt"]);
  assert.match(out.otherChange, /other task edits c/);
  assert.match(out.otherChange, /\+other/);
  assert.equal(await repo.git(["rev-parse", "HEAD"], wt.path), agentTip, "rebase aborted");
  assert.equal(await repo.git(["status", "--porcelain"], wt.path), "");
});

Deno.test("rebaseOnto() of work that does not collide keeps the same change (no new review needed)", async () => {
  await using repo = await tempRepo({ "f.txt": LINES, "g.txt": "g\n" });
  const base = await repo.git(["rev-parse", "main"]);
  const wt = await createWorktree(repo.root, "s1", base);
  await repo.write("g.txt", "g2\n", wt.path);
  await repo.commitAll("agent edits g", wt.path);
  await repo.write("f.txt", LINES.replace("a\n", "A\n"));
  const onto = await repo.commitAll("other edits f");
  const out = await rebaseOnto({ worktree: wt.path, base, onto, root: repo.root });
  assert.deepEqual(out.kind === "rebased" && out.diffChanged, false);
});
