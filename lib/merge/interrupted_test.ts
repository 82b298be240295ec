import assert from "node:assert/strict";
import { join } from "node:path";
import { tempRepo, type TestRepo } from "../git/_test_repo.ts";
import { type CrashPoint, setCrashHook } from "../util/crash_points.ts";
import { checkoutMergePath, workspacePaths } from "../workspace.ts";
import { createWorktree } from "../worktrees/worktrees.ts";
import { type CheckoutIntent, readIntent } from "./checkout_intent.ts";
import { decideInterrupted, type InterruptedFacts, settleInterruptedMerge } from "./interrupted.ts";
import { mergeAgentBranch, mergeAgentBranches } from "./merge.ts";

/** What a test's crash hook throws: the rest of the merge never runs, as after `kill -9`. */
class Killed extends Error {}

/** Run `fn` with the process "killed" (the merge cut short) right after `point`. */
async function killedAt<T>(point: CrashPoint, fn: () => Promise<T>): Promise<void> {
  setCrashHook((p) => {
    if (p === point) throw new Killed(p);
  });
  try {
    await assert.rejects(fn(), Killed, `the merge passed ${point}`);
  } finally {
    setCrashHook(undefined);
  }
}

/**
 * A repository whose agent branch adds f1.txt and an executable tools/run.sh, changes mod.txt
 * and deletes del.txt; the user has an unrelated change in user.txt and an untracked notes.txt.
 */
async function landingRepo(): Promise<TestRepo> {
  const repo = await tempRepo({
    "mod.txt": "before\n",
    "del.txt": "going\n",
    "user.txt": "committed\n",
  });
  const wt = await createWorktree(repo.root, "s1", await repo.git(["rev-parse", "main"]));
  await repo.write("f1.txt", "task f1\n", wt.path);
  await repo.write("mod.txt", "after\n", wt.path);
  await repo.write("tools/run.sh", "#!/bin/sh\necho run\n", wt.path);
  await Deno.chmod(join(wt.path, "tools/run.sh"), 0o755);
  await Deno.remove(join(wt.path, "del.txt"));
  await repo.commitAll("work of s1", wt.path);
  await repo.write("user.txt", "the user's unsaved line\n");
  await repo.write("notes.txt", "the user's notes\n");
  return repo;
}

const merge = (repo: TestRepo) =>
  mergeAgentBranch(repo.root, { target: "main", agent: "agent/s1", taskId: "f1" });

const status = async (repo: TestRepo) =>
  (await repo.git(["status", "--porcelain", "--untracked-files=all"])).split("\n").sort();

const exists = (path: string) => Deno.lstat(path).then(() => true, () => false);

const USERS_ONLY = [" M user.txt", "?? notes.txt"];

/** The checkout holds the merge exactly once, and the user's own changes as they were. */
async function assertMergedOnce(repo: TestRepo): Promise<void> {
  assert.deepEqual(await status(repo), USERS_ONLY, "only the user's own changes are left");
  assert.equal(await repo.git(["diff", "--cached", "--name-only"]), "", "nothing staged");
  assert.equal(await repo.read("f1.txt"), "task f1\n");
  assert.equal(await repo.read("mod.txt"), "after\n");
  assert.equal(await exists(join(repo.root, "del.txt")), false);
  assert.equal((await Deno.stat(join(repo.root, "tools/run.sh"))).mode! & 0o111, 0o111);
  assert.equal(await repo.read("user.txt"), "the user's unsaved line\n");
  assert.equal(await repo.read("notes.txt"), "the user's notes\n");
  const merges = (await repo.git(["rev-list", "--merges", "main"])).split("\n").filter(Boolean);
  assert.equal(merges.length, 1, "one merge commit");
  assert.equal(await exists(checkoutMergePath(workspacePaths(repo.root))), false, "no record");
}

/** What the checkout holds right after the kill at each step, in `git status` words. */
const AFTER_KILL: { point: CrashPoint; staged: string[] }[] = [
  { point: "merge.intent_recorded", staged: [] },
  // The state the issue met: the task's files staged, the branch not moved.
  {
    point: "merge.checkout_updated",
    staged: ["A  f1.txt", "A  tools/run.sh", "D  del.txt", "M  mod.txt"],
  },
  { point: "merge.ref_moved", staged: [] },
  { point: "merge.intent_cleared", staged: [] },
];

for (const { point, staged } of AFTER_KILL) {
  Deno.test(`a merge into the user's checkout killed right after ${point} is settled by the next landing: merged once, the user's changes untouched`, async () => {
    await using repo = await landingRepo();
    const before = await repo.git(["rev-parse", "main"]);
    await killedAt(point, () => merge(repo));
    const left = (await status(repo)).filter((l) => !USERS_ONLY.includes(l));
    assert.deepEqual(left.sort(), staged.sort(), "what the kill left staged");
    if (staged.length > 0) assert.equal(await repo.git(["rev-parse", "main"]), before);

    const out = await merge(repo);
    assert.equal(out.status, "merged", JSON.stringify(out));
    await assertMergedOnce(repo);
  });
}

