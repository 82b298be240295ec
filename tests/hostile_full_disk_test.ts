/**
 * A full disk, for real (docs/security.md "Durability"): each workspace sits on a small tmpfs
 * that a filler file fills up, so that the next write needing space fails with ENOSPC, at each
 * kind of write the service makes: the journal and the audit chain (a review action), a task
 * spec (create, claim), a JSONL state file (the verification ledger), a webhook ticket. Every
 * failed write answers 507 `insufficient_storage`, leaves the files byte for byte as they were
 * and shows nothing that was not written; once space is back everything works again. A disk that
 * fills between a merge's journal row and its task's store write (the crash drill's
 * `merge.journaled` point) is repaired from the journal by the next `service run`.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { appContext } from "../lib/server/serve.ts";
import { recordReview } from "../lib/review/action.ts";
import { crossCheckWorkspace } from "../lib/audit/workspace_check.ts";
import { verifyJournalText } from "../lib/journal/verify.ts";
import { appendEvents } from "../lib/journal/journal_file.ts";
import * as ev from "../lib/journal/events.ts";
import { appendAuditEntry, auditPaths } from "../lib/audit/store.ts";
import { appendStateLines } from "../lib/util/locked_append.ts";
import { writeFileAtomic } from "../lib/util/atomic_write.ts";
import { CLI, goldenWorkspace, runDeno } from "./helpers.ts";
import { loopbackServer } from "./_raw_http.ts";
import { testWorkspace } from "./_workspace.ts";
import { deliver, fixture, webhookWorkspace } from "./_webhooks.ts";
import { type SmallDisk, smallDisk, TMPFS_UNAVAILABLE } from "./_tmpfs.ts";
import { runPlan } from "../lib/runner/run.ts";
import { loadTaskSpecs } from "../lib/tasks/persist.ts";
import { setCrashHook } from "../lib/util/crash_points.ts";
import { workspacePaths } from "../lib/workspace.ts";
import { SERVER_APP } from "../routes/_app.ts";
import { sh, withEnv, workspace } from "./_e2e.ts";
import { startFakeGithub } from "./fakes/github_api.ts";

const ignore = TMPFS_UNAVAILABLE !== undefined;
const BIG_NOTE = "n".repeat(4000); // its row needs a page a full disk does not have

/** A real git repository holding a copy of the golden run, on `disk`. */
async function goldenRepo(disk: SmallDisk): Promise<{ root: string; journal: string }> {
  const ws = await goldenWorkspace(disk.path); // removed with the disk
  await Deno.writeTextFile(join(ws.path, "service.yaml"), "cli: claude\nroles: [backend, docs]\n");
  await new Deno.Command("git", { args: ["init", "-q", "-b", "main"], cwd: ws.path }).output();
  return { root: ws.path, journal: join(ws.runDir, "journal.jsonl") };
}

const auditVerify = (root: string) =>
  runDeno(["run", "-A", CLI, "--root", root, "audit", "verify"]);

const read = (path: string) => Deno.readFile(path).catch(() => new Uint8Array());

Deno.test({
  name:
    "a review on a full disk answers 507 and leaves the journal and the audit chain byte for byte as they were; the acknowledged merge stays; with space back it goes through",
  ignore,
  async fn() {
    await using disk = await smallDisk();
    const { root, journal } = await goldenRepo(disk);
    const audit = auditPaths(join(root, ".sdd/audit")).log;
    const server = await loopbackServer(root, { yaml: "" });
    await using _ = { [Symbol.asyncDispose]: () => server.shutdown() };
    const review = (decision: string, note?: string) =>
      fetch(`${server.url}/dashboard/review-board/runs/golden/tasks/t-docs/review`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ decision, note }),
      });
    const approved = await review("approve", "looks right");
    assert.equal(approved.status, 200, await approved.clone().text());
    await approved.body?.cancel();
    const merged = await review("merge");
    assert.equal(merged.status, 200);
    const { receipt } = await merged.json();

    const before = { journal: await read(journal), audit: await read(audit) };
    await disk.fill();
    // (A request for changes of merged work is refused before anything is written: 409.)
    const refused = await review("approve", BIG_NOTE);
    assert.equal(refused.status, 507);
    const body = await refused.json();
    assert.equal(body.error.code, "insufficient_storage");
    assert.match(body.error.message, /the disk is full .*nothing was recorded/);
    assert.deepEqual(await read(journal), before.journal, "the journal is as it was");
    assert.deepEqual(await read(audit), before.audit, "the audit chain is as it was");
    // Nothing acknowledged is lost, nothing poisoned: the merge decision is still the last row.
    const text = new TextDecoder().decode(await read(journal));
    assert.equal(verifyJournalText(text).verified, true);
    const last = JSON.parse(text.trim().split("\n").at(-1)!);
    assert.equal(last.hash, receipt.journal_entry_hash);
    assert.equal(last.data.decision, "merge");
    const board = await (await fetch(`${server.url}/review-board/runs/golden`)).json();
    assert.equal(board.journal_verified, true);

    await disk.free();
    const again = await review("approve", BIG_NOTE);
    assert.equal(again.status, 200, await again.clone().text());
    await again.body?.cancel();
    const verified = await auditVerify(root);
    assert.equal(verified.code, 0, verified.text);
    assert.match(verified.text, /audit chain intact, 3 entries/);
  },
});

