import assert from "node:assert/strict";
import { git } from "../git/git.ts";
import { fetchBranch, pushBranch, RemoteError, remoteTip } from "./push.ts";

async function repos() {
  const bare = await Deno.makeTempDir();
  const work = await Deno.makeTempDir();
  await git(["init", "-q", "--bare", "-b", "main"], { cwd: bare });
  await git(["init", "-q", "-b", "main"], { cwd: work });
  for (const [k, v] of [["user.email", "t@l"], ["user.name", "t"]]) {
    await git(["config", k, v], { cwd: work });
  }
  await Deno.writeTextFile(`${work}/a.txt`, "a\n");
  await git(["add", "-A"], { cwd: work });
  await git(["commit", "-q", "-m", "a"], { cwd: work });
  await git(["remote", "add", "origin", bare], { cwd: work });
  await git(["push", "-q", "origin", "main"], { cwd: work });
  const tip = (await git(["rev-parse", "HEAD"], { cwd: work })).stdout.trim();
  return {
    bare,
    work,
    tip,
    async [Symbol.asyncDispose]() {
      await Deno.remove(bare, { recursive: true });
      await Deno.remove(work, { recursive: true });
    },
  };
}

Deno.test("pushBranch() refuses any branch but agent/<session> before git runs: never the base", async () => {
  await using r = await repos();
  const o = { root: r.work, remote: "origin" };
  for (const branch of ["main", "refs/heads/main", "agent/../main", "release/1"]) {
    await assert.rejects(() => pushBranch(o, branch, r.tip, undefined), RemoteError, branch);
  }
  assert.equal(await remoteTip(o, "main"), r.tip, "main did not move");
});

Deno.test("pushBranch() is leased: a branch someone else moved is not overwritten", async () => {
  await using r = await repos();
  const o = { root: r.work, remote: "origin" };
  assert.deepEqual(await pushBranch(o, "agent/s-1", r.tip, undefined), { pushed: true });
  assert.equal(await remoteTip(o, "agent/s-1"), r.tip);
  // Pushed again as if new: the lease (no branch expected) fails, nothing is overwritten.
  await Deno.writeTextFile(`${r.work}/b.txt`, "b\n");
  await git(["add", "-A"], { cwd: r.work });
  await git(["commit", "-q", "-m", "b"], { cwd: r.work });
  const next = (await git(["rev-parse", "HEAD"], { cwd: r.work })).stdout.trim();
  const stale = await pushBranch(o, "agent/s-1", next, undefined);
  assert.equal(stale.pushed, false);
  assert.equal(await remoteTip(o, "agent/s-1"), r.tip);
  assert.deepEqual(await pushBranch(o, "agent/s-1", next, r.tip), { pushed: true });
  assert.equal(await fetchBranch(o, "main"), r.tip);
});
