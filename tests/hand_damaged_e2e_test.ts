/**
 * End to end, a workspace a user damaged by hand between runs: real git, the scripted agent
 * through the generic adapter, the real task server. What a stop kept is never dropped.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runPlan, type RunResult } from "../lib/runner/run.ts";
import { SERVER_APP } from "../routes/_app.ts";
import { checkTasks } from "../lib/doctor/checks.ts";
import { changeTasks } from "../lib/cli/commands/cancel.ts";
import { workspacePaths } from "../lib/workspace.ts";
import { tempDir } from "./helpers.ts";
import { rowsOf, sh, until, workspace } from "./_e2e.ts";

const quiet = { out: () => {}, port: 0, app: SERVER_APP };
const exists = (path: string) => Deno.stat(path).then(() => true, () => false);

/** Appends a line to progress.txt, signals `<mark>.<n>`, waits for `<go>.<n>`, then reports. */
function resumableScript(mark: string, go: string): unknown[][] {
  return [
    ["if_exists", "progress.txt", [["require_prompt", "EARLIER WORK:"]]],
    [
      "run",
      `echo line >> progress.txt; n=$(wc -l < progress.txt); touch ${mark}.$n; ` +
      `while [ ! -f ${go}.$n ]; do sleep 0.1; done`,
    ],
    ["report", "progress written"],
  ];
}

/** A workspace of one resumable step whose run was stopped while its agent wrote its first line. */
async function stoppedOnFirstLine(
  root: string,
  outside: string,
): Promise<{ go: string; stopped: RunResult }> {
  const mark = join(outside, "mark");
  const go = join(outside, "go");
  await workspace(root, [{
    name: "s",
    steps: [{ id: "long", script: resumableScript(mark, go) }],
  }]);
  const controller = new AbortController();
  const running = runPlan({ root, ...quiet, signal: controller.signal });
  await until("the agent's first line", () => exists(`${mark}.1`));
  controller.abort();
  const stopped = await running;
  assert.equal(stopped.status, "stopped");
  return { go, stopped };
}

Deno.test("a stopped task whose worktree the user removed by hand (rm -rf .sdd/worktrees/<s>) continues the work its stop kept on its branch; the terminal never says it left no work", async () => {
  await using dir = await tempDir();
  await using outside = await tempDir();
  const { go } = await stoppedOnFirstLine(dir.path, outside.path);
  const trees = join(dir.path, ".sdd", "worktrees");
  for await (const e of Deno.readDir(trees)) {
    await Deno.remove(join(trees, e.name), { recursive: true });
  }

  // Old code started afresh (one line, then go.1): it fails here at once instead of hanging.
  await Deno.writeTextFile(`${go}.1`, "");
  await Deno.writeTextFile(`${go}.2`, "");
  const lines: string[] = [];
  const last = await runPlan({ root: dir.path, ...quiet, out: (l) => lines.push(l) });
  const terminal = lines.join("\n");
  assert.equal(last.status, "completed", terminal);
  assert.doesNotMatch(terminal, /left no work/);
  assert.match(terminal, /a new attempt continues from its kept work/);
  assert.equal(
    await Deno.readTextFile(join(dir.path, "progress.txt")),
    "line\nline\n",
    "the stopped attempt's line and the new one's landed together",
  );
  const rows = await rowsOf(dir.path, last.runId);
  assert.ok(!rows.some((r) => r.type === "task_failed"));
});

Deno.test("a stopped run whose waiting task's spec file became garbage is not resumed without it: service run stops before journaling, naming the file and the fix; the run still resumes whole once the file is back", async () => {
  await using dir = await tempDir();
  await using outside = await tempDir();
  const mark = join(outside.path, "mark");
  const go = join(outside.path, "go");
  await workspace(dir.path, [
    { name: "a", steps: [{ id: "first", script: resumableScript(mark, go) }] },
    {
      name: "b",
      depends: ["a"],
      steps: [{ id: "second", script: [["write", "second.txt", "2\n"], ["report"]] }],
    },
  ]);
  const controller = new AbortController();
  const running = runPlan({ root: dir.path, ...quiet, signal: controller.signal });
  await until("the agent's first line", () => exists(`${mark}.1`));
  controller.abort();
  const stopped = await running;
  assert.equal(stopped.status, "stopped");
  const spec = join(dir.path, ".sdd/backlog/open/second.yaml");
  const kept = await Deno.readTextFile(spec);
  await Deno.writeTextFile(spec, "\u0000garbage: [unclosed\n");
  const before = (await rowsOf(dir.path, stopped.runId)).length;

  await Deno.writeTextFile(`${go}.1`, "");
  await Deno.writeTextFile(`${go}.2`, "");
  const lines: string[] = [];
  await assert.rejects(
    runPlan({ root: dir.path, ...quiet, out: (l) => lines.push(l) }),
    (e: Error & { fix?: string }) => {
      assert.equal(e.name, "RunError");
      assert.match(e.message, /1 task spec file\(s\) cannot be read; .*second\.yaml/);
      assert.match(
        e.fix ?? "",
        /restore each file from a backup, or move it out of \.sdd\/backlog\//,
      );
      return true;
    },
  );
  assert.equal((await rowsOf(dir.path, stopped.runId)).length, before, "nothing journaled");
  const doctor = await checkTasks(workspacePaths(dir.path));
  assert.equal(doctor.ok, false, "service doctor says the same");
  assert.match(doctor.detail, /1 task spec file\(s\) cannot be read: .*second\.yaml/);
  assert.equal(await exists(join(dir.path, "progress.txt")), false, "nothing landed");

  await Deno.writeTextFile(spec, kept);
  const last = await runPlan({ root: dir.path, ...quiet });
  assert.equal(last.status, "completed");
  assert.equal(last.runId, stopped.runId);
  assert.equal(await Deno.readTextFile(join(dir.path, "second.txt")), "2\n", "the task ran");
});