Deno.test({
  name:
    "the audit key is never left empty by a full disk: the first review answers 507, and with space back it signs with a real key",
  ignore,
  async fn() {
    await using disk = await smallDisk();
    const { root } = await goldenRepo(disk);
    const keyFile = join(root, ".sdd/audit/key");
    const server = await loopbackServer(root, { yaml: "" });
    await using _ = { [Symbol.asyncDispose]: () => server.shutdown() };
    const review = () =>
      fetch(`${server.url}/dashboard/review-board/runs/golden/tasks/t-docs/review`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ decision: "approve" }),
      });
    await disk.fill();
    const refused = await review();
    assert.equal(refused.status, 507);
    assert.match(
      (await refused.json()).error.message,
      /cannot write .*\.sdd\/audit\/key: the disk is full/,
    );
    assert.equal(await Deno.stat(keyFile).then(() => "present", () => "absent"), "absent");

    await disk.free();
    const ok = await review();
    assert.equal(ok.status, 200);
    await ok.body?.cancel();
    assert.match(await Deno.readTextFile(keyFile), /^[0-9a-f]{64}\n$/);
    const verified = await auditVerify(root);
    assert.equal(verified.code, 0, verified.text);
  },
});

Deno.test({
  name:
    "a review whose journal row cannot be written takes its audit entry back: no receipt, no torn line, no entry without its row",
  ignore,
  async fn() {
    await using disk = await smallDisk();
    const { root, journal } = await goldenRepo(disk);
    const ctx = appContext(root, []);
    const review = (afterAuditAppend?: () => Promise<void>) =>
      recordReview({ decision: "approve", note: BIG_NOTE }, {
        runId: "golden",
        taskId: "t-docs",
        journalPath: journal,
        audit: auditPaths(ctx.paths.audit),
        auditKey: ctx.auditKey,
        paths: ctx.paths,
        principal: { principal: "alice", scope: "operator" },
        afterAuditAppend,
      });
    await review(); // the audit chain starts vouching for the run
    const before = {
      journal: await read(journal),
      audit: await read(auditPaths(ctx.paths.audit).log),
    };

    // The audit entry lands; then the disk fills before the journal row is written.
    await assert.rejects(review(() => disk.fill()), (e: { code?: string }) => {
      assert.equal(e.code, "insufficient_storage");
      return true;
    });
    assert.deepEqual(await read(journal), before.journal, "no torn journal line");
    assert.deepEqual(await read(auditPaths(ctx.paths.audit).log), before.audit, "entry taken back");
    assert.deepEqual((await crossCheckWorkspace(ctx.paths)).findings, []);

    await disk.free();
    const { receipt } = await review();
    assert.equal(receipt.principal, "alice");
    assert.deepEqual((await crossCheckWorkspace(ctx.paths)).findings, []);
  },
});

const TASK = { title: "A task", role: "backend" };

/** A workspace with one role, on the small disk. */
const backendWorkspace = (disk: SmallDisk) =>
  testWorkspace({ parent: disk.path, config: "cli: claude\nroles: [backend]\n" });

