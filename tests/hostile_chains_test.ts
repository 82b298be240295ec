/**
 * Hostile state (docs/security.md "Two chains"): an edited diff, a crash between the audit and
 * the journal appends, and a journal edited then re-hashed so that it still recomputes. Each
 * is caught where a user looks: the review action, the board receipt, `audit verify`, `doctor`.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { sha256Hex } from "../lib/journal/hash.ts";
import { CLI, goldenWorkspace, rehashJournal } from "./helpers.ts";
import { loopbackServer } from "./_raw_http.ts";
import { appendAuditEntry, auditPaths, loadAuditKey } from "../lib/audit/store.ts";

async function cli(root: string, ...args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "--root", root, ...args],
    env: { NO_COLOR: "1", RUST_BACKTRACE: "0" },
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(60_000),
  }).output();
  const d = new TextDecoder();
  return { code: out.code, text: d.decode(out.stdout) + d.decode(out.stderr) };
}

async function served(root: string) {
  const server = await loopbackServer(root);
  return {
    url: server.url,
    review: (task: string, decision: string) =>
      fetch(`${server.url}/dashboard/review-board/runs/golden/tasks/${task}/review`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ decision }),
      }),
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

const lineCount = async (path: string) =>
  (await Deno.readTextFile(path).catch(() => "")).split("\n").filter(Boolean).length;

Deno.test("a review of an edited diff is refused (409 diff_unverified); an intact one binds the served bytes", async () => {
  await using ws = await goldenWorkspace();
  const journal = join(ws.runDir, "journal.jsonl");
  const audit = join(ws.path, ".sdd/audit/audit.jsonl");
  const diffFile = join(ws.runDir, "review/diffs/t-parser.diff");
  const original = await Deno.readFile(diffFile);
  await using server = await served(ws.path);

  await Deno.writeTextFile(diffFile, new TextDecoder().decode(original) + "+sneaked in\n");
  const before = await lineCount(journal);
  const refused = await server.review("t-parser", "approve");
  assert.equal(refused.status, 409);
  const body = await refused.json();
  assert.equal(body.error.code, "diff_unverified");
  assert.match(body.error.message, /edited after capture/);
  assert.equal(await lineCount(journal), before, "no journal row");
  assert.equal(await lineCount(audit), 0, "no audit entry");

  await Deno.remove(diffFile);
  const gone = await server.review("t-parser", "approve");
  assert.equal(gone.status, 409);
  assert.equal((await gone.json()).error.code, "diff_unverified");

  await Deno.writeFile(diffFile, original);
  const ok = await server.review("t-parser", "approve");
  assert.equal(ok.status, 200);
  const { receipt } = await ok.json();
  assert.equal(receipt.diff_sha256, "sha256:" + sha256Hex(original));
});

Deno.test("a crash between the audit append and the journal row is reported by audit verify and doctor", async () => {
  await using ws = await goldenWorkspace();
  await Deno.writeTextFile(join(ws.path, "service.yaml"), "cli: claude\nroles: [backend, docs]\n");
  const lib = (p: string) => new URL(`../lib/${p}`, import.meta.url).href;
  const script = join(ws.path, "crash.ts");
  // A process that dies by SIGKILL right after the audit entry is on disk.
  await Deno.writeTextFile(
    script,
    `import { recordReview } from "${lib("review/action.ts")}";
import { appContext } from "${lib("server/serve.ts")}";
import { auditPaths } from "${lib("audit/store.ts")}";
const ctx = appContext(${JSON.stringify(ws.path)}, []);
await recordReview({ decision: "approve" }, {
  runId: "golden", taskId: "t-docs", journalPath: ${
      JSON.stringify(join(ws.runDir, "journal.jsonl"))
    },
  audit: auditPaths(ctx.paths.audit), auditKey: ctx.auditKey, paths: ctx.paths,
  principal: { principal: "crash-test", scope: "operator" },
  afterAuditAppend: () => Deno.kill(Deno.pid, "SIGKILL"),
});
`,
  );
  const crashed = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--config", new URL("../deno.json", import.meta.url).pathname, script],
    env: { RUST_BACKTRACE: "0" },
    stdout: "null",
    stderr: "piped",
  }).output();
  assert.equal(crashed.signal, "SIGKILL", new TextDecoder().decode(crashed.stderr));
  assert.equal(await lineCount(join(ws.path, ".sdd/audit/audit.jsonl")), 1);

  const verify = await cli(ws.path, "audit", "verify");
  assert.equal(verify.code, 1, verify.text);
  assert.match(verify.text, /audit entry 0 \(approve on t-docs, run golden\) has no journal row/);
  assert.match(verify.text, /stopped between the two appends/);
  const doctor = await cli(ws.path, "doctor");
  assert.match(doctor.text, /has no journal row/);

  // The journal itself is intact: the board still verifies and a new review goes through.
  await using server = await served(ws.path);
  const receipt = await (await fetch(`${server.url}/review-board/runs/golden`)).json();
  assert.equal(receipt.journal_verified, true);
  assert.equal((await server.review("t-docs", "approve")).status, 200);
});

Deno.test("a journal edited and re-hashed after a review is caught: board, review, audit verify, doctor", async () => {
  await using ws = await goldenWorkspace();
  const journal = join(ws.runDir, "journal.jsonl");
  {
    await using server = await served(ws.path);
    assert.equal((await server.review("t-docs", "approve")).status, 200);
    assert.equal((await server.review("t-docs", "request_changes")).status, 200);
  }
  const reviewed = (await Deno.readTextFile(journal)).trim().split("\n").length;
  await rehashJournal(journal, 1, (row) => {
    row.data = { ...row.data, title: "Something else" };
  });

  await using server = await served(ws.path);
  const res = await fetch(`${server.url}/review-board/runs/golden`);
  const receipt = await res.json();
  assert.equal(receipt.journal_verified, false);
  assert.match(res.headers.get("x-journal-fault") ?? "", /row 14 of run golden .* re-hashed/);
  const refused = await server.review("t-docs", "approve");
  assert.equal(refused.status, 409);
  assert.equal((await refused.json()).error.code, "journal_poisoned");
  assert.equal((await Deno.readTextFile(journal)).trim().split("\n").length, reviewed);

  const verify = await cli(ws.path, "audit", "verify");
  assert.equal(verify.code, 1);
  // The first row that disagrees with the signed chain is named first.
  const first = verify.text.split("\n").find((l) => l.startsWith("MISMATCH"));
  assert.match(first ?? "", /row 14 of run golden chains onto .* audit entry 0 signed/);
  const doctor = await cli(ws.path, "doctor");
  assert.match(doctor.text, /row 14 of run golden/);
});

Deno.test("a review row whose principal and note were edited and re-hashed is caught: board names the row, review 409, audit verify and doctor", async () => {
  await using ws = await goldenWorkspace();
  const journal = join(ws.runDir, "journal.jsonl");
  {
    await using server = await served(ws.path);
    assert.equal((await server.review("t-docs", "approve")).status, 200);
  }
  const rows = (await Deno.readTextFile(journal)).trim().split("\n").map((l) => JSON.parse(l));
  const seq = rows.length - 1;
  assert.equal(rows[seq].type, "task_review_decision");
  // The row still chains onto the head its entry signed and cites it: only who and why changed.
  await rehashJournal(journal, seq, (row) => {
    row.data = { ...row.data, principal: "mallory", note: "approved after a careful read" };
  });

  await using server = await served(ws.path);
  const res = await fetch(`${server.url}/review-board/runs/golden`);
  assert.equal((await res.json()).journal_verified, false);
  const fault = res.headers.get("x-journal-fault") ?? "";
  assert.match(
    fault,
    new RegExp(`row ${seq} of run golden records principal mallory, note sha256:`),
  );
  assert.match(fault, /audit entry 0 signed principal dashboard-operator, note none/);
  const outline = await (await fetch(`${server.url}/review-board/runs/golden/tasks`)).json();
  assert.equal(outline.journal_verified, false);
  assert.equal(outline.audit_disagreement.row, seq);
  const refused = await server.review("t-docs", "merge");
  assert.equal(refused.status, 409);
  assert.equal((await refused.json()).error.code, "journal_poisoned");

  const verify = await cli(ws.path, "audit", "verify");
  assert.equal(verify.code, 1, verify.text);
  assert.match(
    verify.text,
    new RegExp(`MISMATCH: row ${seq} of run golden records principal mallory`),
  );
  const doctor = await cli(ws.path, "doctor");
  assert.match(doctor.text, new RegExp(`row ${seq} of run golden records principal mallory`));
});

Deno.test("a merge decision whose principal was removed and the journal re-hashed counts for nothing, and the edit is caught", async () => {
  await using ws = await goldenWorkspace();
  const journal = join(ws.runDir, "journal.jsonl");
  {
    await using server = await served(ws.path);
    assert.equal((await server.review("t-docs", "merge")).status, 200);
  }
  const rows = (await Deno.readTextFile(journal)).trim().split("\n").map((l) => JSON.parse(l));
  const seq = rows.length - 1;
  assert.equal(rows[seq].data.decision, "merge");
  await rehashJournal(journal, seq, (row) => {
    const { principal: _gone, ...data } = row.data;
    row.data = data;
  });

  await using server = await served(ws.path);
  const res = await fetch(`${server.url}/review-board/runs/golden`);
  const receipt = await res.json();
  assert.equal(receipt.journal_verified, false);
  assert.deepEqual(
    receipt.board.columns.needs_review.map((c: { task_id: string }) => c.task_id),
    ["t-docs"],
    "the decision moves no card",
  );
  const fault = res.headers.get("x-journal-fault") ?? "";
  assert.match(
    fault,
    new RegExp(
      `row ${seq} of run golden is a task_review_decision that counts for nothing ` +
        "\\(`principal` missing\\), but audit entry 0 signed it whole",
    ),
  );
  const outline = await (await fetch(`${server.url}/review-board/runs/golden/tasks`)).json();
  assert.equal(outline.audit_disagreement.row, seq);
  assert.equal(outline.ignored_rows.rows[0].index, seq);
  assert.equal(
    outline.tasks.find((t: { task_id: string }) => t.task_id === "t-docs").state,
    "needs_review",
  );

  const verify = await cli(ws.path, "audit", "verify");
  assert.equal(verify.code, 1, verify.text);
  assert.match(
    verify.text,
    new RegExp(`MISMATCH: row ${seq} of run golden is a task_review_decision`),
  );
  assert.doesNotMatch(verify.text, /has no journal row/, "the entry has its row: it was edited");
});

Deno.test("an evidence.sealed entry whose task_evidence_sealed row is missing (a crash between the appends) is reported by audit verify and doctor", async () => {
  await using ws = await goldenWorkspace();
  await Deno.writeTextFile(join(ws.path, "service.yaml"), "cli: claude\nroles: [backend, docs]\n");
  const paths = auditPaths(join(ws.path, ".sdd/audit"));
  // What sealing leaves when it stops after its first append: the signed entry, no row.
  await appendAuditEntry(paths, {
    event: "evidence.sealed",
    principal: "service",
    data: { run_id: "golden", task_id: "t-docs", core_sha256: "sha256:" + "0".repeat(64) },
  }, { key: await loadAuditKey(paths) });
  const verify = await cli(ws.path, "audit", "verify");
  assert.equal(verify.code, 1, verify.text);
  assert.match(
    verify.text,
    /audit entry 0 sealed the evidence of t-docs \(run golden\), but the journal has no task_evidence_sealed row/,
  );
  const doctor = await cli(ws.path, "doctor");
  assert.match(doctor.text, /sealed the evidence of t-docs/);
  // The journal itself is intact.
  await using server = await served(ws.path);
  assert.equal(
    (await (await fetch(`${server.url}/review-board/runs/golden`)).json()).journal_verified,
    true,
  );
});