Deno.test("a stopped run is not resumed onto the branch the user switched to, nor onto its renamed branch: service run stops before journaling with the fix, and resumes on its own branch once the user is back", async () => {
  await using dir = await tempDir();
  await using outside = await tempDir();
  const { go, stopped } = await stoppedOnFirstLine(dir.path, outside.path);
  const before = (await rowsOf(dir.path, stopped.runId)).length;
  await Deno.writeTextFile(`${go}.1`, "");
  await Deno.writeTextFile(`${go}.2`, "");

  for (
    const [how, undo, branch] of [
      [["switch", "-q", "-c", "feature"], ["switch", "-q", "main"], "feature"],
      [["branch", "-m", "main", "trunk"], ["branch", "-m", "trunk", "main"], "trunk"],
    ] as const
  ) {
    await sh(dir.path, ...how);
    await assert.rejects(
      runPlan({ root: dir.path, ...quiet }),
      (e: Error & { fix?: string }) => {
        assert.equal(e.name, "RunError");
        assert.match(
          e.message,
          new RegExp(`run ${stopped.runId} started on main, but the checkout is on ${branch} now`),
        );
        assert.match(e.fix ?? "", /`git switch main`.*`service run` resumes the run/);
        return true;
      },
    );
    assert.equal((await rowsOf(dir.path, stopped.runId)).length, before, "nothing journaled");
    await sh(dir.path, ...undo);
  }
  assert.equal(
    (await sh(dir.path, "log", "--oneline", "feature")).trim().split("\n").length,
    1,
    "nothing landed on the branch the user switched to",
  );
  const last = await runPlan({ root: dir.path, ...quiet });
  assert.equal(last.status, "completed");
  assert.equal(last.runId, stopped.runId);
  assert.equal(await Deno.readTextFile(join(dir.path, "progress.txt")), "line\nline\n");
});

/** The stopped session's worktree (the only one) and its branch, deleted by hand. */
async function deleteAgentBranch(root: string): Promise<string> {
  const [session] = await Array.fromAsync(Deno.readDir(join(root, ".sdd", "worktrees")));
  await sh(root, "update-ref", "-d", `refs/heads/agent/${session.name}`);
  return session.name;
}

Deno.test("a stopped task whose agent/<session> branch the user deleted by hand gets the branch put back at its worktree's last commit, said on the terminal, and continues the work its worktree holds", async () => {
  await using dir = await tempDir();
  await using outside = await tempDir();
  const { go } = await stoppedOnFirstLine(dir.path, outside.path);
  const session = await deleteAgentBranch(dir.path);

  // Old code said "it left no work" and started afresh (one line, then go.1): it fails at once.
  await Deno.writeTextFile(`${go}.1`, "");
  await Deno.writeTextFile(`${go}.2`, "");
  const lines: string[] = [];
  const last = await runPlan({ root: dir.path, ...quiet, out: (l) => lines.push(l) });
  const terminal = lines.join("\n");
  assert.equal(last.status, "completed", terminal);
  assert.match(
    terminal,
    new RegExp(`long: its branch agent/${session} was deleted by hand; put back at [0-9a-f]{10}`),
  );
  assert.doesNotMatch(terminal, /left no work/);
  assert.equal(await Deno.readTextFile(join(dir.path, "progress.txt")), "line\nline\n");
  assert.equal(await exists(join(dir.path, ".sdd", "worktrees", session)), false);
});

Deno.test("a cancel of a stopped task whose branch was deleted by hand keeps its work on a rescue ref as a commit on top of the target, never as a history of its own", async () => {
  await using dir = await tempDir();
  await using outside = await tempDir();
  await stoppedOnFirstLine(dir.path, outside.path);
  const session = await deleteAgentBranch(dir.path);
  const out: string[] = [];
  const code = await changeTasks(
    { root: dir.path, stdout: (l) => out.push(l), stderr: (l) => out.push(l) },
    { kind: "cancel", ids: ["long"], all: false },
  );
  assert.equal(code, 0, out.join("\n"));
  const rescue = `refs/service/rescue/${session}`;
  assert.match(out.join("\n"), new RegExp(`kept at ${rescue}`));
  const changed = await sh(dir.path, "diff", "--name-only", `${rescue}^`, rescue);
  assert.equal(changed.trim(), "progress.txt", "its commit has a parent and holds only the work");
  assert.equal(await exists(join(dir.path, ".sdd", "worktrees", session)), false);
});
