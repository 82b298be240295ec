/**
 * Worktrees no run reaps, settled as a live run's reap settles them (docs/merging.md#worktrees):
 * a task cancelled while no run is live (`service run` killed with SIGKILL, its agent ended by
 * `service stop`), and a `.git/worktrees/<id>` entry a kill in the middle of `git worktree
 * remove` left without its `gitdir` (a stand-in `git` ends the service at that point). The real
 * CLI as a child process on a real git repository; the agents' work is never lost.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { CLI, cli, sh, workspace } from "./_e2e.ts";
import { tempDir } from "./helpers.ts";
import { tethersOf } from "../lib/process/_test_processes.ts";

const RUN_LIMIT_MS = 120_000;

/** `service run` as a child process, with `env` added. */
function spawnRun(root: string, env: Record<string, string> = {}): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "--root", root, "run", "--port", "0"],
    env: { NO_COLOR: "1", SERVICE_KILL_GRACE_S: "1", ...env },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

async function output(child: Deno.ChildProcess) {
  const timer = setTimeout(() => child.kill("SIGKILL"), RUN_LIMIT_MS);
  const out = await child.output().finally(() => clearTimeout(timer));
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  return { code: out.code, signal: out.signal, text };
}

async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + RUN_LIMIT_MS;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const exists = (p: string) => Deno.lstat(p).then(() => true, () => false);

async function sessionsIn(root: string): Promise<string[]> {
  return await Array.fromAsync(Deno.readDir(join(root, ".sdd/worktrees")), (e) => e.name)
    .catch(() => []);
}

async function doctorCheck(root: string, name: string) {
  const doctor = await cli(root, "doctor", "--json");
  const report = JSON.parse(doctor.out.slice(doctor.out.indexOf("{")));
  return report.checks.find((c: { name: string }) => c.name === name) as
    | { detail: string; fix?: string }
    | undefined;
}

/**
 * A run of one step whose agent writes `work.txt` and then sleeps, killed with SIGKILL once the
 * write is there, its agent left running: its session and how the run's process ended. A run's
 * tether ends its agents when it dies (lib/process/tether.ts), so the tether goes first — an agent
 * outliving its run is what remains where none can run (no `sh`) or it was killed, and what these
 * paths are for. The run is stopped (SIGSTOP) meanwhile: a git call it started after the tether's
 * end would start a new one, told of the agent.
 */
async function killedWhileItWorks(root: string) {
  await workspace(root, [{
    name: "s",
    steps: [{
      id: "long",
      script: [["write", "work.txt", "the agent's work\n"], ["run", "sleep 600"], ["report"]],
    }],
  }]);
  const run = spawnRun(root);
  const done = output(run);
  let session = "";
  await until("the agent's write", async () => {
    for (const s of await sessionsIn(root)) {
      if (await exists(join(root, ".sdd/worktrees", s, "work.txt"))) session = s;
    }
    return session !== "";
  });
  run.kill("SIGSTOP");
  for (const tether of tethersOf(run.pid)) Deno.kill(tether, "SIGKILL");
  await until("the run's tether to end", () => Promise.resolve(tethersOf(run.pid).length === 0));
  run.kill("SIGKILL");
  const { signal } = await done;
  return { session, signal };
}

Deno.test("a task cancelled while no run is live has its worktree reaped, its work kept at its rescue ref", async () => {
  await using dir = await tempDir();
  const root = dir.path;
  const { session, signal } = await killedWhileItWorks(root);
  assert.equal(signal, "SIGKILL");

  const early = await cli(root, "cancel", "long");
  assert.equal(early.code, 0, early.out);
  assert.match(early.out, /long: CANCELLED \(was IN_PROGRESS\)/);
  assert.match(early.out, /kept: its agent still runs/, "an agent still writing is not reaped");
  assert.ok(await exists(join(root, ".sdd/worktrees", session, "work.txt")));
  const listed = await doctorCheck(root, "worktrees");
  assert.ok(listed, "doctor lists the worktree no run continues");
  assert.match(listed.detail, new RegExp(`\\.sdd/worktrees/${session} \\(long, CANCELLED\\)`));
  assert.match(listed.fix ?? "", /service run/);

  const stop = await cli(root, "stop");
  assert.match(stop.out, /ended 1 agent/, stop.out);
  // The next run reaps it before anything else; it then runs the plan anew (its step was
  // cancelled), and is ended once its agent started.
  const again = spawnRun(root);
  const ended = output(again);
  await until("the next run's agent", async () => {
    const now = await sessionsIn(root);
    return now.length > 0 && !now.includes(session);
  });
  again.kill("SIGKILL");
  const next = await ended;
  assert.match(
    next.text,
    new RegExp(
      `worktrees: long \\(CANCELLED\\): worktree of ${session} removed; its unmerged ` +
        `work is kept at refs/service/rescue/${session}`,
    ),
    next.text,
  );
  assert.equal((await sessionsIn(root)).includes(session), false, next.text);
  assert.equal((await sh(root, "worktree", "list")).includes(session), false, next.text);
  assert.equal(
    await sh(root, "show", `refs/service/rescue/${session}:work.txt`),
    "the agent's work\n",
  );
  await cli(root, "stop");
});

