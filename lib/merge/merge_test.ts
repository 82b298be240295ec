import assert from "node:assert/strict";
import { join } from "node:path";
import { tempRepo, type TestRepo } from "../git/_test_repo.ts";
import { createWorktree } from "../worktrees/worktrees.ts";
import { evaluateGates } from "./gates.ts";
import { mergeAgentBranch, mergeAgentBranches, prepareCandidate } from "./merge.ts";

/** An agent session that wrote `files` and committed them on agent/<session>. */
async function agentWork(repo: TestRepo, session: string, files: Record<string, string>) {
  const wt = await createWorktree(repo.root, session, await repo.git(["rev-parse", "main"]));
  for (const [path, content] of Object.entries(files)) await repo.write(path, content, wt.path);
  await repo.commitAll(`work of ${session}`, wt.path);
  return wt;
}

const worktreeCount = async (repo: TestRepo) =>
  (await repo.git(["worktree", "list", "--porcelain"])).split("\n").filter((l) =>
    l.startsWith("worktree ")
  ).length;

Deno.test("mergeAgentBranch() lands the work and a dependent worktree cut afterwards sees it", async () => {
  await using repo = await tempRepo({ "README.md": "readme\n" });
  const old = await repo.git(["rev-parse", "main"]);
  await agentWork(repo, "s1", { "lib/a.ts": "export const a = 1;\n" });
  const out = await mergeAgentBranch(repo.root, {
    target: "main",
    agent: "agent/s1",
    taskId: "t1",
  });
  assert.equal(out.status, "merged");
  if (out.status !== "merged") return;
  assert.deepEqual(out.changed_files, ["lib/a.ts"]);
  assert.equal(await repo.git(["rev-parse", "main"]), out.commit);
  assert.equal(await repo.git(["rev-parse", `${out.commit}^1`]), old);
  assert.equal(
    await repo.git(["rev-parse", `${out.commit}^2`]),
    await repo.git(["rev-parse", "agent/s1"]),
  );
  assert.equal(await repo.read("lib/a.ts"), "export const a = 1;\n", "user's checkout updated");
  assert.equal(await repo.git(["status", "--porcelain"]), "");
  const dependent = await createWorktree(repo.root, "s2", out.commit);
  assert.equal(await repo.read("lib/a.ts", dependent.path), "export const a = 1;\n");
});

Deno.test("mergeAgentBranch() reports a conflict, names the files and changes nothing", async () => {
  await using repo = await tempRepo({ "shared.txt": "base\n", "other.txt": "o\n" });
  await agentWork(repo, "s1", { "shared.txt": "from s1\n" });
  await agentWork(repo, "s2", { "shared.txt": "from s2\n", "other.txt": "o2\n" });
  const first = await mergeAgentBranch(repo.root, {
    target: "main",
    agent: "agent/s1",
    taskId: "t1",
  });
  assert.equal(first.status, "merged");
  const tip = await repo.git(["rev-parse", "main"]);
  const refsBefore = await repo.git(["for-each-ref"]);
  const worktrees = await worktreeCount(repo);
  const second = await mergeAgentBranch(repo.root, {
    target: "main",
    agent: "agent/s2",
    taskId: "t2",
  });
  assert.deepEqual(second, { status: "conflict", files: ["shared.txt"] });
  assert.equal(await repo.git(["rev-parse", "main"]), tip);
  assert.equal(await repo.git(["for-each-ref"]), refsBefore);
  assert.equal(await worktreeCount(repo), worktrees);
  assert.equal(await repo.git(["status", "--porcelain"]), "");
  assert.equal(await repo.read("shared.txt"), "from s1\n");
});

Deno.test("the user's dirty checkout survives a merge byte-for-byte and nothing of theirs is staged or committed", async () => {
  await using repo = await tempRepo({
    "mine.txt": "m\n",
    "staged.txt": "s\n",
    "theirs.txt": "t\n",
  });
  await agentWork(repo, "s1", { "theirs.txt": "agent edit\n", "added/by-agent.txt": "new\n" });
  // The user's uncommitted state: an unstaged edit, a staged edit, an untracked file (CRLF, no EOL).
  await repo.write("mine.txt", "m\r\nunsaved edit");
  await repo.write("staged.txt", "staged edit\n");
  await repo.git(["add", "staged.txt"]);
  await repo.write("staged.txt", "staged edit\nplus unstaged\n");
  await repo.write("notes/untracked.md", "scratch\n");
  const stagedDiff = await repo.git(["diff", "--cached"]);
  const before = await Promise.all(
    ["mine.txt", "staged.txt", "notes/untracked.md"].map((p) => Deno.readFile(join(repo.root, p))),
  );
  const out = await mergeAgentBranch(repo.root, {
    target: "main",
    agent: "agent/s1",
    taskId: "t1",
  });
  assert.equal(out.status, "merged", JSON.stringify(out));
  if (out.status !== "merged") return;
  const after = await Promise.all(
    ["mine.txt", "staged.txt", "notes/untracked.md"].map((p) => Deno.readFile(join(repo.root, p))),
  );
  assert.deepEqual(after, before);
  assert.equal(
    await repo.git(["diff", "--cached"]),
    stagedDiff,
    "their staged change stays staged, unchanged",
  );
  assert.equal(await repo.git(["diff", "--cached", "--name-only"]), "staged.txt");
  assert.equal(
    await repo.git(["show", `${out.commit}:staged.txt`]),
    "s",
    "merge commit holds none of it",
  );
  assert.equal(await repo.git(["show", `${out.commit}:mine.txt`]), "m");
  assert.equal(await repo.read("theirs.txt"), "agent edit\n");
  assert.equal(await repo.read("added/by-agent.txt"), "new\n");
  const status = (await repo.git(["status", "--porcelain"])).split("\n").sort();
  assert.deepEqual(status, [" M mine.txt", "?? notes/", "MM staged.txt"]);
});

