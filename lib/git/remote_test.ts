import assert from "node:assert/strict";
import { git } from "./git.ts";
import { deleteRef, fetchBranch, fetchRef, pushRef, RemoteError, remoteTip } from "./remote.ts";
import { repoWithRemote } from "./_test_remote.ts";

Deno.test("pushRef() is leased: a ref someone else moved is not overwritten, a right lease moves it", async () => {
  await using r = await repoWithRemote();
  const o = { root: r.work, remote: "origin" };
  const ref = "refs/heads/agent/s-1";
  assert.deepEqual(await pushRef(o, { ref, sha: r.tip, lease: null }), { pushed: true });
  assert.equal(await remoteTip(o, "agent/s-1"), r.tip);
  const next = await r.commit("b.txt");
  // Pushed again as if new: the lease (no ref expected) fails and nothing is overwritten.
  const stale = await pushRef(o, { ref, sha: next, lease: null });
  assert.equal(stale.pushed, false);
  assert.equal(await remoteTip(o, "agent/s-1"), r.tip);
  // A lease on a tip the remote does not have fails too.
  assert.equal((await pushRef(o, { ref, sha: next, lease: next })).pushed, false);
  assert.deepEqual(await pushRef(o, { ref, sha: next, lease: r.tip }), { pushed: true });
  assert.equal(await remoteTip(o, "agent/s-1"), next);
});

Deno.test("pushRef() with lease any moves a ref whatever it is; fetchRef() brings it into the same ref", async () => {
  await using r = await repoWithRemote();
  const o = { root: r.work, remote: "origin" };
  const ref = "refs/service/base/run-1";
  const next = await r.commit("b.txt");
  assert.deepEqual(await pushRef(o, { ref, sha: next, lease: "any" }), { pushed: true });
  assert.deepEqual(await pushRef(o, { ref, sha: r.tip, lease: "any" }), { pushed: true });
  await git(["update-ref", ref, next], { cwd: r.work });
  await fetchRef(o, ref);
  assert.equal((await git(["rev-parse", ref], { cwd: r.work })).stdout.trim(), r.tip);
});

Deno.test("deleteRef() deletes only a ref still at its lease; fetchBranch() keeps a remote-tracking ref", async () => {
  await using r = await repoWithRemote();
  const o = { root: r.work, remote: "origin" };
  const ref = "refs/heads/agent/s-2";
  await pushRef(o, { ref, sha: r.tip, lease: null });
  const next = await r.commit("b.txt");
  await assert.rejects(() => deleteRef(o, ref, next), RemoteError);
  assert.equal(await remoteTip(o, "agent/s-2"), r.tip, "a wrong lease deletes nothing");
  await deleteRef(o, ref, r.tip);
  assert.equal(await remoteTip(o, "agent/s-2"), undefined);
  assert.equal(await fetchBranch(o, "main"), r.tip);
  const tracked = await git(["rev-parse", "refs/remotes/origin/main"], { cwd: r.work });
  assert.equal(tracked.stdout.trim(), r.tip);
});

Deno.test("a remote that cannot be reached is a retryable RemoteError naming what to check", async () => {
  await using r = await repoWithRemote();
  await git(["remote", "set-url", "origin", "http://127.0.0.1:9/nothing.git"], { cwd: r.work });
  const e = await fetchBranch({ root: r.work, remote: "origin" }, "main").then(
    () => assert.fail("fetched"),
    (e) => e,
  );
  assert.ok(e instanceof RemoteError);
  assert.equal(e.retryable, true, e.message);
  assert.match(e.fix, /check that origin is reachable/);
});
