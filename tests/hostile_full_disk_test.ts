/**
 * A full disk, for real (docs/security.md "Durability"): each workspace sits on a small tmpfs
 * that a filler file fills up, so that the next write needing space fails with ENOSPC, at each
 * kind of write the service makes: the journal and the audit chain (a review action), a task
 * spec (create, claim), a JSONL state file (the verification ledger), a webhook ticket. Every
 * failed write answers 507 `insufficient_storage`, leaves the files byte for byte as they were
 * and shows nothing that was not written; once space is back everything works again.
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
    for (const decision of ["approve", "request_changes"]) {
      const refused = await review(decision, BIG_NOTE);
      assert.equal(refused.status, 507, decision);
      const body = await refused.json();
      assert.equal(body.error.code, "insufficient_storage");
      assert.match(body.error.message, /the disk is full .*nothing was recorded/);
      assert.deepEqual(await read(journal), before.journal, "the journal is as it was");
      assert.deepEqual(await read(audit), before.audit, "the audit chain is as it was");
    }
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
      appendAuditEntry({ log: path, keyFile: `${path}.key` }, new TextEncoder().encode("k"), {
        event: "test",
        principal: "p",
        data: { pad: "p".repeat(pad) },
      }),
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