Deno.test("settleInterruptedMerge() undoes exactly the service's staged merge and says so; the user's unrelated changes stay", async () => {
  await using repo = await landingRepo();
  const before = await repo.git(["rev-parse", "main"]);
  await killedAt("merge.checkout_updated", () => merge(repo));
  const settled = await settleInterruptedMerge(repo.root);
  assert.equal(settled.kind, "settled");
  assert.match(
    settled.kind === "settled" ? settled.note : "",
    /^undid an interrupted merge into main \(service: merge agent\/s1 \(task f1\)\): del\.txt, f1\.txt, mod\.txt, tools\/run\.sh are back as before it/,
  );
  assert.deepEqual(await status(repo), USERS_ONLY, "exactly as before the merge");
  assert.equal(await repo.git(["rev-parse", "main"]), before);
  assert.equal(await repo.read("del.txt"), "going\n");
  assert.equal(await exists(join(repo.root, "f1.txt")), false);
  assert.deepEqual(await settleInterruptedMerge(repo.root), { kind: "none" }, "once");
});

/** What a user may have done between the kill and the next landing. */
const MEANWHILE: {
  what: string;
  act: (repo: TestRepo) => Promise<void>;
  /** The next landing's outcome. */
  expect: "held" | "merged";
  /** What is left of the user's act after it. */
  check: (repo: TestRepo) => Promise<void>;
}[] = [
  {
    what: "edited a file the merge had staged",
    act: (repo) => repo.write("f1.txt", "the user's own f1\n"),
    expect: "held",
    check: async (repo) => assert.equal(await repo.read("f1.txt"), "the user's own f1\n"),
  },
  {
    what: "unstaged the merge's new file (git restore --staged)",
    act: async (repo) => void await repo.git(["restore", "--staged", "f1.txt"]),
    expect: "held",
    check: async (repo) => assert.ok((await status(repo)).includes("?? f1.txt")),
  },
  {
    what: "deleted a file the merge had changed",
    act: (repo) => Deno.remove(join(repo.root, "mod.txt")),
    expect: "held",
    check: async (repo) => assert.equal(await exists(join(repo.root, "mod.txt")), false),
  },
  {
    what: "put everything back (git reset --hard)",
    act: async (repo) => {
      await repo.git(["reset", "-q", "--hard"]);
      await repo.write("user.txt", "the user's unsaved line\n");
    },
    expect: "merged",
    check: (repo) => assertMergedOnce(repo),
  },
  {
    what: "committed the staged merge as their own commit",
    act: async (repo) => void await repo.git(["commit", "-q", "-m", "mine now"]),
    expect: "merged",
    check: async (repo) => {
      assert.equal(await repo.read("f1.txt"), "task f1\n");
      assert.equal(await repo.git(["log", "-1", "--format=%s", "main^1"]), "mine now");
    },
  },
];

for (const { what, act, expect, check } of MEANWHILE) {
  Deno.test(`a user who ${what} after a merge was killed mid-way: the next landing ${expect === "held" ? "touches nothing and waits, naming the files" : "lands the work"}`, async () => {
    await using repo = await landingRepo();
    await killedAt("merge.checkout_updated", () => merge(repo));
    await act(repo);
    const snapshot = await status(repo);
    const out = await merge(repo);
    if (expect === "held") {
      assert.equal(out.status, "waiting", JSON.stringify(out));
      if (out.status !== "waiting") return;
      assert.equal(out.stuck, true);
      assert.match(
        out.reason,
        /^uncommitted changes in .* would be overwritten: an interrupted merge of the service had staged its work there/,
      );
      assert.deepEqual(await status(repo), snapshot, "nothing was touched");
      assert.ok((await readIntent(repo.root)).intent, "the record is kept");
    } else {
      assert.equal(out.status, "merged", JSON.stringify(out));
    }
    await check(repo);
  });
}

const INTENT: CheckoutIntent = {
  v: 1,
  target: "main",
  checkout: "/ws",
  old_tip: "a".repeat(40),
  new_tip: "b".repeat(40),
  paths: [
    { path: "new.txt", old: null, new: { mode: "100644", oid: "1".repeat(40) } },
    {
      path: "mod.txt",
      old: { mode: "100644", oid: "2".repeat(40) },
      new: { mode: "100755", oid: "3".repeat(40) },
    },
  ],
  pid: 4242,
  message: "service: merge agent/s (task t)",
  at: "2026-01-01T00:00:00.000Z",
};

const facts = (over: Partial<InterruptedFacts>): InterruptedFacts => ({
  intent: INTENT,
  pid: 1,
  writerAlive: false,
  tip: INTENT.old_tip,
  checkouts: [{ dir: "/ws", head: INTENT.old_tip }],
  ...over,
});

const observed = (
  entries: Record<
    string,
    [InterruptedFacts["intent"]["paths"][number]["old"] | "conflict", boolean]
  >,
) =>
  new Map(
    Object.entries(entries).map(([p, [index, w]]) => [p, { index, worktreeMatchesIndex: w }]),
  );