Deno.test("mergeAgentBranch() waits when the user's uncommitted changes overlap the merge", async () => {
  await using repo = await tempRepo({ "a.txt": "a\n", ".gitignore": "*.log\n" });
  await agentWork(repo, "s1", { "a.txt": "agent\n" });
  await repo.write("a.txt", "user's unsaved work\n");
  const tip = await repo.git(["rev-parse", "main"]);
  const out = await mergeAgentBranch(repo.root, {
    target: "main",
    agent: "agent/s1",
    taskId: "t1",
  });
  assert.equal(out.status, "waiting");
  if (out.status !== "waiting") return;
  assert.equal(
    out.reason,
    "uncommitted changes in a.txt would be overwritten: commit or stash them",
  );
  assert.deepEqual(out.files, ["a.txt"]);
  assert.equal(out.stuck, true, "only the user can end this wait");
  assert.equal(await repo.git(["rev-parse", "main"]), tip);
  assert.equal(await repo.read("a.txt"), "user's unsaved work\n");
  assert.equal(await repo.git(["diff", "--cached", "--name-only"]), "");
  // Once the user commits their work elsewhere, a retry reports a real conflict or lands.
  await repo.git(["checkout", "-q", "--", "a.txt"]);
  const retry = await mergeAgentBranch(repo.root, {
    target: "main",
    agent: "agent/s1",
    taskId: "t1",
  });
  assert.equal(retry.status, "merged");
});

Deno.test("mergeAgentBranch() waits instead of clobbering untracked or ignored files at merged paths", async () => {
  await using repo = await tempRepo({ ".gitignore": "*.log\nbuild/\n" });
  const wt = await createWorktree(repo.root, "s1", await repo.git(["rev-parse", "main"]));
  await repo.write("report.log", "agent log\n", wt.path);
  await repo.write("new.txt", "agent\n", wt.path);
  await repo.write("dir/file.txt", "agent\n", wt.path);
  await repo.git(["add", "-f", "report.log", "new.txt", "dir/file.txt"], wt.path);
  await repo.git(["commit", "-qm", "w"], wt.path);
  await repo.write("report.log", "user's ignored log\n");
  await repo.write("new.txt", "user's untracked\n");
  await repo.write("dir", "a file where the merge needs a directory\n");
  const out = await mergeAgentBranch(repo.root, {
    target: "main",
    agent: "agent/s1",
    taskId: "t1",
  });
  assert.equal(out.status, "waiting");
  if (out.status !== "waiting") return;
  assert.deepEqual(out.files, ["dir", "new.txt", "report.log"]);
  assert.equal(await repo.read("report.log"), "user's ignored log\n");
  assert.equal(await repo.read("new.txt"), "user's untracked\n");
});

