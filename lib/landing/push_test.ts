import assert from "node:assert/strict";
import { remoteTip } from "../git/remote.ts";
import { repoWithRemote } from "../git/_test_remote.ts";
import { deleteBranch, isPushableBranch, pushBranch } from "./push.ts";
import { RemoteError } from "../git/remote.ts";

Deno.test("pushBranch() refuses any branch but agent/<session> before git runs: never the base", async () => {
  await using r = await repoWithRemote();
  const o = { root: r.work, remote: "origin" };
  const hostile = [
    "main",
    "refs/heads/main",
    "agent/../main",
    "agent/",
    "agent/a/b",
    "agent/-rf",
    "agent/x y",
    "release/1",
    `agent/${"a".repeat(129)}`,
  ];
  for (const branch of hostile) {
    assert.equal(isPushableBranch(branch), false, branch);
    await assert.rejects(() => pushBranch(o, branch, r.tip, undefined), RemoteError, branch);
    await assert.rejects(() => deleteBranch(o, branch, r.tip), RemoteError, branch);
  }
  assert.equal(await remoteTip(o, "main"), r.tip, "main did not move");
});

Deno.test("pushBranch() pushes an agent branch leased on the tip it last saw", async () => {
  await using r = await repoWithRemote();
  const o = { root: r.work, remote: "origin" };
  assert.deepEqual(await pushBranch(o, "agent/s-1", r.tip, undefined), { pushed: true });
  const next = await r.commit("b.txt");
  assert.equal((await pushBranch(o, "agent/s-1", next, undefined)).pushed, false);
  assert.deepEqual(await pushBranch(o, "agent/s-1", next, r.tip), { pushed: true });
  await deleteBranch(o, "agent/s-1", next);
  assert.equal(await remoteTip(o, "agent/s-1"), undefined);
});