Deno.test({
  name:
    "task specs on a full disk: a create answers 507 and shows no task (its id stays free), a claim answers 507 and changes nothing",
  ignore,
  async fn() {
    await using disk = await smallDisk();
    await using ws = await backendWorkspace(disk);
    assert.equal((await ws.call("POST", "/tasks", { ...TASK, id: "t0" })).status, 201);
    const spec = join(ws.root, ".sdd/backlog/open/t0.yaml");
    const before = await read(spec);
    await disk.fill();

    const single = await ws.call("POST", "/tasks", { ...TASK, id: "t1" });
    assert.equal(single.status, 507);
    assert.equal(single.body.error.code, "insufficient_storage");
    const batch = await ws.call("POST", "/tasks", {
      tasks: [{ ...TASK, id: "t2" }, { ...TASK, id: "t3", depends_on: ["t2"] }],
    });
    assert.equal(batch.status, 507);
    const listed = (await ws.call("GET", "/tasks")).body.tasks.map((t: { id: string }) => t.id);
    assert.deepEqual(listed, ["t0"], "a task that was not written is not shown");
    assert.equal((await ws.call("GET", "/tasks/t1")).status, 404);
    const specs = await Array.fromAsync(Deno.readDir(join(ws.root, ".sdd/backlog/open")));
    assert.deepEqual(specs.map((e) => e.name), ["t0.yaml"], "no spec, no temporary file left");

    const claim = await ws.call("POST", "/tasks/t0/claim", { session_id: "s1" });
    assert.equal(claim.status, 507);
    assert.equal((await ws.call("GET", "/tasks/t0")).body.status, "OPEN");
    assert.deepEqual(await read(spec), before, "the spec is as it was");
    assert.equal((await ws.call("POST", "/tasks/next?role=backend", {})).status, 507);
    assert.equal((await ws.call("GET", "/tasks/t0")).body.status, "OPEN", "still ready");

    await disk.free();
    assert.equal((await ws.call("POST", "/tasks", { ...TASK, id: "t1" })).status, 201);
    const claimed = await ws.call("POST", "/tasks/next?role=backend", { session_id: "s1" });
    assert.equal(claimed.status, 200);
    assert.equal(claimed.body.id, "t0");
    assert.equal(claimed.body.status, "CLAIMED");
  },
});

/** A ledger record line padded (by its session id) to exactly `length` bytes. */
function paddedRecord(length: number): string {
  const line = (pad: string) =>
    JSON.stringify({
      task_id: "earlier",
      session_id: pad,
      timestamp: 1,
      tests_run: true,
      quality_gates_run: false,
      completion_signals_checked: false,
      verified: true,
    }) + "\n";
  return line("s".repeat(length - line("").length));
}

Deno.test({
  name:
    "a JSONL state file on a full disk: a completion whose ledger record cannot be appended answers 507, cuts the torn bytes back, and changes nothing",
  ignore,
  async fn() {
    await using disk = await smallDisk();
    await using ws = await backendWorkspace(disk);
    assert.equal((await ws.call("POST", "/tasks", { ...TASK, id: "t0" })).status, 201);
    assert.equal((await ws.call("POST", "/tasks/t0/claim", { session_id: "s1" })).status, 200);
    // The ledger's last page has 40 bytes left: a record starts there and cannot finish.
    const ledger = join(ws.root, ".sdd/metrics/verification_nudges.jsonl");
    await Deno.mkdir(join(ws.root, ".sdd/metrics"), { recursive: true });
    await Deno.writeTextFile(ledger, paddedRecord(4096 - 40));
    const before = await read(ledger);
    await disk.fill();

    const done = await ws.call("POST", "/tasks/t0/complete", { summary: "did it" });
    assert.equal(done.status, 507);
    assert.equal(done.body.error.code, "insufficient_storage");
    assert.deepEqual(await read(ledger), before, "the ledger is byte for byte as it was");
    assert.equal((await ws.call("GET", "/tasks/t0")).body.status, "CLAIMED");
    const status = (await ws.call("GET", "/status")).body;
    assert.equal(status.verification_nudge.total_completions, 1, "only the earlier record");

    await disk.free();
    assert.equal((await ws.call("POST", "/tasks/t0/complete", { summary: "did it" })).status, 200);
    const lines = (await Deno.readTextFile(ledger)).trim().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(lines.map((l) => l.task_id), ["earlier", "t0"]);
  },
});

Deno.test({
  name:
    "a webhook ticket whose task could not be written on a full disk gets its deterministic id when the tracker redelivers",
  ignore,
  async fn() {
    await using disk = await smallDisk();
    await using ws = await webhookWorkspace("", { parent: disk.path });
    const secret = ws.secret("tracker_b");
    // The receiver, its ledger and the task store are open before the disk fills.
    assert.equal((await ws.call("GET", "/tasks")).status, 200);
    const warmUp = await deliver(ws, "tracker_b", {
      body: "{}",
      secret,
      id: "warm-up",
    });
    assert.equal(warmUp.status, 200);
    const body = await fixture("github_issues_opened.json");
    await disk.fill();

    const failed = await deliver(ws, "tracker_b", { body, secret, id: "delivery-1" });
    assert.ok(
      failed.status >= 500,
      `the tracker must redeliver (got ${failed.status}: ${JSON.stringify(failed.body)})`,
    );
    assert.deepEqual((await ws.call("GET", "/tasks")).body.tasks, []);

    await disk.free();
    const redelivered = await deliver(ws, "tracker_b", { body, secret, id: "delivery-1" });
    assert.equal(redelivered.status, 200, JSON.stringify(redelivered.body));
    assert.deepEqual(redelivered.body.tickets, [{
      ref: "octo-org/app#42",
      action: "created",
      task_id: "tracker_b-octo-org-app-42",
    }]);
    const ids = (await ws.call("GET", "/tasks")).body.tasks.map((t: { id: string }) => t.id);
    assert.deepEqual(ids, ["tracker_b-octo-org-app-42"]);
  },
});

