import assert from "node:assert/strict";
import { join } from "node:path";
import { applyPatch, patchIn } from "./patch.ts";
import { createWorktree } from "../worktrees/worktrees.ts";

const DIFF = "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-alpha\n+ALPHA\n";

/** `[name, answer, the patch found or the problem's words]`. */
const CASES: [string, string, { patch: string } | RegExp][] = [
  ["a fenced diff block amid prose", `Sure.\n\n\`\`\`diff\n${DIFF}\`\`\`\nDone.`, { patch: DIFF }],
  ["a fenced patch block without a trailing newline", `\`\`\`patch\n${DIFF.trimEnd()}\`\`\``, {
    patch: DIFF,
  }],
  ["a bare diff", `The change:\n${DIFF}`, { patch: DIFF }],
  ["a new file from /dev/null", "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+new\n", {
    patch: "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+new\n",
  }],
  [
    "the model's refusal",
    "CANNOT_APPLY: the file foo.py is not shown",
    /CANNOT_APPLY: the file foo\.py/,
  ],
  ["prose only", "I would change alpha to ALPHA.", /holds no unified diff/],
  ["a fence with no hunk", "```diff\nnothing here\n```", /holds no unified diff/],
];

for (const [name, answer, expected] of CASES) {
  Deno.test(`patchIn(): ${name}`, () => {
    const found = patchIn(answer);
    if (expected instanceof RegExp) {
      assert.ok("problem" in found, JSON.stringify(found));
      assert.match(found.problem, expected);
    } else assert.deepEqual(found, expected);
  });
}

/** A task's worktree (`.sdd/worktrees/s-1`, as the batch lane applies patches in) of a repository holding a.txt. */
async function worktree(): Promise<{ dir: string; root: string }> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "patch-" }));
  const git = (...args: string[]) => new Deno.Command("git", { args, cwd: root }).output();
  await git("init", "-q", "-b", "main");
  await git("config", "user.email", "t@localhost");
  await git("config", "user.name", "t");
  await Deno.writeTextFile(join(root, "a.txt"), "alpha\n");
  await git("add", "-A");
  await git("commit", "-qm", "init");
  const tree = await createWorktree(root, "s-1", "main");
  return { dir: tree.path, root };
}

Deno.test("applyPatch() commits a patch that applies, with hunk counts a model got wrong", async () => {
  const { dir, root } = await worktree();
  try {
    const off =
      "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,4 @@\n-alpha\n+ALPHA\n";
    const out = await applyPatch(dir, off, "batch patch");
    assert.equal(out.applied, true, JSON.stringify(out));
    assert.equal(await Deno.readTextFile(join(dir, "a.txt")), "ALPHA\n");
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("applyPatch() refuses a patch whose context is not in the file, with git's reason", async () => {
  const { dir, root } = await worktree();
  try {
    const out = await applyPatch(dir, DIFF.replace("-alpha", "-delta"), "batch patch");
    assert.equal(out.applied, false);
    assert.match(
      (out as { reason: string }).reason,
      /^git apply --3way: patch failed: a\.txt:1; a\.txt: patch does not apply$/,
    );
    assert.equal(await Deno.readTextFile(join(dir, "a.txt")), "alpha\n", "nothing changed");
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
