/**
 * A full disk is the machine's problem, not the task's (lib/util/disk_full.ts): a step of the
 * service's own that fails on it — cutting the worktree, committing what the agent left — counts
 * no attempt, says that the disk is full, where, and what to do, stops the run, and the journal
 * claims nothing that did not happen; with space back `service run` lands the kept work. An agent
 * whose own write failed on it ended by its own exit: that attempt counts, and its reason says
 * that the disk was full. Real tmpfs mounts (root only; skipped otherwise, saying why).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runPlan, type RunResult } from "../lib/runner/run.ts";
import { SERVER_APP } from "../routes/_app.ts";
import { tempDir } from "./helpers.ts";
import { cli, rowsOf, sh, until, workspace } from "./_e2e.ts";
import { type SmallDisk, smallDisk, TMPFS_UNAVAILABLE } from "./_tmpfs.ts";

const ignore = TMPFS_UNAVAILABLE !== undefined;

/** A run of `root` to its end (at most 2 minutes); its lines, its result or what it threw. */
async function runToEnd(root: string) {
  const lines: string[] = [];
  const stop = new AbortController();
  const limit = setTimeout(() => stop.abort(), 120_000);
  let result: RunResult | undefined;
  let error: Error | undefined;
  const running = runPlan({
    root,
    port: 0,
    app: SERVER_APP,
    signal: stop.signal,
    out: (l) => lines.push(l),
  });
  try {
    result = await running;
  } catch (e) {
    error = e as Error;
  } finally {
    clearTimeout(limit);
  }
  assert.equal(stop.signal.aborted, false, `the run never ended:\n${lines.join("\n")}`);
  return { lines, result, error, text: lines.join("\n") };
}

/** Every row of every run of `root` (each journal verified). */
async function allRows(root: string) {
  const rows = [];
  for await (const run of Deno.readDir(join(root, ".sdd/runs"))) {
    rows.push(...await rowsOf(root, run.name));
  }
  return rows;
}

/** Nothing in the journal says an attempt failed or counted. */
function noAttemptCounted(rows: { type: string; data: Record<string, unknown> }[]): void {
  assert.deepEqual(rows.filter((r) => r.type === "task_verification_failed"), []);
  assert.deepEqual(rows.filter((r) => r.type === "task_failed"), []);
  assert.ok(
    !rows.some((r) => /failed attempt/.test(JSON.stringify(r.data))),
    "no row speaks of a failed attempt",
  );
}

Deno.test({
  name:
    "a disk that fills while the agent runs: committing its work fails, no attempt is counted, the reason says the disk is full and where, the run stops; with space back the next run lands the kept work",
  ignore,
  async fn() {
    await using disk = await smallDisk(24 * 1024 * 1024);
    await using outside = await tempDir();
    const root = join(disk.path, "ws");
    await Deno.mkdir(root);
    const mark = join(outside.path, "mark");
    const go = join(outside.path, "go");
    await workspace(root, [{
      name: "s",
      steps: [{
        id: "t",
        script: [
          ["write", "a.txt", "the agent's work\n"],
          ["run", `touch ${mark}; while [ ! -f ${go} ]; do sleep 0.1; done`],
          ["print", "finished; it cannot call the task API"],
        ],
      }],
    }]);
    const first = runToEnd(root);
    await until("the agent runs", () => Deno.stat(mark).then(() => true, () => false));
    await disk.fill();
    await Deno.writeTextFile(go, "");
    const stopped = await first;
    await disk.free();
    assert.match(
      stopped.text,
      /t: the disk is full: committing the agent's work failed in \S+\/\.sdd\/worktrees\/s-\S+ \(.*Out of diskspace\); no attempt counted, the task's work is kept and the run stops\. Free space on that disk \(`df -h \S+`\), then `service run` resumes it/,
    );
    // The run stopped (or could not even write its last state file, saying the disk is full).
    assert.ok(
      stopped.result?.status === "stopped" || /the disk is full/.test(String(stopped.error)),
      `${stopped.result?.status} ${stopped.error}\n${stopped.text}`,
    );
    const rows = await allRows(root);
    noAttemptCounted(rows);
    const retried = rows.filter((r) => r.type === "task_retried");
    assert.match(String(retried.at(-1)?.data.reason), /^the disk is full: committing/);
    assert.deepEqual(rows.filter((r) => r.type === "task_merged"), []);

    const again = await runToEnd(root);
    assert.equal(again.result?.status, "completed", again.text);
    assert.equal(await Deno.readTextFile(join(root, "a.txt")), "the agent's work\n");
    noAttemptCounted(await allRows(root));
  },
});

