import assert from "node:assert/strict";
import { git } from "../git/git.ts";
import { fetchBranch, RemoteError, remoteTip } from "../git/remote.ts";
import { repoWithRemote } from "../git/_test_remote.ts";
import {
  baseRef,
  fetchBase,
  fetchSessionBranch,
  publishBase,
  pushSessionBranch,
} from "./remote_refs.ts";

Deno.test("remote work names no ref but refs/service/base/<run> and agent/<session>", async () => {
  await using r = await repoWithRemote();
  const o = { root: r.work, remote: "origin" };
  for (const id of ["../main", "a/b", "", ".hidden", "x..y", "a b", "-f", "a".repeat(129)]) {
    assert.throws(() => baseRef(id), RangeError, id);
    await assert.rejects(
      () => pushSessionBranch(o, { sessionId: id, sha: r.tip }),
      RemoteError,
      id,
    );
  }
  for (
    const ref of ["refs/heads/main", "refs/service/base/../../heads/main", "refs/service/base/"]
  ) {
    await assert.rejects(() => fetchBase(o, ref), RemoteError, ref);
  }
  assert.equal(await remoteTip(o, "main"), r.tip, "main did not move");
});

Deno.test("publishBase() moves the run's base on the remote; a worker fetches it and pushes its session branch", async () => {
  await using r = await repoWithRemote();
  const o = { root: r.work, remote: "origin" };
  const next = await r.commit("b.txt");
  await publishBase(o, "run-1", next);
  await publishBase(o, "run-1", r.tip);
  await fetchBase(o, baseRef("run-1"));
  const base = await git(["rev-parse", "refs/service/base/run-1"], { cwd: r.work });
  assert.equal(base.stdout.trim(), r.tip);
  assert.deepEqual(await pushSessionBranch(o, { sessionId: "s-9", sha: next }), { pushed: true });
  assert.equal(await remoteTip(o, "agent/s-9"), next);
});

Deno.test("fetchSessionBranch() refuses a session branch whose tree names .git; a base fetch is not checked that way", async () => {
  await using r = await repoWithRemote();
  const o = { root: r.work, remote: "origin" };
  const blob = (await git(["hash-object", "-w", "--stdin"], { cwd: r.bare, stdin: "x\n" }))
    .stdout.trim();
  const tree = (await git(["mktree"], { cwd: r.bare, stdin: `100644 blob ${blob}\t.git\n` }))
    .stdout.trim();
  const commit = (await git(["commit-tree", tree, "-m", "hostile"], {
    cwd: r.bare,
    env: {
      GIT_AUTHOR_NAME: "a",
      GIT_AUTHOR_EMAIL: "a@b",
      GIT_COMMITTER_NAME: "a",
      GIT_COMMITTER_EMAIL: "a@b",
    },
  })).stdout.trim();
  for (const ref of ["refs/heads/agent/s-7", "refs/heads/hostile"]) {
    await git(["update-ref", ref, commit], { cwd: r.bare });
  }
  await assert.rejects(() => fetchSessionBranch(o, "s-7"), RemoteError);
  assert.equal(
    await fetchBranch(o, "hostile"),
    commit,
    "without checkObjects the same tree is fetched",
  );
});

Deno.test("fetchBase() called by several agents of one worker at once, after the base moved, fetches it for each", async () => {
  await using r = await repoWithRemote();
  const o = { root: r.work, remote: "origin" };
  // The worker fetched the run's first base for an earlier agent; the base has moved since.
  await publishBase(o, "run-1", r.tip);
  await fetchBase(o, baseRef("run-1"));
  for (let round = 0; round < 4; round++) {
    const next = await r.commit(`moved-${round}.txt`);
    await publishBase(o, "run-1", next);
    // Its slots start agents together, each fetching the base first (lib/remote_worker/order.ts).
    const fetched = await Promise.allSettled(
      Array.from({ length: 6 }, () => fetchBase(o, baseRef("run-1"))),
    );
    const failed = fetched.filter((f) => f.status === "rejected") as PromiseRejectedResult[];
    assert.deepEqual(failed.map((f) => (f.reason as Error).message), [], `round ${round}`);
    const base = await git(["rev-parse", "refs/service/base/run-1"], { cwd: r.work });
    assert.equal(base.stdout.trim(), next);
  }
});