/**
 * The write primitives, one kind per row: each starts from a file whose last page has 40 bytes
 * left, so that a full disk takes the first bytes of the write and refuses the rest.
 */
const PRIMITIVES: {
  kind: string;
  /** Write `pad` more bytes than the shortest write of this kind. */
  write: (path: string, pad: number) => Promise<unknown>;
}[] = [
  {
    kind: "journal append (appendEvents)",
    write: (path, pad) =>
      appendEvents(path, [ev.runStarted({ run_id: "r", plan: "p".repeat(pad) })]),
  },
  {
    kind: "audit chain append (appendAuditEntry)",
    write: (path, pad) =>
      appendAuditEntry({ log: path, keyFile: `${path}.key` }, {
        event: "test",
        principal: "p",
        data: { pad: "p".repeat(pad) },
      }, { key: new TextEncoder().encode("k") }),
  },
  {
    kind: "JSONL state append (appendStateLines)",
    write: (path, pad) => appendStateLines(path, JSON.stringify({ pad: "p".repeat(pad) }) + "\n"),
  },
  {
    kind: "whole-file write (writeFileAtomic)",
    write: (path, pad) => writeFileAtomic(path, "p".repeat(pad + 1)),
  },
];

for (const { kind, write } of PRIMITIVES) {
  Deno.test({
    name:
      `${kind} on a full disk throws StorageFullError and leaves the file byte for byte as it was`,
    ignore,
    async fn() {
      await using disk = await smallDisk(1024 * 1024);
      const dir = join(disk.path, "state");
      await Deno.mkdir(dir);
      const path = join(dir, "file.jsonl");
      // Grow the file to 40 bytes short of a page with writes of this very kind.
      await write(path, 0);
      const one = (await Deno.stat(path)).size;
      await Deno.remove(path);
      await write(path, 4096 - 40 - one);
      assert.equal((await Deno.stat(path)).size % 4096, 4096 - 40);
      const before = await read(path);
      await disk.fill();

      await assert.rejects(write(path, 500), (e: { code?: string; message: string }) => {
        assert.equal(e.code, "insufficient_storage", e.message);
        assert.match(e.message, new RegExp(`cannot write ${path}: the disk is full`));
        return true;
      });
      assert.deepEqual(await read(path), before);
      const left = (await Array.fromAsync(Deno.readDir(dir))).map((e) => e.name);
      assert.deepEqual(left.filter((n) => n.includes(".tmp-")), [], "no temporary file left");

      await disk.free();
      await write(path, 500);
    },
  });
}

/** Run `root`'s plan in this process with the disk filled right after `task_merged` is durable. */
async function runFilledAfterMerge(root: string, disk: SmallDisk) {
  setCrashHook(async (point) => {
    if (point === "merge.journaled") await disk.fill();
  });
  const lines: string[] = [];
  const stop = new AbortController();
  const limit = setTimeout(() => stop.abort(), 120_000);
  try {
    const result = await runPlan({
      root,
      port: 0,
      app: SERVER_APP,
      signal: stop.signal,
      out: (l) => lines.push(l),
    });
    return { lines, result, error: undefined };
  } catch (error) {
    return { lines, result: undefined, error: error as Error };
  } finally {
    clearTimeout(limit);
    setCrashHook(undefined);
    await disk.free();
    assert.equal(
      stop.signal.aborted,
      false,
      `the run on a full disk never ended:\n${lines.join("\n")}`,
    );
  }
}

/** Every row of `type` in every run of the workspace (each journal verified). */
async function rowsOfType(root: string, type: string) {
  const rows = [];
  for await (const run of Deno.readDir(join(root, ".sdd/runs"))) {
    const text = await Deno.readTextFile(join(root, ".sdd/runs", run.name, "journal.jsonl"));
    const journal = verifyJournalText(text);
    assert.equal(journal.verified, true, `the journal of ${run.name} verifies`);
    rows.push(...journal.rows.map((r) => r.row).filter((r) => r.type === type));
  }
  return rows;
}

