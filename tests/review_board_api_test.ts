/** In-process tests of the review-board JSON API (app.request, no port). */
import assert from "node:assert/strict";
import { join } from "node:path";
import { createApp } from "../routes/_app.ts";
import { appContext } from "../lib/server/serve.ts";
import type { TokenSpec } from "../lib/auth/tokens.ts";
import { verifyJournalText } from "../lib/journal/verify.ts";
import { verifyAuditText } from "../lib/audit/chain.ts";
import { canonicalJson } from "../lib/journal/canonical_json.ts";
import { sha256Hex } from "../lib/journal/hash.ts";
import { GOLDEN_DIR, goldenWorkspace } from "./helpers.ts";
import { producerRun, sealSample } from "../lib/verification/_test_fixtures.ts";
import { workspacePaths } from "../lib/workspace.ts";
import { appendEvents } from "../lib/journal/journal_file.ts";
import { taskClaimed, taskVerificationFailed } from "../lib/journal/events.ts";

const expected = JSON.parse(await Deno.readTextFile(join(GOLDEN_DIR, "expected.json")));

function appFor(root: string, tokens: TokenSpec[] = []) {
  return createApp(appContext(root, tokens));
}

function review(
  app: ReturnType<typeof appFor>,
  task: string,
  body: unknown,
  headers: Record<string, string> = {},
) {
  return app.request(`/dashboard/review-board/runs/golden/tasks/${task}/review`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

Deno.test("GET /review-board/runs/<id> answers the receipt the independent writer expects", async () => {
  await using ws = await goldenWorkspace();
  const res = await appFor(ws.path).request("/review-board/runs/golden");
  assert.equal(res.status, 200);
  const receipt = await res.json();
  assert.deepEqual(
    [
      receipt.run_id,
      receipt.projection_hash,
      receipt.journal_head,
      receipt.journal_verified,
      receipt.event_count,
    ],
    ["golden", expected.projection_hash, expected.journal_head, true, 14],
  );
  assert.equal(
    canonicalJson(receipt.board),
    await Deno.readTextFile(join(GOLDEN_DIR, "board.canonical.json")),
  );
});

Deno.test("GET /review-board/runs lists runs with head and envelope", async () => {
  await using ws = await goldenWorkspace();
  const body = await (await appFor(ws.path).request("/review-board/runs")).json();
  assert.equal(body.runs.length, 1);
  assert.deepEqual(Object.keys(body.runs[0]).sort(), [
    "cancelled",
    "completed",
    "counts",
    "event_count",
    "failed",
    "journal_head",
    "journal_verified",
    "run_id",
    "started",
    "status",
  ]);
  assert.equal(body.runs[0].journal_head, expected.journal_head);
  // The golden run's last run_completed says how it ended; the list repeats it.
  assert.equal(body.runs[0].status, "completed");
});

Deno.test("a tampered journal still projects, with journal_verified false", async () => {
  await using ws = await goldenWorkspace();
  const path = join(ws.runDir, "journal.jsonl");
  await Deno.writeTextFile(
    path,
    (await Deno.readTextFile(path)).replace("Write the parser", "Write the parsed"),
  );
  const receipt = await (await appFor(ws.path).request("/review-board/runs/golden")).json();
  assert.equal(receipt.journal_verified, false);
  assert.equal(receipt.board.columns.merged[0].title, "Write the parsed");
});

Deno.test("GET .../diff/<task> is verified only when the stored bytes re-hash to the chained capture", async () => {
  await using ws = await goldenWorkspace();
  const app = appFor(ws.path);
  const ok = await (await app.request("/review-board/runs/golden/diff/t-parser")).json();
  assert.deepEqual([ok.verified, ok.added, ok.removed, ok.files], [true, 2, 0, ["parser.ts"]]);
  assert.match(ok.diff_text, /^diff --git a\/parser.ts/);
  await Deno.writeTextFile(
    join(ws.runDir, "review/diffs/t-parser.diff"),
    ok.diff_text + "+sneaky\n",
  );
  const edited = await (await app.request("/review-board/runs/golden/diff/t-parser")).json();
  assert.equal(edited.verified, false);
  assert.equal(edited.sha256, ok.sha256);
});

Deno.test("GET .../diff/<task> is 404 no_diff_captured without a capture row and diff_file_missing when the file is gone", async () => {
  await using ws = await goldenWorkspace();
  const app = appFor(ws.path);
  const none = await app.request("/review-board/runs/golden/diff/t-docs");
  assert.equal(none.status, 404);
  assert.equal((await none.json()).error.code, "no_diff_captured");
  await Deno.remove(join(ws.runDir, "review/diffs/t-parser.diff"));
  const gone = await app.request("/review-board/runs/golden/diff/t-parser");
  assert.equal(gone.status, 404);
  const body = await gone.json();
  assert.equal(body.error.code, "diff_file_missing");
  assert.match(body.error.message, /sha256:9d06fe0a/);
});

Deno.test("GET .../evidence/<task> is 404 when no evidence producers were declared, else the sealed bundle with bundle_hash recomputed and verified", async () => {
  await using ws = await goldenWorkspace();
  const app = appFor(ws.path);
  const url = "/review-board/runs/golden/evidence/t-parser";
  const res = await app.request(url);
  assert.equal(res.status, 404);
  assert.equal((await res.json()).error.code, "no_evidence_producers");
  const sealed = await sealSample(workspacePaths(ws.path), {
    runId: "golden",
    taskId: "t-parser",
    producers: [producerRun("tests", "ok | 1 passed | 0 failed (1ms)\n")],
  });
  const served = await (await app.request(url)).json();
  assert.equal(served.verified, true, served.problems.join("; "));
  assert.equal(served.bundle_hash, sealed.bundle_hash);
  const { bundle_hash: _h, ...rest } = sealed;
  assert.equal(served.bundle_hash, "sha256:" + sha256Hex(canonicalJson(rest)));
  // An edited bundle is still served, as unverified (never an error page).
  const path = join(ws.runDir, "evidence/t-parser/bundle.json");
  await Deno.writeTextFile(
    path,
    (await Deno.readTextFile(path)).replace('"exit_code":0', '"exit_code":2'),
  );
  const edited = await app.request(url);
  assert.equal(edited.status, 200);
  assert.equal((await edited.json()).verified, false);
  // Hostile ids never reach the file system.
  for (
    const [path, status] of [
      ["/review-board/runs/golden/evidence/..%2F..%2Faudit", 400],
      ["/review-board/runs/golden/evidence/%2Fetc%2Fpasswd", 400],
      ["/review-board/runs/..%2Fgolden/evidence/t-parser", 400],
      ["/review-board/runs/nope/evidence/t-parser", 404],
    ] as const
  ) {
    const res = await app.request(path);
    assert.equal(res.status, status, path);
    assert.match((await res.json()).error.code, /^[a-z_]+$/);
  }
});

Deno.test("POST review appends a chained decision and a signed audit entry, and answers the receipt and new board", async () => {
  await using ws = await goldenWorkspace();
  const app = appFor(ws.path);
  const res = await review(app, "t-docs", { decision: "approve", note: "looks right" });
  assert.equal(res.status, 200);
  const { receipt, board } = await res.json();
  assert.equal(receipt.decision, "approve");
  assert.equal(receipt.principal, "dashboard-operator");
  assert.equal(receipt.scope, "operator");
  assert.equal(receipt.projection_hash, expected.projection_hash);
  assert.equal(receipt.journal_head, expected.journal_head);
  const journal = verifyJournalText(await Deno.readTextFile(join(ws.runDir, "journal.jsonl")));
  assert.equal(journal.verified, true);
  const last = journal.rows.at(-1)!.row;
  assert.equal(last.type, "task_review_decision");
  assert.equal(last.hash, receipt.journal_entry_hash);
  assert.equal(last.prev, expected.journal_head);
  assert.equal(last.data.audit_event_hash, receipt.audit_event_hash);
  const auditText = await Deno.readTextFile(join(ws.path, ".sdd/audit/audit.jsonl"));
  assert.equal(sha256Hex(auditText.trimEnd()), receipt.audit_event_hash);
  const key = new TextEncoder().encode(
    (await Deno.readTextFile(join(ws.path, ".sdd/audit/key"))).trim(),
  );
  assert.equal(verifyAuditText(key, auditText).ok, true);
  const entry = JSON.parse(auditText);
  assert.equal(entry.data.projection_hash, expected.projection_hash);
  assert.equal(entry.data.journal_head, expected.journal_head);
  assert.equal((await Deno.stat(join(ws.path, ".sdd/audit/key"))).mode! & 0o777, 0o600);
  assert.equal(board.journal_head, receipt.journal_entry_hash);
  assert.deepEqual(board.board.columns.needs_review[0].verdict, {
    decision: "approve",
    principal: "dashboard-operator",
    index: 14,
    note: "looks right",
  });
});

Deno.test("POST review with decision merge moves the card to merged and binds the diff hash", async () => {
  await using ws = await goldenWorkspace();
  const app = appFor(ws.path);
  await review(app, "t-docs", { decision: "merge" });
  const receipt = await (await app.request("/review-board/runs/golden")).json();
  assert.deepEqual(receipt.board.columns.merged.map((c: { task_id: string }) => c.task_id), [
    "t-parser",
    "t-docs",
  ]);
  assert.deepEqual(receipt.board.columns.needs_review, []);
});

async function snapshotState(root: string) {
  const read = (p: string) => Deno.readTextFile(join(root, p)).catch(() => "<absent>");
  return [await read(".sdd/runs/golden/journal.jsonl"), await read(".sdd/audit/audit.jsonl")];
}

Deno.test("POST review refuses bad requests and writes nothing", async () => {
  await using ws = await goldenWorkspace();
  const app = appFor(ws.path);
  const before = await snapshotState(ws.path);
  const cases: [string, unknown, number, string][] = [
    ["t-docs", "{not json", 400, "invalid_json"],
    ["t-docs", { decision: "reject" }, 422, "invalid_review"],
    ["t-docs", {}, 422, "invalid_review"],
    ["t-docs", { decision: "approve", note: 5 }, 422, "invalid_review"],
    ["t-docs", { decision: "approve", extra: true }, 422, "invalid_review"],
    ["t-docs", { decision: "approve", note: "x".repeat(4001) }, 422, "invalid_review"],
    ["t-unknown", { decision: "approve" }, 404, "unknown_task"],
    ["t-ghost", { decision: "approve" }, 404, "unknown_task"],
    // t-parser is under merged by a merge decision: a second one has nothing to act on
    ["t-parser", { decision: "merge" }, 409, "merge_pending"],
  ];
  for (const [task, body, status, code] of cases) {
    const res = await review(app, task, body);
    assert.equal(res.status, status, `${task} ${JSON.stringify(body)}`);
    assert.equal((await res.json()).error.code, code);
  }
  assert.deepEqual(await snapshotState(ws.path), before);
});

Deno.test("POST review on a poisoned journal is 409 and writes nothing anywhere", async () => {
  await using ws = await goldenWorkspace();
  const path = join(ws.runDir, "journal.jsonl");
  await Deno.writeTextFile(path, (await Deno.readTextFile(path)).replace('"s-02"', '"s-99"'));
  const before = await snapshotState(ws.path);
  const res = await review(appFor(ws.path), "t-docs", { decision: "approve" });
  assert.equal(res.status, 409);
  assert.equal((await res.json()).error.code, "journal_poisoned");
  assert.deepEqual(await snapshotState(ws.path), before);
});

Deno.test("POST review on a broken audit chain is 409 and appends no journal row", async () => {
  await using ws = await goldenWorkspace();
  const app = appFor(ws.path);
  assert.equal((await review(app, "t-docs", { decision: "approve" })).status, 200);
  const audit = join(ws.path, ".sdd/audit/audit.jsonl");
  await Deno.writeTextFile(audit, (await Deno.readTextFile(audit)).replace('"approve"', '"merge"'));
  const before = await snapshotState(ws.path);
  const res = await review(app, "t-docs", { decision: "approve" });
  assert.equal(res.status, 409);
  assert.equal((await res.json()).error.code, "audit_chain_broken");
  assert.deepEqual(await snapshotState(ws.path), before);
});

Deno.test("POST review with a stale If-Match is 412 and writes nothing; the current one succeeds", async () => {
  await using ws = await goldenWorkspace();
  const app = appFor(ws.path);
  const before = await snapshotState(ws.path);
  const stale = await review(app, "t-docs", { decision: "approve" }, {
    "if-match": `"${"0".repeat(64)}"`,
  });
  assert.equal(stale.status, 412);
  assert.deepEqual(await snapshotState(ws.path), before);
  const fresh = await review(app, "t-docs", { decision: "approve" }, {
    "if-match": `"${expected.projection_hash}"`,
  });
  assert.equal(fresh.status, 200);
});

/** `If-Match` values a client sends on a review of the untouched golden board, and the answer. */
const IF_MATCH_CASES: { name: string; header: string; status: 200 | 412 }[] = [
  { name: "any board (`*`, RFC 9110)", header: "*", status: 200 },
  {
    name: "a list holding the current hash",
    header: `"${"0".repeat(64)}", "CURRENT"`,
    status: 200,
  },
  { name: "a list without it", header: `"${"0".repeat(64)}", "${"1".repeat(64)}"`, status: 412 },
  {
    name: "the current hash as a weak tag (If-Match compares strongly)",
    header: 'W/"CURRENT"',
    status: 412,
  },
  { name: "the current hash unquoted, as typed by hand", header: "CURRENT", status: 200 },
  { name: "an empty tag", header: '""', status: 412 },
];

Deno.test("POST review: If-Match `*` and lists match as RFC 9110 says, a weak tag never does, and a refusal writes nothing", async () => {
  for (const c of IF_MATCH_CASES) {
    await using ws = await goldenWorkspace();
    const app = appFor(ws.path);
    const before = await snapshotState(ws.path);
    const res = await review(app, "t-docs", { decision: "approve" }, {
      "if-match": c.header.replace("CURRENT", expected.projection_hash),
    });
    assert.equal(res.status, c.status, `${c.name}: ${await res.clone().text()}`);
    if (c.status === 412) {
      assert.equal((await res.json()).error.code, "board_moved", c.name);
      assert.deepEqual(await snapshotState(ws.path), before, c.name);
    }
  }
});

Deno.test("24 simultaneous review actions all succeed and leave one linear chain", async () => {
  await using ws = await goldenWorkspace();
  const app = appFor(ws.path);
  const results = await Promise.all(
    Array.from(
      { length: 24 },
      (_, i) => review(app, i % 2 ? "t-docs" : "t-parser", { decision: "approve", note: `#${i}` }),
    ),
  );
  assert.deepEqual(results.map((r) => r.status), Array(24).fill(200));
  const journal = verifyJournalText(await Deno.readTextFile(join(ws.runDir, "journal.jsonl")));
  assert.equal(journal.verified, true);
  assert.equal(journal.rowCount, 14 + 24);
  const auditText = await Deno.readTextFile(join(ws.path, ".sdd/audit/audit.jsonl"));
  const key = new TextEncoder().encode(
    (await Deno.readTextFile(join(ws.path, ".sdd/audit/key"))).trim(),
  );
  assert.equal(verifyAuditText(key, auditText).entries, 24);
});

Deno.test("with tokens configured: reads need a valid token (401), actions need scope operator (403, nothing written)", async () => {
  await using ws = await goldenWorkspace();
  const suffix = crypto.randomUUID().replaceAll("-", "").slice(0, 8).toUpperCase();
  const readerEnv = `SERVICE_TEST_READER_${suffix}`, opEnv = `SERVICE_TEST_OP_${suffix}`;
  Deno.env.set(readerEnv, "reader-secret");
  Deno.env.set(opEnv, "operator-secret");
  try {
    const app = appFor(ws.path, [
      { principal: "rita", scope: "reader", token_env: readerEnv },
      { principal: "olga", scope: "operator", token_env: opEnv },
    ]);
    assert.equal((await app.request("/review-board/runs/golden")).status, 401);
    assert.equal((await app.request("/status")).status, 401);
    const wrong = await app.request("/review-board/runs", {
      headers: { authorization: "Bearer nope" },
    });
    assert.equal(wrong.status, 401);
    assert.match(wrong.headers.get("www-authenticate") ?? "", /Bearer/);
    const asReader = { authorization: "Bearer reader-secret" };
    assert.equal(
      (await app.request("/review-board/runs/golden", { headers: asReader })).status,
      200,
    );
    const before = await snapshotState(ws.path);
    const refused = await review(app, "t-docs", { decision: "approve" }, asReader);
    assert.equal(refused.status, 403);
    assert.deepEqual(await snapshotState(ws.path), before);
    assert.equal((await review(app, "t-docs", { decision: "approve" })).status, 401);
    const ok = await review(app, "t-docs", { decision: "approve" }, {
      authorization: "Bearer operator-secret",
    });
    assert.equal(ok.status, 200);
    assert.equal((await ok.json()).receipt.principal, "olga");
  } finally {
    Deno.env.delete(readerEnv);
    Deno.env.delete(opEnv);
  }
});

// Hostile ids: none may reach a path outside .sdd/runs/.
const HOSTILE: [string, number[]][] = [
  ["/review-board/runs/..", [400, 404]],
  ["/review-board/runs/%2e%2e", [400, 404]],
  ["/review-board/runs/..%2f..%2fetc", [400]],
  ["/review-board/runs/%2fetc%2fpasswd", [400]],
  ["/review-board/runs/golden/diff/..%2f..%2fjournal", [400]],
  ["/review-board/runs/golden/diff/.hidden", [400]],
  ["/review-board/runs/golden/diff/a..b", [400]],
  ["/review-board/runs/golden/evidence/%00", [400]],
  ["/review-board/runs/-rf", [400]],
  ["/review-board/runs/" + "a".repeat(129), [400]],
  ["/review-board/runs/nope", [404]],
];

for (const [url, statuses] of HOSTILE) {
  Deno.test(`hostile id ${url.slice(0, 60)} is refused with ${statuses.join("/")}`, async () => {
    await using ws = await goldenWorkspace();
    const res = await appFor(ws.path).request(url);
    assert.ok(statuses.includes(res.status), `got ${res.status}`);
    const body = await res.json();
    assert.equal(typeof body.error.code, "string");
  });
}

Deno.test("GET /status and /status/ answer one JSON object", async () => {
  await using ws = await goldenWorkspace();
  const app = appFor(ws.path);
  for (const path of ["/status", "/status/"]) {
    const res = await app.request(path);
    assert.equal(res.status, 200);
    assert.equal((await res.json()).runs, 1);
  }
});

Deno.test("unknown routes answer the JSON error body", async () => {
  await using ws = await goldenWorkspace();
  const res = await appFor(ws.path).request("/nope");
  assert.equal(res.status, 404);
  assert.equal((await res.json()).error.code, "not_found");
});

Deno.test("a merge refused as pending, landed or not reviewable writes nothing", async () => {
  await using ws = await goldenWorkspace();
  const app = appFor(ws.path);
  assert.equal((await review(app, "t-docs", { decision: "merge" })).status, 200);
  const before = await snapshotState(ws.path);
  const res = await review(app, "t-docs", { decision: "merge" });
  assert.equal(res.status, 409);
  const body = await res.json();
  assert.equal(body.error.code, "merge_pending");
  assert.match(body.error.message, /t-docs already has a merge decision/);
  assert.equal((await review(app, "t-parser", { decision: "merge" })).status, 409);
  assert.deepEqual(await snapshotState(ws.path), before);
  // an approval stays an attachment: allowed on a merged card
  assert.equal((await review(app, "t-parser", { decision: "approve" })).status, 200);
});

Deno.test("a request for changes of a task not waiting for review (merged, merge pending, gated or FAILED) is refused 409 not_reviewable and writes nothing: no run would start the attempt it asks for", async () => {
  await using ws = await goldenWorkspace();
  const app = appFor(ws.path);
  await appendEvents(join(ws.runDir, "journal.jsonl"), [
    taskClaimed({ task_id: "t-fails", session_id: "s-09", title: "Fails", role: "backend" }),
    taskVerificationFailed({
      task_id: "t-fails",
      signals: [{ kind: "quality_gate", detail: "tests (exit 1)" }],
    }),
  ]);
  assert.equal((await review(app, "t-docs", { decision: "merge" })).status, 200);
  const before = await snapshotState(ws.path);
  for (const task of ["t-parser", "t-docs", "t-fails"]) {
    const res = await review(app, task, { decision: "request_changes", note: "add a test" });
    assert.equal(res.status, 409, task);
    const body = await res.json();
    assert.equal(body.error.code, "not_reviewable", task);
    assert.match(body.error.message, new RegExp(`task ${task} is (merged|gated), not waiting`));
    assert.match(body.error.message, /its note would reach no agent/);
  }
  assert.deepEqual(await snapshotState(ws.path), before, "nothing written");
  // An approval is an attachment on any card (spec §3.2).
  assert.equal((await review(app, "t-fails", { decision: "approve" })).status, 200);
});

Deno.test("GET .../tasks outlines every task; .../tasks/<id> gives attempts, reasons and the verified log", async () => {
  await using ws = await goldenWorkspace();
  const app = appFor(ws.path);
  const outline = await (await app.request("/review-board/runs/golden/tasks")).json();
  assert.equal(outline.journal_verified, true);
  assert.deepEqual(
    outline.tasks.map((t: { task_id: string; state: string }) => [t.task_id, t.state]),
    [["t-parser", "merged"], ["t-docs", "needs_review"]],
  );
  const detail = await (await app.request("/review-board/runs/golden/tasks/t-docs")).json();
  assert.deepEqual(
    detail.task.attempts.map((a: Record<string, unknown>) => [
      a.session_id,
      a.outcome,
      a.retried_because,
    ]),
    [["s-02", "gated", "completion signal failed"], ["s-03", "completed", undefined]],
  );
  assert.deepEqual(detail.task.attempts[0].signals, [
    { kind: "path_exists", detail: "docs/parser.md not found" },
  ]);
  for (
    const [path, status, code] of [
      ["/review-board/runs/golden/tasks/t-nobody", 404, "unknown_task"],
      ["/review-board/runs/golden/tasks/..", 404, "not_found"],
      ["/review-board/runs/golden/tasks/a%2F..%2Fb", 400, "invalid_task_id"],
      ["/review-board/runs/nope/tasks", 404, "unknown_run"],
      ["/review-board/runs/..%2Fx/tasks", 400, "invalid_run_id"],
    ] as const
  ) {
    const res = await app.request(path);
    assert.equal(res.status, status, path);
    assert.equal((await res.json()).error.code, code, path);
  }
});