Deno.test("mergeAgentBranch() evaluates gates on the merged tree and lands only when they pass", async () => {
  await using repo = await tempRepo({ "README.md": "readme\n" });
  await agentWork(repo, "s1", { "src/feature.ts": "export {};\n" });
  // Target moves on after the agent's base: the gate must see both sides.
  await repo.write("CHANGELOG.md", "target side\n");
  const targetTip = await repo.commitAll("target moves on");
  const worktrees = await worktreeCount(repo);
  const failing = await mergeAgentBranch(repo.root, {
    target: "main",
    agent: "agent/s1",
    taskId: "t1",
    gates: {
      signals: [
        { kind: "path_exists", detail: "src/feature.ts" },
        { kind: "path_exists", detail: "src/missing.ts" },
      ],
      quality_gates: [{
        name: "files",
        command: "test -f CHANGELOG.md && test -f src/feature.ts",
        timeout_s: 60,
      }],
    },
    gateOptions: { env: {} },
  });
  assert.equal(failing.status, "gates_failed");
  if (failing.status !== "gates_failed") return;
  assert.deepEqual(failing.gates.signals.map((s) => [s.kind, s.detail, s.passed]), [
    ["path_exists", "src/feature.ts", true],
    ["path_exists", "src/missing.ts", false],
    ["quality_gate", "test -f CHANGELOG.md && test -f src/feature.ts", true],
  ]);
  assert.equal(await repo.git(["rev-parse", "main"]), targetTip, "nothing landed");
  assert.equal(await worktreeCount(repo), worktrees, "gate worktree removed");
  const passing = await mergeAgentBranch(repo.root, {
    target: "main",
    agent: "agent/s1",
    taskId: "t1",
    gates: {
      signals: [{ kind: "glob_exists", detail: "src/*.ts" }],
      quality_gates: [{
        name: "files",
        command: "test -f CHANGELOG.md && test -f src/feature.ts",
        timeout_s: 60,
      }],
    },
  });
  assert.equal(passing.status, "merged");
  if (passing.status !== "merged") return;
  assert.equal(passing.gates.commit, passing.commit, "gates ran on the commit that landed");
  assert.equal(await worktreeCount(repo), worktrees);
});

Deno.test("mergeAgentBranch() moves a target branch nobody has checked out with a compare-and-swap", async () => {
  await using repo = await tempRepo();
  await agentWork(repo, "s1", { "x.txt": "x\n" });
  await repo.git(["checkout", "-q", "-b", "user-branch"]);
  await repo.write("README.md", "dirty on another branch\n");
  const out = await mergeAgentBranch(repo.root, {
    target: "main",
    agent: "agent/s1",
    taskId: "t1",
  });
  assert.equal(out.status, "merged");
  if (out.status !== "merged") return;
  assert.equal(await repo.git(["rev-parse", "main"]), out.commit);
  assert.equal(await repo.read("README.md"), "dirty on another branch\n");
  assert.equal(await repo.git(["status", "--porcelain"]), " M README.md");
});

Deno.test("mergeAgentBranch() with nothing to land evaluates the gates and says unchanged, naming no commit", async () => {
  await using repo = await tempRepo();
  const tip = await repo.git(["rev-parse", "main"]);
  await createWorktree(repo.root, "s1", tip);
  const out = await mergeAgentBranch(repo.root, {
    target: "main",
    agent: "agent/s1",
    base: tip,
    taskId: "t1",
    gates: { signals: [{ kind: "path_exists", detail: "README.md" }] },
  });
  assert.equal(out.status, "unchanged");
  if (out.status !== "unchanged") return;
  assert.equal("commit" in out, false, "no merge commit is named as the task's");
  assert.equal(out.gates.signals.length, 1);
  assert.equal(await repo.git(["rev-parse", "main"]), tip, "main did not move");
});

Deno.test("a train lands the work beside a branch whose diff is empty and says unchanged for that one", async () => {
  await using repo = await tempRepo();
  const base = await repo.git(["rev-parse", "main"]);
  await agentWork(repo, "s1", { "one.txt": "1\n" });
  await createWorktree(repo.root, "s2", base); // its agent changed nothing
  const outs = await mergeAgentBranches(repo.root, {
    target: "main",
    members: [
      { agent: "agent/s1", base, taskId: "t1" },
      { agent: "agent/s2", base, taskId: "t2" },
    ],
  });
  assert.deepEqual(outs.map((o) => o.status), ["merged", "unchanged"]);
  if (outs[0].status !== "merged") return;
  assert.equal(await repo.git(["rev-parse", "main"]), outs[0].commit);
  assert.equal(
    await repo.git(["log", "-1", "--format=%s", "main"]),
    "service: merge agent/s1 (task t1)",
  );
});

Deno.test("a train tells each member's empty diff apart, even beside a base that no longer resolves", async () => {
  await using repo = await tempRepo();
  const base = await repo.git(["rev-parse", "main"]);
  await createWorktree(repo.root, "s1", base); // changed nothing
  await agentWork(repo, "s2", { "two.txt": "2\n" });
  await createWorktree(repo.root, "s3", base); // changed nothing
  const outs = await mergeAgentBranches(repo.root, {
    target: "main",
    members: [
      { agent: "agent/s1", base, taskId: "t1" },
      // A base the repository does not have: its work is merged, not taken as unchanged.
      { agent: "agent/s2", base: "0".repeat(40), taskId: "t2" },
      { agent: "agent/s3", base, taskId: "t3" },
    ],
  });
  assert.deepEqual(outs.map((o) => o.status), ["unchanged", "merged", "unchanged"]);
  assert.equal(await repo.read("two.txt"), "2\n");
});