const storeStatus = async (root: string, id: string) =>
  (await loadTaskSpecs(workspacePaths(root))).tasks.find((t) => t.id === id)?.status;

const F1_PLAN = [{
  name: "s",
  steps: [{ id: "f1", script: [["write", "f1.txt", "f1\n"], ["report", "f1 done"]] }],
}];

/** The first run merged f1 and could not record it: the journal says merged, the store DONE. */
async function assertMergedButUnrecorded(root: string, first: { lines: string[] }) {
  const terminal = first.lines.join("\n");
  assert.equal((await rowsOfType(root, "task_merged")).length, 1, terminal);
  assert.equal(await storeStatus(root, "f1"), "DONE", "the store could not record the merge");
  assert.match(
    terminal,
    /f1: merged, but the task store could not record it: cannot write .*: the disk is full/,
  );
  assert.doesNotMatch(terminal, /DONE outside this run/, "the run does not deny its own merge");
}

/** The second run closes f1 from the journal, says so, and starts nothing. */
async function assertRepairedNotRunAgain(root: string, how: RegExp) {
  const lines: string[] = [];
  const again = await runPlan({ root, port: 0, app: SERVER_APP, out: (l) => lines.push(l) });
  const terminal = lines.join("\n");
  assert.match(terminal, how);
  assert.equal(again.upToDate, true, terminal);
  assert.match(terminal, /nothing to do: all 1 step\(s\) of plan\.yaml already landed \(f1 in /);
  assert.equal(await storeStatus(root, "f1"), "CLOSED");
  assert.equal((await rowsOfType(root, "task_merged")).length, 1, "merged once");
  assert.equal((await rowsOfType(root, "task_claimed")).length, 1, "no agent ran it again");
  const runs = await Array.fromAsync(Deno.readDir(join(root, ".sdd/runs")));
  assert.equal(runs.length, 1, "no new run");
}

Deno.test({
  name:
    "a full disk right after a merge: the task store cannot record it; the next `service run` closes the task from the journal, says what it repaired, and neither runs nor merges it again",
  ignore,
  async fn() {
    await using disk = await smallDisk(32 * 1024 * 1024);
    const root = join(disk.path, "ws");
    await Deno.mkdir(root);
    await workspace(root, F1_PLAN);
    const first = await runFilledAfterMerge(root, disk);
    await assertMergedButUnrecorded(root, first);
    const before = await sh(root, "rev-parse", "main");

    await assertRepairedNotRunAgain(
      root,
      /repaired: f1 was merged as [0-9a-f]{10} \(journal seq \d+ of run-\S+\) but the task store said DONE; it is CLOSED now and is not run again/,
    );
    assert.equal(await sh(root, "rev-parse", "main"), before, "nothing merged again");
    const merges = (await sh(root, "rev-list", "--merges", "main")).trim().split("\n");
    assert.equal(merges.length, 1, "one merge commit");
  },
});

Deno.test({
  name:
    "a full disk right after a pull request merged: the next `service run` closes the task from the journal, says so, and opens no second pull request",
  ignore,
  async fn() {
    await using disk = await smallDisk(32 * 1024 * 1024);
    const root = join(disk.path, "ws");
    await Deno.mkdir(root);
    await workspace(root, F1_PLAN);
    await using fake = await startFakeGithub(root);
    await sh(root, "remote", "add", "origin", fake.bare);
    const tokenEnv = `FAKE_GH_TOKEN_${crypto.randomUUID().slice(0, 8).toUpperCase()}`;
    await Deno.writeTextFile(
      join(root, "service.yaml"),
      `landing:\n  mode: pull_request\n  provider: github\n  api_url: ${fake.url}\n` +
        `  repo: acme/widget\n  token_env: ${tokenEnv}\n  poll_interval_s: 1\n`,
      { append: true },
    );
    using _token = withEnv({ [tokenEnv]: "gh-token" });

    const first = await runFilledAfterMerge(root, disk);
    await assertMergedButUnrecorded(root, first);
    assert.equal(fake.pulls().length, 1);

    await assertRepairedNotRunAgain(
      root,
      /repaired: f1 was merged through https:\/\/\S+\/pull\/1 \(journal seq \d+ of run-\S+\) but the task store said DONE; it is CLOSED now/,
    );
    assert.equal(fake.pulls().length, 1, "no second pull request");
    assert.equal(
      fake.requests.filter((r) => /^PUT .*\/merge$/.test(r)).length,
      1,
      "merged once on the host",
    );
  },
});
