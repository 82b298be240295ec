/**
 * `kill -9` in the middle of a merge, at every step of it (docs/merging.md "Crash drills"): the
 * real CLI as a child process, the scripted agent, a real checkout with the user's own uncommitted
 * changes beside the merge. After each kill, `service run` resumes and must end (bounded here,
 * never a hang), with the checkout exactly merged, the user's changes untouched, the task merged
 * exactly once (one `task_merged` row, one merge commit). A user's real change in the way of a
 * merge ends the run with the reason in the terminal and `service status`, the change intact.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { CRASH_POINTS, type CrashPoint } from "../lib/util/crash_points.ts";
import { verifyJournalText } from "../lib/journal/verify.ts";
import { CLI, sh, workspace } from "./_e2e.ts";
import { tempDir } from "./helpers.ts";

/** How long one `service run` may take before the test calls it a hang. */
const RUN_LIMIT_MS = 180_000;

/** `service run` as a child process: its exit, its signal and everything it printed. */
async function serviceRun(root: string, env: Record<string, string> = {}) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "--root", root, "run", "--port", "0"],
    env: { NO_COLOR: "1", SERVICE_KILL_GRACE_S: "1", ...env },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const timer = setTimeout(() => child.kill("SIGKILL"), RUN_LIMIT_MS);
  const started = Date.now();
  const out = await child.output().finally(() => clearTimeout(timer));
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  if (Date.now() - started >= RUN_LIMIT_MS) {
    throw new Error(
      `\`service run\` did not end within ${RUN_LIMIT_MS / 1000} s; it printed:\n${text}`,
    );
  }
  return { code: out.code, signal: out.signal, text };
}

/** `service status` in `root`. */
async function serviceStatus(root: string): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "--root", root, "status"],
    env: { NO_COLOR: "1" },
  }).output();
  return new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
}

const USERS_OWN = [" M user.txt", "?? notes.txt"];

/**
 * A workspace whose one task `f1` adds f1.txt, changes mod.txt and deletes del.txt, while the
 * user has an unrelated change in user.txt and an untracked notes.txt.
 */
async function crashWorkspace(root: string): Promise<string> {
  await workspace(
    root,
    [{
      name: "s",
      steps: [{
        id: "f1",
        script: [
          ["write", "f1.txt", "task f1\n"],
          ["write", "mod.txt", "after\n"],
          ["run", "rm del.txt"],
          ["report", "f1 done"],
        ],
      }],
    }],
    "",
    { "mod.txt": "before\n", "del.txt": "going\n", "user.txt": "committed\n" },
  );
  await Deno.writeTextFile(join(root, "user.txt"), "the user's unsaved line\n");
  await Deno.writeTextFile(join(root, "notes.txt"), "the user's notes\n");
  return (await sh(root, "rev-parse", "main")).trim();
}

const status = async (root: string) =>
  (await sh(root, "status", "--porcelain", "--untracked-files=all")).split("\n").filter(Boolean)
    .sort();

/** Every `task_merged` row of every run of the workspace (each journal verified). */
async function mergedRows(root: string) {
  const rows = [];
  for await (const run of Deno.readDir(join(root, ".sdd/runs"))) {
    const text = await Deno.readTextFile(join(root, ".sdd/runs", run.name, "journal.jsonl"));
    const journal = verifyJournalText(text);
    assert.equal(journal.verified, true, `the journal of ${run.name} verifies`);
    rows.push(...journal.rows.map((r) => r.row).filter((r) => r.type === "task_merged"));
  }
  return rows;
}

/** The checkout holds the merge once and the user's own changes as they were; one merge. */
async function assertMergedOnce(root: string, before: string): Promise<void> {
  assert.deepEqual(await status(root), USERS_OWN, "only the user's own changes are left");
  assert.equal(await sh(root, "diff", "--cached", "--name-only"), "", "nothing staged");
  assert.equal(await Deno.readTextFile(join(root, "f1.txt")), "task f1\n");
  assert.equal(await Deno.readTextFile(join(root, "mod.txt")), "after\n");
  assert.equal(await Deno.stat(join(root, "del.txt")).then(() => true, () => false), false);
  assert.equal(await Deno.readTextFile(join(root, "user.txt")), "the user's unsaved line\n");
  assert.equal(await Deno.readTextFile(join(root, "notes.txt")), "the user's notes\n");
  const merges = (await sh(root, "rev-list", "--merges", `${before}..main`)).trim().split("\n")
    .filter(Boolean);
  assert.equal(merges.length, 1, "one merge commit");
  const rows = await mergedRows(root);
  assert.equal(rows.length, 1, `one task_merged row: ${JSON.stringify(rows)}`);
  assert.equal(rows[0].data.task_id, "f1");
  assert.equal(rows[0].data.commit, merges[0], "the row names the merge commit");
}

