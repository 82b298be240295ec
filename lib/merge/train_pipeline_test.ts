import assert from "node:assert/strict";
import { git } from "../git/git.ts";
import { tempRepo, type TestRepo } from "../git/_test_repo.ts";
import { setCrashHook } from "../util/crash_points.ts";
import { createWorktree } from "../worktrees/worktrees.ts";
import { mergeAgentBranches, type MergeOutcome, type TrainMember } from "./merge.ts";

/** An agent session that wrote `files` on agent/<session>, cut from main's tip. */
async function agentWork(repo: TestRepo, session: string, files: Record<string, string>) {
  const wt = await createWorktree(repo.root, session, await repo.git(["rev-parse", "main"]));
  for (const [path, content] of Object.entries(files)) await repo.write(path, content, wt.path);
  await repo.commitAll(`work of ${session}`, wt.path);
}

const member = (session: string): TrainMember => ({
  agent: `agent/${session}`,
  taskId: `t-${session}`,
});

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => resolve = r);
  return { promise, resolve };
}

/** Resolves with `value` after `ms` (the timer is cleared once `promise` settles). */
function within<T>(promise: Promise<T>, ms: number, value: T): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<T>((r) => timer = setTimeout(() => r(value), ms));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

const commitOf = (o: MergeOutcome | undefined) => o?.status === "merged" ? o.commit : "";

/** Every commit in the object store, referenced or not: `<id> <parents…>` and its subject. */
async function allCommits(
  repo: TestRepo,
): Promise<{ id: string; parents: string[]; subject: string }[]> {
  const objects = (await repo.git([
    "cat-file",
    "--batch-all-objects",
    "--batch-check=%(objectname) %(objecttype)",
  ])).split("\n").filter((l) => l.endsWith(" commit")).map((l) => l.split(" ")[0]);
  const out = await git(["log", "--no-walk=unsorted", "--stdin", "--format=%H %P%x00%s"], {
    cwd: repo.root,
    stdin: objects.join("\n") + "\n",
  });
  return out.stdout.split("\n").filter(Boolean).map((line) => {
    const [ids, subject] = line.split("\0");
    const [id, ...parents] = ids.split(" ");
    return { id, parents, subject };
  });
}

Deno.test("a train asked for while another lands is prepared on top of its candidates meanwhile, lands after it, and its gates ran on the tree that landed", async () => {
  await using repo = await tempRepo({ "README.md": "readme\n" });
  const old = await repo.git(["rev-parse", "main"]);
  for (const s of ["s1", "s2", "s3"]) await agentWork(repo, s, { [`${s}.txt`]: `${s}\n` });
  const gates = { quality_gates: [{ name: "has s3", command: "test -f s3.txt", timeout_s: 30 }] };
  const bPrepared = deferred<boolean>();
  let second: Promise<MergeOutcome[]> | undefined;
  let mainWhileHeld = "";
  let held = false;
  // The first train's advance stops after its intent is durable, before the checkout or the
  // branch changes, until the second train is prepared (or 15 s: then that did not happen).
  setCrashHook(async (point) => {
    if (point !== "merge.intent_recorded" || held) return;
    held = true;
    await within(bPrepared.promise, 15_000, false);
    mainWhileHeld = await repo.git(["rev-parse", "main"]);
  });
  try {
    const first = await mergeAgentBranches(repo.root, {
      target: "main",
      members: [member("s1"), member("s2")],
      onPrepared: () => {
        second = mergeAgentBranches(repo.root, {
          target: "main",
          members: [{ ...member("s3"), gates }],
          onPrepared: () => bPrepared.resolve(true),
        });
      },
    });
    assert.ok(second, "the second train was asked for while the first was landing");
    const [third] = await second;
    assert.equal(await within(bPrepared.promise, 0, false), true, "the second train was prepared");
    assert.equal(mainWhileHeld, old, "it was prepared while main had not moved yet");
    assert.deepEqual(first.map((o) => o.status), ["merged", "merged"]);
    assert.ok(third.status === "merged");
    assert.equal(await repo.git(["rev-parse", `${third.commit}^1`]), commitOf(first[1]));
    assert.deepEqual(
      (await repo.git(["rev-list", "--first-parent", "main"])).split("\n"),
      [third.commit, commitOf(first[1]), commitOf(first[0]), old],
    );
    assert.equal(third.gates.commit, third.commit, "its gates ran on the commit that landed");
    assert.ok(third.gates.passed);
    for (const s of ["s1", "s2", "s3"]) assert.equal(await repo.read(`${s}.txt`), `${s}\n`);
    assert.equal(await repo.git(["status", "--porcelain"]), "");
  } finally {
    setCrashHook(undefined);
  }
});

Deno.test("a train prepared on top of one that did not land as prepared is merged again from the actual tip: the work that waited does not come in through it", async () => {
  await using repo = await tempRepo({ "b.txt": "b\n" });
  await agentWork(repo, "s1", { "a.txt": "a\n" });
  await agentWork(repo, "s2", { "b.txt": "agent\n" });
  await agentWork(repo, "s3", { "c.txt": "c\n" });
  await repo.write("b.txt", "user's unsaved work\n"); // in the way of s2 only
  const asked = deferred();
  let second: Promise<MergeOutcome[]> | undefined;
  const ask = () => {
    second ??= mergeAgentBranches(repo.root, { target: "main", members: [member("s3")] });
    asked.resolve();
  };
  const firstRun = mergeAgentBranches(repo.root, {
    target: "main",
    members: [member("s1"), member("s2")],
    onPrepared: ask,
  });
  await Promise.race([asked.promise, firstRun.then(ask)]);
  const first = await firstRun;
  const [third] = await second!;
  assert.deepEqual(first.map((o) => o.status), ["merged", "waiting"]);
  assert.ok(third.status === "merged");
  assert.equal(
    await repo.git(["rev-parse", `${third.commit}^1`]),
    commitOf(first[0]),
    "merged onto the tip the first train left",
  );
  assert.equal(await repo.git(["rev-parse", "main"]), third.commit);
  assert.equal(await repo.git(["show", "main:b.txt"]), "b", "the work that waits is not on main");
  assert.equal(await repo.read("b.txt"), "user's unsaved work\n");
  assert.equal(await repo.read("c.txt"), "c\n");
  // It had been prepared on top of the first train's candidates (s2's among them): that merge
  // commit was made, and left unreferenced. (s1 and s2 may each have been merged twice — once
  // prepared, once again when s1 landed alone — and the two differ when a second passed between.)
  const commits = await allCommits(repo);
  const s2Candidates = new Set(
    commits.filter((c) => c.subject.includes("task t-s2")).map((c) => c.id),
  );
  assert.ok(s2Candidates.size > 0, "the first train made a candidate for s2");
  const guessed = commits.filter((c) =>
    c.subject.includes("task t-s3") && s2Candidates.has(c.parents[0])
  );
  assert.equal(guessed.length, 1, "the second train was first prepared on top of s2's candidate");
  assert.notEqual(guessed[0].id, third.commit);
});