const NEW_ENTRY = INTENT.paths[0].new;
const MOD_OLD = INTENT.paths[1].old;
const MOD_NEW = INTENT.paths[1].new;

Deno.test("decideInterrupted() decides from the record and the checkout alone", async (t) => {
  const table: [string, Partial<InterruptedFacts>, unknown][] = [
    ["a live writer is left to finish", { writerAlive: true }, {
      kind: "busy",
      reason: "process 4242 is merging into main (when no service runs there, that pid is " +
        "another program's now: look at `git status`, then remove .sdd/runtime/checkout-merge.json)",
    }],
    ["the branch at the merge commit: complete", { tip: INTENT.new_tip }, { kind: "complete" }],
    ["the branch elsewhere: moved on", { tip: "c".repeat(40) }, {
      kind: "moved_on",
      reason: `main is at cccccccccc now, not at aaaaaaaaaa where it started`,
    }],
    ["the branch gone: moved on", { tip: undefined }, {
      kind: "moved_on",
      reason: "main is at gone now, not at aaaaaaaaaa where it started",
    }],
    ["the checkout switched branch: moved on", { checkouts: [] }, {
      kind: "moved_on",
      reason: "/ws no longer has main checked out",
    }],
    ["the paths not read yet", {}, { kind: "needs_observed", dir: "/ws" }],
    ["every path as before: nothing to undo", {
      observed: observed({ "new.txt": [null, true], "mod.txt": [MOD_OLD, true] }),
    }, { kind: "undo", dir: "/ws", paths: [] }],
    ["every path as merged: undo them", {
      observed: observed({ "new.txt": [NEW_ENTRY, true], "mod.txt": [MOD_NEW, true] }),
    }, { kind: "undo", dir: "/ws", paths: ["new.txt", "mod.txt"] }],
    ["a staged path whose working file changed: held", {
      observed: observed({ "new.txt": [NEW_ENTRY, false], "mod.txt": [MOD_NEW, true] }),
    }, "held:new.txt"],
    ["a path staged with other content: held", {
      observed: observed({
        "new.txt": [{ mode: "100644", oid: "9".repeat(40) }, true],
        "mod.txt": [MOD_NEW, true],
      }),
    }, "held:new.txt"],
    ["the mode alone differs: held", {
      observed: observed({
        "new.txt": [NEW_ENTRY, true],
        "mod.txt": [{ mode: "100644", oid: MOD_NEW!.oid }, true],
      }),
    }, "held:mod.txt"],
    ["a conflict at a path: held", {
      observed: observed({ "new.txt": ["conflict", true], "mod.txt": [MOD_OLD, true] }),
    }, "held:new.txt"],
    [
      "a path not observed: held",
      { observed: observed({ "mod.txt": [MOD_OLD, true] }) },
      "held:new.txt",
    ],
  ];
  for (const [name, over, expected] of table) {
    await t.step(name, () => {
      const verdict = decideInterrupted(facts(over));
      if (typeof expected === "string") {
        assert.equal(verdict.kind, "held");
        if (verdict.kind === "held") assert.deepEqual(verdict.files, [expected.slice(5)]);
      } else assert.deepEqual(verdict, expected);
    });
  }
});

Deno.test("settleInterruptedMerge() holds every merge while its record does not parse, and says where it is", async () => {
  await using repo = await tempRepo();
  const path = checkoutMergePath(workspacePaths(repo.root));
  await Deno.mkdir(join(repo.root, ".sdd/runtime"), { recursive: true });
  await Deno.writeTextFile(path, "{not json");
  const settled = await settleInterruptedMerge(repo.root);
  assert.equal(settled.kind, "held");
  assert.match(
    settled.kind === "held" ? settled.reason : "",
    /checkout-merge\.json does not parse/,
  );
});

Deno.test("a train of three killed with all their files staged: the next landing undoes the whole train's staging and lands each task once", async () => {
  await using repo = await tempRepo({ "user.txt": "committed\n" });
  for (const s of ["s1", "s2", "s3"]) {
    const wt = await createWorktree(repo.root, s, await repo.git(["rev-parse", "main"]));
    await repo.write(`${s}.txt`, `${s}\n`, wt.path);
    await repo.commitAll(`work of ${s}`, wt.path);
  }
  await repo.write("user.txt", "the user's unsaved line\n");
  const members = ["s1", "s2", "s3"].map((s) => ({ agent: `agent/${s}`, taskId: `t-${s}` }));
  const train = () => mergeAgentBranches(repo.root, { target: "main", members });
  await killedAt("merge.checkout_updated", train);
  assert.deepEqual(await status(repo), [" M user.txt", "A  s1.txt", "A  s2.txt", "A  s3.txt"]);

  const out = await train();
  assert.deepEqual(out.map((o) => o.status), ["merged", "merged", "merged"]);
  assert.deepEqual(await status(repo), [" M user.txt"]);
  const merges = (await repo.git(["rev-list", "--merges", "main"])).split("\n").filter(Boolean);
  assert.equal(merges.length, 3, "one merge commit per task");
});