/** Per step: what the checkout shows right after the kill, and what the resumed run says. */
const STEPS: Record<CrashPoint, { staged: string[]; says: RegExp }> = {
  "merge.intent_recorded": {
    staged: [],
    says:
      /repaired: an interrupted merge into main \(service: merge agent\/\S+ \(task f1\)\) had not touched the checkout yet/,
  },
  // The issue's state: the task's files staged in the user's checkout, main not moved.
  "merge.checkout_updated": {
    staged: ["A  f1.txt", "D  del.txt", "M  mod.txt"],
    says:
      /repaired: undid an interrupted merge into main \(service: merge agent\/\S+ \(task f1\)\): del\.txt, f1\.txt, mod\.txt are back as before it/,
  },
  "merge.ref_moved": {
    staged: [],
    says:
      /repaired: an interrupted merge into main \(service: merge agent\/\S+ \(task f1\)\) had completed/,
  },
  "merge.intent_cleared": { staged: [], says: /f1: merged as [0-9a-f]{10}/ },
  "merge.journaled": {
    staged: [],
    says:
      /repaired: f1 was merged as [0-9a-f]{10} \(journal seq \d+ of run-\S+\) but the task store said DONE; it is CLOSED now/,
  },
  "merge.store_closed": {
    staged: [],
    says: /nothing to do: all 1 step\(s\) of plan\.yaml already landed/,
  },
  "reap.tree_removed": {
    staged: [],
    says: /pruned \S+worktrees\/\S+: a worktree removal cut short left it \(no gitdir\)/,
  },
};

Deno.test("kill -9 at every step of a merge: the next `service run` ends, the task merged exactly once, the user's own changes untouched", async (t) => {
  assert.deepEqual(Object.keys(STEPS).sort(), [...CRASH_POINTS].sort(), "every step is drilled");
  for (const point of CRASH_POINTS) {
    await t.step(point, async () => {
      await using dir = await tempDir();
      const root = dir.path;
      const before = await crashWorkspace(root);
      const killed = await serviceRun(root, { SERVICE_CRASH_AT: point });
      assert.equal(
        killed.signal,
        "SIGKILL",
        `the drill did not kill \`service run\`:\n${killed.text}`,
      );
      const left = (await status(root)).filter((l) => !USERS_OWN.includes(l));
      const expected = STEPS[point].staged;
      if (point === "merge.intent_recorded" || expected.length > 0) {
        assert.deepEqual(left, expected, "what the kill left in the checkout");
      }
      assert.equal(await Deno.readTextFile(join(root, "user.txt")), "the user's unsaved line\n");

      const resumed = await serviceRun(root);
      assert.equal(resumed.code, 0, resumed.text);
      assert.match(resumed.text, STEPS[point].says);
      await assertMergedOnce(root, before);
      const again = await serviceRun(root);
      assert.equal(again.code, 0, again.text);
      assert.match(again.text, /nothing to do: all 1 step\(s\) of plan\.yaml already landed/);
      await assertMergedOnce(root, before);
    });
  }
});

/**
 * A `git` on PATH that holds the service's `update-ref` of main (in the user's checkout) until it
 * is killed, after writing its pid to `mark`: a moment to `kill -9` the service at, from outside,
 * with the task's files staged and main not moved yet. Every other git call passes through.
 */
async function holdingGit(dir: string, checkout: string, mark: string): Promise<string> {
  const real = await new Deno.Command("sh", { args: ["-c", "command -v git"] }).output();
  const git = new TextDecoder().decode(real.stdout).trim();
  const bin = join(dir, "bin");
  await Deno.mkdir(bin);
  await Deno.writeTextFile(
    join(bin, "git"),
    `#!/bin/sh
if [ "$1" = "update-ref" ] && [ "$(pwd -P)" = "${checkout}" ]; then
  case " $* " in *" refs/heads/main "*) echo $$ > "${mark}.tmp"; mv "${mark}.tmp" "${mark}"; exec sleep 600;; esac
fi
exec ${git} "$@"
`,
  );
  await Deno.chmod(join(bin, "git"), 0o755);
  return bin;
}