/** Mount `disk` as the workspace's `.sdd/worktrees`: the worktrees fill it, the journal does not. */
async function worktreesOn(root: string, disk: SmallDisk): Promise<void> {
  await Deno.mkdir(join(root, ".sdd"), { recursive: true });
  await Deno.symlink(disk.path, join(root, ".sdd/worktrees"));
}

Deno.test({
  name:
    "a worktree that cannot be cut on a full disk costs no attempt: the run stops saying the disk is full and where; with space back it runs",
  ignore,
  async fn() {
    await using disk = await smallDisk(8 * 1024 * 1024);
    await using dir = await tempDir();
    const root = dir.path;
    await workspace(
      root,
      [{
        name: "s",
        steps: [{ id: "t", script: [["write", "b.txt", "done\n"], ["report", "done"]] }],
      }],
      "",
      { "big.bin": "x".repeat(256 * 1024) },
    );
    await worktreesOn(root, disk);
    await disk.fill();
    const stopped = await runToEnd(root);
    assert.equal(stopped.result?.status, "stopped", `${stopped.error}\n${stopped.text}`);
    assert.match(
      stopped.text,
      /t: the disk is full: creating its worktree failed in \S+ \(.*\); no attempt counted, the task's work is kept and the run stops/,
    );
    const rows = await allRows(root);
    noAttemptCounted(rows);
    assert.deepEqual(rows.filter((r) => r.type === "task_claimed"), [], "no attempt began");
    // What `service status` says of the task until the run resumes.
    const status = await cli(root, "status");
    assert.match(status.out, /t\b.*the disk is full: creating its worktree failed/, status.out);
    await disk.free();
    const again = await runToEnd(root);
    assert.equal(again.result?.status, "completed", again.text);
    assert.equal(await Deno.readTextFile(join(root, "b.txt")), "done\n");
    noAttemptCounted(await allRows(root));
    assert.equal(await sh(root, "status", "--porcelain"), "");
  },
});

Deno.test({
  name:
    "an agent whose own write fails on a full disk ends by its own exit: that attempt counts, and its reason says the disk is full",
  ignore,
  async fn() {
    await using disk = await smallDisk(8 * 1024 * 1024);
    await using dir = await tempDir();
    const root = dir.path;
    await workspace(root, [{
      name: "s",
      steps: [{
        id: "t",
        script: [
          ["first_attempt", [[
            "run",
            // It cleans up after itself: the service's own commit then has room.
            "head -c 64000000 /dev/zero > big; s=$?; rm -f big; exit $s",
          ]]],
          ["write", "c.txt", "done\n"],
          ["report", "done"],
        ],
      }],
    }]);
    await worktreesOn(root, disk);
    const run = await runToEnd(root);
    assert.equal(run.result?.status, "completed", run.text);
    const rows = await allRows(root);
    const [retried] = rows.filter((r) => r.type === "task_retried");
    assert.match(
      String(retried.data.reason),
      /agent exited .*\(exit 1\).*; the disk is full \(head: error writing '[^']+': No space left on device\): free space on it, or the next attempt fails the same way \(failed attempt 1 of 3; retrying\)$/,
    );
    assert.equal(await Deno.readTextFile(join(root, "c.txt")), "done\n");
  },
});
