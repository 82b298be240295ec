/**
 * End to end, a stopped run whose journal the user (or a crash) damaged: every place that describes
 * the run — `status`, the runs list, `service run` — names the damage and the way out, and none
 * says it can be resumed; the run whose journal is whole still resumes. Real git, the scripted
 * agent through the generic adapter, the real task server. One catalogue of damage, one table.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runPlan } from "../lib/runner/run.ts";
import { RunError } from "../lib/runner/run_checks.ts";
import { SERVER_APP } from "../routes/_app.ts";
import { listRuns } from "../lib/runs/runs.ts";
import { collectStatus } from "../lib/status/status.ts";
import { appContext } from "../lib/server/serve.ts";
import { changeTasks } from "../lib/cli/commands/cancel.ts";
import { journalPath, workspacePaths } from "../lib/workspace.ts";
import { tempDir } from "./helpers.ts";
import {
  browserPage,
  openRunPage,
  planYaml,
  runEnv,
  serveBoard,
  until,
  workspace,
} from "./_e2e.ts";
import { processAlive } from "../lib/util/process_alive.ts";

/** The `run` part of the status object, as `service status` reads it from the workspace files. */
async function statusRun(root: string): Promise<Record<string, string>> {
  const status = await collectStatus(appContext(root, [])) as unknown as Record<string, unknown>;
  return status.run as Record<string, string>;
}

const quiet = { out: () => {}, port: 0, app: SERVER_APP };
const exists = (path: string) => Deno.stat(path).then(() => true, () => false);

/** A workspace whose one-step run was stopped while its agent waited for `go`. */
async function stoppedRun(root: string, outside: string): Promise<{ runId: string; go: string }> {
  const mark = join(outside, "mark");
  const go = join(outside, "go");
  await workspace(root, [{
    name: "s",
    steps: [{
      id: "long",
      script: [
        [
          "run",
          `echo line >> progress.txt; touch ${mark}; while [ ! -f ${go} ]; do sleep 0.1; done`,
        ],
        ["report", "progress written"],
      ],
    }],
  }]);
  const controller = new AbortController();
  const running = runPlan({ root, ...quiet, signal: controller.signal });
  await until("the agent's line", () => exists(mark));
  controller.abort();
  const stopped = await running;
  assert.equal(stopped.status, "stopped");
  return { runId: stopped.runId, go };
}

/** The lines of a journal's text, with line `n` (1-based) replaced by `f(line)`. */
function editLine(text: string, n: number, f: (line: string) => string): string {
  const lines = text.split("\n");
  lines[n - 1] = f(lines[n - 1]);
  return lines.join("\n");
}