Deno.test("kill -9 from outside while the task's files are staged in the checkout (the issue's case): the resumed run undoes its own staging, lands the task once and ends", async () => {
  await using dir = await tempDir();
  await using outside = await tempDir();
  const root = await Deno.realPath(dir.path);
  const before = await crashWorkspace(root);
  const mark = join(outside.path, "held");
  const bin = await holdingGit(outside.path, root, mark);
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "--root", root, "run", "--port", "0"],
    env: { NO_COLOR: "1", PATH: `${bin}:${Deno.env.get("PATH")}` },
    stdout: "null",
    stderr: "null",
  }).spawn();
  const deadline = Date.now() + RUN_LIMIT_MS;
  while (!(await Deno.stat(mark).then(() => true, () => false))) {
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error("the run never reached the merge's update-ref");
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill("SIGKILL");
  await child.status;
  Deno.kill(Number((await Deno.readTextFile(mark)).trim()), "SIGKILL"); // the held git, never run
  const left = (await status(root)).filter((l) => !USERS_OWN.includes(l));
  assert.deepEqual(left, ["A  f1.txt", "D  del.txt", "M  mod.txt"], "staged, as the issue saw");
  assert.equal((await sh(root, "rev-parse", "main")).trim(), before, "main not moved");

  const resumed = await serviceRun(root);
  assert.equal(resumed.code, 0, resumed.text);
  assert.match(resumed.text, /repaired: undid an interrupted merge into main/);
  assert.doesNotMatch(resumed.text, /merge waits/);
  await assertMergedOnce(root, before);
});

Deno.test("the user's own uncommitted change in a file the task changes: the run ends with the reason in the terminal and `service status`; the change is intact, and the work lands once it is stashed", async () => {
  await using dir = await tempDir();
  const root = dir.path;
  await workspace(
    root,
    [{
      name: "s",
      steps: [{ id: "f1", script: [["write", "f1.txt", "task f1\n"], ["report"]] }],
    }],
    "",
    { "f1.txt": "original\n" },
  );
  const before = (await sh(root, "rev-parse", "main")).trim();
  await Deno.writeTextFile(join(root, "f1.txt"), "the user's unsaved work\n");

  const first = await serviceRun(root, { SERVICE_MERGE_WAIT_S: "1" });
  assert.equal(first.code, 1, first.text);
  assert.match(
    first.text,
    /only merges that wait for you are left \(f1\): the run ends in 1s unless they can land by then/,
  );
  assert.match(
    first.text,
    /f1: DONE, not merged yet — uncommitted changes in f1\.txt would be overwritten: commit or stash them \(`service run` resumes\)/,
  );
  assert.match(
    await serviceStatus(root),
    /f1 waits: merge waits: uncommitted changes in f1\.txt would be overwritten: commit or stash them/,
  );
  assert.equal(await Deno.readTextFile(join(root, "f1.txt")), "the user's unsaved work\n");
  assert.deepEqual(await status(root), [" M f1.txt"]);
  assert.equal((await sh(root, "rev-parse", "main")).trim(), before, "main not moved");

  await sh(root, "stash");
  const resumed = await serviceRun(root);
  assert.equal(resumed.code, 0, resumed.text);
  assert.equal(await Deno.readTextFile(join(root, "f1.txt")), "task f1\n");
  assert.equal((await mergedRows(root)).length, 1);
  assert.match(
    await sh(root, "stash", "show", "-p"),
    /\+the user's unsaved work/,
    "kept in the stash",
  );
});

Deno.test("the user edits a file an interrupted merge had staged: the resumed run touches nothing, ends with the reason, and lands once the user puts it back", async () => {
  await using dir = await tempDir();
  const root = dir.path;
  const before = await crashWorkspace(root);
  const killed = await serviceRun(root, { SERVICE_CRASH_AT: "merge.checkout_updated" });
  assert.equal(killed.signal, "SIGKILL", killed.text);
  await Deno.writeTextFile(join(root, "f1.txt"), "the user's own f1\n");
  const snapshot = await status(root);

  const resumed = await serviceRun(root, { SERVICE_MERGE_WAIT_S: "1" });
  assert.equal(resumed.code, 1, resumed.text);
  assert.match(
    resumed.text,
    /f1: DONE, not merged yet — uncommitted changes in f1\.txt would be overwritten: an interrupted merge of the service had staged its work there, and it changed since/,
  );
  assert.match(await serviceStatus(root), /f1 waits: merge waits: uncommitted changes in f1\.txt/);
  assert.deepEqual(await status(root), snapshot, "nothing was touched");
  assert.equal(await Deno.readTextFile(join(root, "f1.txt")), "the user's own f1\n");
  assert.equal((await sh(root, "rev-parse", "main")).trim(), before);

  // The user puts f1.txt back as the merge had staged it: exactly the service's own again.
  await sh(root, "checkout", "--", "f1.txt");
  const again = await serviceRun(root);
  assert.equal(again.code, 0, again.text);
  await assertMergedOnce(root, before);
});