Deno.test("concurrent mergeAgentBranch() calls are serialised and both land", async () => {
  await using repo = await tempRepo();
  await agentWork(repo, "s1", { "one.txt": "1\n" });
  await agentWork(repo, "s2", { "two.txt": "2\n" });
  const outs = await Promise.all([
    mergeAgentBranch(repo.root, { target: "main", agent: "agent/s1", taskId: "t1" }),
    mergeAgentBranch(repo.root, { target: "main", agent: "agent/s2", taskId: "t2" }),
  ]);
  assert.deepEqual(outs.map((o) => o.status), ["merged", "merged"]);
  assert.equal(await repo.read("one.txt"), "1\n");
  assert.equal(await repo.read("two.txt"), "2\n");
  assert.equal(await repo.git(["status", "--porcelain"]), "");
});

Deno.test("evidence producers run in the gate worktree on the merged tree after the gates, even when a gate fails; a merge of the same tree reuses the gates", async () => {
  await using repo = await tempRepo();
  await agentWork(repo, "s1", { "src/feature.ts": "export const f = 1;\n" });
  const counter = join(repo.root, "..", `${crypto.randomUUID()}.count`);
  const candidate = await prepareCandidate(repo.root, {
    target: "main",
    agent: "agent/s1",
    taskId: "t1",
  });
  assert.equal(candidate.kind, "clean");
  if (candidate.kind !== "clean") return;
  const gates = await evaluateGates(repo.root, candidate.commit, {
    quality_gates: [
      { name: "count", command: `echo run >> ${counter}`, timeout_s: 30 },
      { name: "fails", command: "exit 4", timeout_s: 30 },
    ],
    evidence: [
      { name: "listing", command: "ls src; echo oops >&2", timeout_s: 30 },
      { name: "slow", command: "sleep 5", timeout_s: 1 },
    ],
  });
  assert.equal(gates.passed, false);
  assert.deepEqual(gates.producers.map((p) => [p.name, p.exit_code, p.timed_out]), [
    ["listing", 0, false],
    ["slow", 124, true],
  ]);
  assert.equal(new TextDecoder().decode(gates.producers[0].output), "feature.ts\noops\n");
  assert.equal(await Deno.readTextFile(counter), "run\n");

  // The merge reuses a result for the same tree (the gate does not run again) …
  const reused = await mergeAgentBranch(repo.root, {
    target: "main",
    agent: "agent/s1",
    taskId: "t1",
    gates: { quality_gates: [{ name: "count", command: `echo run >> ${counter}`, timeout_s: 30 }] },
    evaluated: { tree: candidate.merge.tree, gates: { ...gates, passed: true } },
  });
  assert.equal(reused.status, "merged");
  assert.equal(await Deno.readTextFile(counter), "run\n", "not evaluated again");
  // … and evaluates again when the tree differs.
  await agentWork(repo, "s2", { "src/other.ts": "export const o = 1;\n" });
  const fresh = await mergeAgentBranch(repo.root, {
    target: "main",
    agent: "agent/s2",
    taskId: "t2",
    gates: { quality_gates: [{ name: "count", command: `echo run >> ${counter}`, timeout_s: 30 }] },
    evaluated: { tree: candidate.merge.tree, gates },
  });
  assert.equal(fresh.status, "merged");
  assert.equal(await Deno.readTextFile(counter), "run\nrun\n");
  await Deno.remove(counter);
});

Deno.test("a file the user rewrote with the same bytes does not hold a merge up: it lands, and a real edit still waits", async () => {
  await using repo = await tempRepo({ "package.json": '{ "version": "1.0.0" }\n', "x.txt": "x\n" });
  await agentWork(repo, "s1", { "package.json": '{ "version": "1.0.1" }\n' });
  await agentWork(repo, "s2", { "x.txt": "agent\n" });
  // An editor's save without a change: the same bytes, a later modification time.
  const later = new Date(Date.now() + 60_000);
  for (const path of ["package.json", "x.txt"]) {
    const file = join(repo.root, path);
    await Deno.writeFile(file, await Deno.readFile(file));
    await Deno.utime(file, later, later);
  }
  const touched = await mergeAgentBranch(repo.root, {
    target: "main",
    agent: "agent/s1",
    taskId: "t1",
  });
  assert.equal(touched.status, "merged", JSON.stringify(touched));
  assert.equal(await repo.read("package.json"), '{ "version": "1.0.1" }\n');
  // A real edit of a merged path still waits, naming it, and nothing of it is lost.
  await repo.write("x.txt", "mine\n");
  const edited = await mergeAgentBranch(repo.root, {
    target: "main",
    agent: "agent/s2",
    taskId: "t2",
  });
  assert.equal(edited.status, "waiting", JSON.stringify(edited));
  assert.equal(await repo.read("x.txt"), "mine\n");
});