/** Each damage: what it does to the journal's text (null: the file is removed). */
const DAMAGE: { name: string; damage: (text: string) => string | null; words: RegExp }[] = [
  {
    name: "a torn tail (truncate -s -20)",
    damage: (text) => text.slice(0, -20),
    words: /its last line \((\d+)\) is torn: cut off before its end; lines 1–\d+ verify/,
  },
  {
    name: "a middle line edited",
    damage: (text) => editLine(text, 2, (l) => l.replace(/"ts":"2/, '"ts":"3')),
    words: /line 2 was edited: its hash does not recompute; lines 1–1 verify/,
  },
  {
    name: "a middle line removed",
    damage: (text) => editLine(text, 2, () => "").replace("\n\n", "\n"),
    words:
      /line 2 is out of place \(its seq is wrong: lines removed or reordered\); lines 1–1 verify/,
  },
  {
    name: "a line's prev replaced",
    damage: (text) =>
      editLine(text, 3, (l) => l.replace(/"prev":"[0-9a-f]{64}"/, `"prev":"${"0".repeat(64)}"`)),
    words: /line 3 does not chain onto the line before it .*; lines 1–2 verify/,
  },
  {
    name: "a middle line that is not JSON",
    damage: (text) => editLine(text, 2, () => "not json"),
    words: /line 2 is not JSON; lines 1–1 verify/,
  },
  {
    name: "an empty file",
    damage: () => "",
    words: /its journal is empty: every row, its run_started first, was cut away/,
  },
  { name: "a missing file", damage: () => null, words: /its journal file is missing/ },
];

Deno.test("a stopped run whose journal is torn, edited, cut, emptied or missing is named unverified with the bad line and the way out by status, the runs list and service run, which refuses before it writes anything; the whole journal still resumes", async () => {
  await using dir = await tempDir();
  await using outside = await tempDir();
  const root = dir.path;
  const { runId, go } = await stoppedRun(root, outside.path);
  const journal = journalPath(workspacePaths(root), runId);
  const whole = await Deno.readTextFile(journal);
  for (const { name, damage, words } of DAMAGE) {
    const damaged = damage(whole);
    if (damaged === null) await Deno.remove(journal);
    else await Deno.writeTextFile(journal, damaged);

    const run = await statusRun(root);
    assert.equal(run.status, "unverified", name);
    assert.match(run.note, words, name);
    assert.doesNotMatch(`${run.note} ${run.fix}`, /resumes it/, name);
    assert.match(
      run.fix,
      /`service cancel --all` gives up its unfinished task\(s\) \(long\)/,
      name,
    );
    const listed = (await listRuns(workspacePaths(root))).find((r) => r.run_id === runId);
    if (damaged !== null) {
      assert.equal(listed?.status, "unverified", name);
      assert.match(listed!.journal_damage!.words, words, name);
    }
    await assert.rejects(runPlan({ root, ...quiet }), (e: Error) => {
      assert.ok(e instanceof RunError, `${name}: ${e.stack}`);
      assert.match(e.message, new RegExp(`run ${runId} cannot be resumed: .*${words.source}`));
      assert.match(e.fix ?? "", /`service cancel --all` .*then `service run plan.yaml`/);
      return true;
    }, name);
    if (damaged === null) assert.equal(await exists(journal), false, `${name}: nothing written`);
    else assert.equal(await Deno.readTextFile(journal), damaged, `${name}: nothing appended`);
  }

  // Whole again (the last line complete: a stop or a crash between rows): it resumes.
  await Deno.writeTextFile(journal, whole);
  const run = await statusRun(root);
  assert.equal(run.status, "stopped");
  assert.match(run.note, /`service run` resumes it/);
  await Deno.writeTextFile(go, "");
  const resumed = await runPlan({ root, ...quiet });
  assert.equal(resumed.status, "completed");
  assert.equal(resumed.runId, runId);
});

Deno.test("a hostile agent that appends to its live run's journal ends the run with the damage and the way out, not a stack; the agent running beside it is ended, its work left in its worktree", async () => {
  await using dir = await tempDir();
  await using outside = await tempDir();
  const [mark, pid] = [join(outside.path, "mark"), join(outside.path, "pid")];
  await workspace(dir.path, [{
    name: "s",
    steps: [
      {
        id: "forger",
        script: [
          ["run", `while [ ! -f ${mark} ]; do sleep 0.1; done`],
          // A host process can reach the run's files from its worktree (.sdd/worktrees/<id>).
          ["run", `for j in ../../runs/*/journal.jsonl; do echo '{"forged":true}' >> "$j"; done`],
          ["report", "forged"],
        ],
      },
      {
        id: "bystander",
        script: [
          ["write", "half.txt", "half done\n"],
          ["run", `echo $$ > ${pid}; touch ${mark}; sleep 120`],
          ["report", "never"],
        ],
      },
    ],
  }]);
  const env = runEnv({ SERVICE_KILL_GRACE_S: "1" });
  const err = await runPlan({ root: dir.path, ...quiet, env }).then(
    (r) => assert.fail(`the run must not end as if its journal were whole: ${JSON.stringify(r)}`),
    (e) => e,
  );
  assert.ok(err instanceof RunError, String(err?.stack ?? err));
  assert.match(
    err.message,
    /^run \S+ stopped: its journal \(\.sdd\/runs\/\S+\/journal\.jsonl\) stopped verifying while the run was live: line \d+ is not a journal row; lines 1–\d+ verify\. Something other than this run wrote to it — most likely an agent run as a host process/,
  );
  assert.match(
    err.fix ?? "",
    /cannot be resumed .*`service cancel --all` gives up its unfinished task\(s\) \(.*bystander/,
  );
  // status names the damage and the way out, and no wait of a run that cannot go on.
  const run = await statusRun(dir.path) as unknown as { status: string; waiting: object };
  assert.equal(run.status, "unverified");
  assert.deepEqual(run.waiting, {});
  const bystander = Number((await Deno.readTextFile(pid)).trim());
  await until("the bystander ended", () => Promise.resolve(!processAlive(bystander)), 30_000);
  const trees = join(dir.path, ".sdd", "worktrees");
  const kept = [];
  for await (const e of Deno.readDir(trees)) {
    if (await exists(join(trees, e.name, "half.txt"))) kept.push(e.name);
  }
  assert.equal(kept.length, 1, "the bystander's work stays in its worktree");
  // Another plan now: the way out never offers to resume a run whose journal does not verify.
  await Deno.writeTextFile(
    join(dir.path, "other.yaml"),
    planYaml([{ name: "o", steps: [{ id: "o1", script: [["report"]] }] }]),
  );
  const next = await runPlan({ root: dir.path, plan: "other.yaml", ...quiet }).then(
    () => assert.fail("a new plan must not start over the unfinished, unverified run"),
    (e) => e,
  );
  assert.ok(next instanceof RunError, String(next));
  assert.match(next.message, /cannot be resumed: its journal .* does not verify/);
  assert.doesNotMatch(next.fix ?? "", /`service run` resumes it/);
  assert.match(
    next.fix ?? "",
    /`service cancel --all` .* then `service run other\.yaml` starts a new run/,
  );
});

Deno.test("service cancel --all on a run whose journal is torn cancels in the task store, says the journal refused the row, and the next service run starts a new run that lands the step", async () => {
  await using dir = await tempDir();
  await using outside = await tempDir();
  const root = dir.path;
  const { runId, go } = await stoppedRun(root, outside.path);
  const journal = journalPath(workspacePaths(root), runId);
  const torn = (await Deno.readTextFile(journal)).slice(0, -20);
  await Deno.writeTextFile(journal, torn);

  const out: string[] = [];
  const code = await changeTasks(
    { root, stdout: (l) => out.push(l), stderr: (l) => out.push(l) },
    { kind: "cancel", ids: [], all: true },
  );
  assert.equal(code, 0, out.join("\n"));
  assert.match(out.join("\n"), /long: CANCELLED \(was ORPHANED\)/);
  assert.match(
    out.join("\n"),
    new RegExp(`not journaled: run ${runId}'s journal does not verify \\(its last line`),
  );
  assert.equal(await Deno.readTextFile(journal), torn, "the torn journal is kept as it was");

  await Deno.writeTextFile(go, "");
  const next = await runPlan({ root, ...quiet });
  assert.equal(next.status, "completed");
  assert.notEqual(next.runId, runId);
});

Deno.test("POST /tasks/<id>/cancel on a run whose journal is torn answers the cancelled task with not_journaled naming the damage, never a 500 after the store changed; the board page shows the run unverified with the torn line and never offers a resume", async () => {
  await using dir = await tempDir();
  await using outside = await tempDir();
  const root = dir.path;
  const { runId } = await stoppedRun(root, outside.path);
  const journal = journalPath(workspacePaths(root), runId);
  const torn = (await Deno.readTextFile(journal)).slice(0, -20);
  await Deno.writeTextFile(journal, torn);
  await using server = await serveBoard(root);
  const response = await fetch(`${server.url}/tasks/long/cancel`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ operator: true, reason: "its journal is torn" }),
  });
  const body = await response.json();
  assert.equal(response.status, 200, JSON.stringify(body));
  assert.equal(body.status, "CANCELLED");
  assert.match(
    body.not_journaled,
    new RegExp(`^not journaled: run ${runId}'s journal does not verify \\(its last line`),
  );
  assert.equal(await Deno.readTextFile(journal), torn);

  // The board page (drawn in the browser): the run is unverified, the stamp names the torn line,
  // and nothing on it says the run resumes.
  await using browser = await browserPage();
  const page = browser.page;
  await openRunPage(page, server.url, runId);
  assert.equal(await page.locator("[data-run-status]").innerText(), "unverified");
  assert.match(await page.locator("select[name=run] option").first().innerText(), /unverified/);
  assert.match(
    await page.locator("[data-journal-damage]").innerText(),
    /its last line \(\d+\) is torn: cut off before its end; lines 1–\d+ verify/,
  );
  assert.doesNotMatch(await page.locator("body").innerText(), /resumes it/);
});
