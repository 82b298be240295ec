import assert from "node:assert/strict";
import { join } from "node:path";
import { tempRepo, type TestRepo } from "../git/_test_repo.ts";
import { createWorktree } from "../worktrees/worktrees.ts";
import { mergeAgentBranches, type TrainMember } from "./merge.ts";

/** An agent session that wrote `files` on agent/<session>, cut from main's tip. */
async function agentWork(repo: TestRepo, session: string, files: Record<string, string>) {
  const wt = await createWorktree(repo.root, session, await repo.git(["rev-parse", "main"]));
  for (const [path, content] of Object.entries(files)) await repo.write(path, content, wt.path);
  await repo.commitAll(`work of ${session}`, wt.path);
}

const member = (session: string, over: Partial<TrainMember> = {}): TrainMember => ({
  agent: `agent/${session}`,
  taskId: `t-${session}`,
  ...over,
});

/** main's first-parent history, newest first. */
const firstParents = async (repo: TestRepo) =>
  (await repo.git(["rev-list", "--first-parent", "main"])).split("\n");

Deno.test("a train lands each branch as its own merge commit, one on the other, moving the target once", async () => {
  await using repo = await tempRepo({ "README.md": "readme\n" });
  const old = await repo.git(["rev-parse", "main"]);
  for (const s of ["s1", "s2", "s3"]) await agentWork(repo, s, { [`${s}.txt`]: `${s}\n` });
  const reflog = async () => (await repo.git(["reflog", "show", "main"])).split("\n").length;
  const moves = await reflog();
  const out = await mergeAgentBranches(repo.root, {
    target: "main",
    members: ["s1", "s2", "s3"].map((s) => member(s)),
  });
  assert.deepEqual(out.map((o) => o.status), ["merged", "merged", "merged"]);
  const commits = out.map((o) => o.status === "merged" ? o.commit : "");
  assert.deepEqual(await firstParents(repo), [...commits].reverse().concat(old));
  for (const [i, s] of ["s1", "s2", "s3"].entries()) {
    assert.equal(
      await repo.git(["rev-parse", `${commits[i]}^2`]),
      await repo.git(["rev-parse", `agent/${s}`]),
    );
    const o = out[i];
    assert.ok(o.status === "merged");
    assert.deepEqual(o.changed_files, [`${s}.txt`], "each merge names only its own paths");
    assert.equal(o.tree, await repo.git(["rev-parse", `${commits[i]}^{tree}`]));
    assert.equal(await repo.read(`${s}.txt`), `${s}\n`, "the user's checkout has it");
  }
  assert.equal(await reflog(), moves + 1, "the target moved once");
  assert.equal(await repo.git(["status", "--porcelain"]), "");
});

Deno.test("a failed gate stops the train there: the work before it lands, the work after it is merged again without it", async () => {
  await using repo = await tempRepo({ "README.md": "readme\n" });
  await agentWork(repo, "s1", { "one.txt": "1\n" });
  await agentWork(repo, "s2", { "bad.txt": "bad\n" });
  await agentWork(repo, "s3", { "three.txt": "3\n" });
  const gates = {
    quality_gates: [{ name: "no bad", command: "test ! -e bad.txt", timeout_s: 30 }],
  };
  const out = await mergeAgentBranches(repo.root, {
    target: "main",
    members: ["s1", "s2", "s3"].map((s) => member(s, { gates })),
  });
  assert.deepEqual(out.map((o) => o.status), ["merged", "gates_failed", "merged"]);
  const [first, , third] = out.map((o) => o.status === "merged" ? o.commit : "");
  assert.equal(await repo.git(["rev-parse", `${third}^1`]), first);
  assert.equal(await repo.git(["rev-parse", "main"]), third);
  await assert.rejects(repo.read("bad.txt"), "the failed work is not on main");
  const third2 = out[2];
  assert.ok(third2.status === "merged" && third2.gates.passed);
  assert.equal(third2.gates.commit, third, "its gates ran on the tree that landed");
});

Deno.test("a branch that conflicts is left out of the train; the others land", async () => {
  await using repo = await tempRepo({ "shared.txt": "base\n" });
  await agentWork(repo, "s1", { "shared.txt": "one\n" });
  await agentWork(repo, "s2", { "shared.txt": "two\n" });
  await agentWork(repo, "s3", { "three.txt": "3\n" });
  const out = await mergeAgentBranches(repo.root, {
    target: "main",
    members: ["s1", "s2", "s3"].map((s) => member(s)),
  });
  assert.deepEqual(out.map((o) => o.status), ["merged", "conflict", "merged"]);
  assert.ok(out[1].status === "conflict");
  assert.deepEqual(out[1].files, ["shared.txt"]);
  assert.equal(await repo.read("shared.txt"), "one\n");
  assert.equal(await repo.read("three.txt"), "3\n");
});

Deno.test("when the user's uncommitted change is in the way of one branch, the others land and that one waits", async () => {
  await using repo = await tempRepo({ "b.txt": "b\n" });
  await agentWork(repo, "s1", { "a.txt": "a\n" });
  await agentWork(repo, "s2", { "b.txt": "agent\n" });
  await agentWork(repo, "s3", { "c.txt": "c\n" });
  await repo.write("b.txt", "user's unsaved work\n");
  const out = await mergeAgentBranches(repo.root, {
    target: "main",
    members: ["s1", "s2", "s3"].map((s) => member(s)),
  });
  assert.deepEqual(out.map((o) => o.status), ["merged", "waiting", "merged"]);
  assert.ok(out[1].status === "waiting");
  assert.equal(
    out[1].reason,
    "uncommitted changes in b.txt would be overwritten: commit or stash them",
  );
  assert.equal(await repo.read("b.txt"), "user's unsaved work\n");
  assert.equal(await repo.read("a.txt"), "a\n");
  assert.equal(await repo.read("c.txt"), "c\n");
});

Deno.test("the gates of a train's candidates run side by side, each in its own scratch worktree", async () => {
  await using repo = await tempRepo({ "README.md": "readme\n" });
  const marks = await Deno.makeTempDir({ prefix: "svc-gates-" });
  await agentWork(repo, "s1", { "one.txt": "1\n" });
  await agentWork(repo, "s2", { "two.txt": "2\n" });
  // Passes only while another gate runs beside it (one after another, the first would fail);
  // each writes into its own tree.
  const command = `touch "${marks}/$$" && echo mine > scratch.txt && n=0 && ` +
    `while [ "$(ls "${marks}" | wc -l)" -lt 2 ]; do n=$((n+1)); [ $n -gt 200 ] && exit 1; ` +
    `sleep 0.05; done && test "$(cat scratch.txt)" = mine`;
  const gates = { quality_gates: [{ name: "beside", command, timeout_s: 30 }] };
  try {
    const out = await mergeAgentBranches(repo.root, {
      target: "main",
      members: ["s1", "s2"].map((s) => member(s, { gates })),
      gateConcurrency: 2,
    });
    assert.deepEqual(out.map((o) => o.status), ["merged", "merged"]);
    assert.equal([...Deno.readDirSync(marks)].length, 2);
    await assert.rejects(Deno.stat(join(repo.root, "scratch.txt")), "nothing ran in the checkout");
  } finally {
    await Deno.remove(marks, { recursive: true });
  }
});