Deno.test("`service cancel` with no run live reaps the task's worktree at once, as a live run's reap does", async () => {
  await using dir = await tempDir();
  const root = dir.path;
  const { session } = await killedWhileItWorks(root);
  const stop = await cli(root, "stop"); // the agent the killed run left is ended
  assert.match(stop.out, /ended 1 agent/, stop.out);

  const cancel = await cli(root, "cancel", "long");
  assert.equal(cancel.code, 0, cancel.out);
  assert.match(
    cancel.out,
    new RegExp(
      `long \\(CANCELLED\\): worktree of ${session} removed; its unmerged work is kept ` +
        `at refs/service/rescue/${session}`,
    ),
    cancel.out,
  );
  assert.deepEqual(await sessionsIn(root), []);
  assert.equal(
    await sh(root, "show", `refs/service/rescue/${session}:work.txt`),
    "the agent's work\n",
  );
  assert.equal(await doctorCheck(root, "worktrees"), undefined);
  const rescued = await doctorCheck(root, "rescued work");
  assert.match(rescued?.detail ?? "", new RegExp(`refs/service/rescue/${session}`));
});

Deno.test("a kill during a reap leaves `.git/worktrees/<id>` without gitdir: doctor names it and the next run prunes it", async () => {
  await using dir = await tempDir();
  const root = dir.path;
  await workspace(root, [{
    name: "s",
    steps: [{ id: "g", script: [["write", "g.txt", "g\n"], ["report", "done"]] }],
  }]);
  // Killed right after the removal took the worktree and its entry's gitdir (the crash drill).
  const killed = await output(spawnRun(root, { SERVICE_CRASH_AT: "reap.tree_removed" }));
  assert.equal(killed.signal, "SIGKILL", killed.text);
  const common = join(root, ".git/worktrees");
  const entries = await Array.fromAsync(Deno.readDir(common), (e) => e.name);
  assert.equal(entries.length, 1, "the half-removed entry is there");
  assert.equal(await exists(join(common, entries[0], "gitdir")), false);

  const listed = await doctorCheck(root, "worktrees");
  assert.ok(listed, "doctor names the half-removed entry");
  assert.match(listed.detail, new RegExp(`without gitdir: .*worktrees/${entries[0]}`));

  const next = await output(spawnRun(root));
  assert.match(
    next.text,
    new RegExp(`pruned .*worktrees/${entries[0]}: a worktree removal cut short`),
    next.text,
  );
  assert.equal(await exists(join(common, entries[0])), false);
  assert.equal(await doctorCheck(root, "worktrees"), undefined);
  assert.equal(await sh(root, "show", "main:g.txt"), "g\n", "the merged work is on main");
});

Deno.test("an admin entry without gitdir whose worktree still holds work is never pruned", async () => {
  await using dir = await tempDir();
  const root = dir.path;
  await workspace(root, [{ name: "s", steps: [{ id: "g", script: [["report", "done"]] }] }]);
  const path = join(root, ".sdd/worktrees/s-abcd-001-beef");
  await sh(root, "worktree", "add", "-q", "-b", "agent/s-abcd-001-beef", path);
  await Deno.writeTextFile(join(path, "unsaved.txt"), "work\n");
  await Deno.remove(join(root, ".git/worktrees/s-abcd-001-beef/gitdir"));
  const doctor = await doctorCheck(root, "worktrees");
  assert.doesNotMatch(doctor?.detail ?? "", /without gitdir/);
  assert.ok(await exists(join(root, ".git/worktrees/s-abcd-001-beef")));
  assert.equal(await Deno.readTextFile(join(path, "unsaved.txt")), "work\n");
});
