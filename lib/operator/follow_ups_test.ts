import assert from "node:assert/strict";
import { auditPaths } from "../audit/store.ts";
import { ConflictError } from "../errors.ts";
import { sha256Hex } from "../journal/hash.ts";
import { runStarted } from "../journal/events.ts";
import { appendEvents } from "../journal/journal_file.ts";
import { journalPath, workspacePaths } from "../workspace.ts";
import {
  FOLLOW_UP_EVENT,
  followUpsNote,
  followUpsPath,
  followUpTextProblem,
  MAX_FOLLOW_UP,
  parseFollowUps,
  readFollowUps,
  requireRunning,
  sendFollowUp,
} from "./follow_ups.ts";

const KEY = new TextEncoder().encode("test-key");
const OPERATOR = { principal: "ops", scope: "operator" as const };

/** The `task_follow_up` rows of a journal file. */
async function followUpRows(journal: string): Promise<{ data: Record<string, unknown> }[]> {
  return (await Deno.readTextFile(journal)).trimEnd().split("\n").map((l) => JSON.parse(l))
    .filter((r) => r.type === "task_follow_up");
}

async function workspace() {
  const root = await Deno.makeTempDir({ prefix: "follow-ups-" });
  const paths = workspacePaths(root);
  const journal = journalPath(paths, "run-1");
  await appendEvents(journal, [runStarted({ run_id: "run-1" })]);
  const audit = auditPaths(paths.audit);
  const send = (text: string, runJournal: string | undefined = journal) =>
    sendFollowUp({
      paths,
      taskId: "t-a",
      runJournal,
      text,
      principal: OPERATOR,
      audit,
      auditKey: () => Promise.resolve(KEY),
    });
  return {
    paths,
    journal,
    audit,
    send,
    async [Symbol.asyncDispose]() {
      await Deno.remove(root, { recursive: true });
    },
  };
}

Deno.test("sendFollowUp() signs, keeps and journals each follow-up in order", async () => {
  await using ws = await workspace();
  const first = await ws.send("use the v2 API");
  const second = await ws.send("and keep v1 working");
  assert.deepEqual([first.follow_up.seq, second.follow_up.seq], [1, 2]);
  const kept = await readFollowUps(ws.paths, "t-a");
  assert.deepEqual(kept.map((f) => f.text), ["use the v2 API", "and keep v1 working"]);
  assert.deepEqual((await readFollowUps(ws.paths, "t-a", 1)).map((f) => f.seq), [2]);
  assert.deepEqual(await readFollowUps(ws.paths, "t-other"), []);
  const lines = (await Deno.readTextFile(ws.audit.log)).trimEnd().split("\n");
  assert.equal(sha256Hex(lines[1]), second.audit_event_hash);
  const entry = JSON.parse(lines[0]);
  assert.equal(entry.event, FOLLOW_UP_EVENT);
  assert.equal(entry.data.text_sha256, "sha256:" + sha256Hex("use the v2 API"));
  const rows = await followUpRows(ws.journal);
  assert.deepEqual(rows.map((r) => [r.data.seq, r.data.text, r.data.audit_event_hash]), [
    [1, "use the v2 API", first.audit_event_hash],
    [2, "and keep v1 working", second.audit_event_hash],
  ]);
});

Deno.test("sendFollowUp() numbers concurrent follow-ups without a repeat", async () => {
  await using ws = await workspace();
  const sent = await Promise.all(Array.from({ length: 8 }, (_, i) => ws.send(`note ${i}`)));
  assert.deepEqual(sent.map((s) => s.follow_up.seq).sort((a, b) => a - b), [
    1,
    2,
    3,
    4,
    5,
    6,
    7,
    8,
  ]);
  assert.equal((await readFollowUps(ws.paths, "t-a")).length, 8);
});

Deno.test("sendFollowUp() on a broken audit chain refuses (409) and keeps nothing", async () => {
  await using ws = await workspace();
  await ws.send("first");
  const text = await Deno.readTextFile(ws.audit.log);
  await Deno.writeTextFile(ws.audit.log, text.replace('"ops"', '"eve"'));
  await assert.rejects(ws.send("second"), ConflictError);
  assert.deepEqual((await readFollowUps(ws.paths, "t-a")).map((f) => f.text), ["first"]);
  const rows = await followUpRows(ws.journal);
  assert.equal(rows.length, 1);
});

Deno.test("sendFollowUp() whose journal row cannot be written takes back the kept line and the entry", async () => {
  await using ws = await workspace();
  await ws.send("first");
  const auditBefore = await Deno.readTextFile(ws.audit.log);
  // A directory where the journal file should be: the append fails.
  const broken = ws.journal + ".d";
  await Deno.mkdir(broken);
  await assert.rejects(ws.send("second", broken));
  assert.deepEqual((await readFollowUps(ws.paths, "t-a")).map((f) => f.text), ["first"]);
  assert.equal(await Deno.readTextFile(ws.audit.log), auditBefore);
});

Deno.test("parseFollowUps() skips torn and foreign lines", () => {
  const text = [
    JSON.stringify({ seq: 1, at: "x", principal: "p", text: "ok" }),
    '{"seq":2,"text":', // torn
    JSON.stringify({ seq: "3", text: "seq as text" }),
    JSON.stringify({ seq: 4, text: 5 }),
    "null",
    "",
  ].join("\n");
  assert.deepEqual(parseFollowUps(text).map((f) => f.text), ["ok"]);
});

Deno.test("followUpTextProblem() refuses hostile texts and keeps plain ones", () => {
  const cases: [string, string, RegExp | undefined][] = [
    ["plain text", "use the v2 API", undefined],
    ["newlines and tabs", "first:\n\t- this\n\t- that", undefined],
    ["markup (shown escaped)", "<script>alert(1)</script>", undefined],
    ["non-ASCII and emoji", "ça marche 👍 — 日本語", undefined],
    ["exactly the limit", "x".repeat(MAX_FOLLOW_UP), undefined],
    ["empty", "", /empty/],
    ["only white space", " \n\t ", /empty/],
    ["one over the limit", "x".repeat(MAX_FOLLOW_UP + 1), /4001 characters; at most 4000/],
    ["a NUL", "a\u0000b", /U\+0000/],
    ["a terminal escape", "\u001b[2J\u001b]0;owned\u0007", /U\+001B/],
    ["a carriage return that hides a line", "safe\rrm -rf /", /U\+000D/],
    ["a C1 control", "a\u009bb", /U\+009B/],
    ["DEL", "a\u007fb", /U\+007F/],
  ];
  for (const [name, text, problem] of cases) {
    const found = followUpTextProblem(text);
    if (problem) assert.match(found ?? "", problem, name);
    else assert.equal(found, undefined, name);
  }
});

Deno.test("requireRunning() lets a claimed or in-progress task's follow-up through, 409 otherwise", () => {
  for (const status of ["CLAIMED", "IN_PROGRESS"] as const) requireRunning({ id: "t", status });
  for (
    const status of [
      "OPEN",
      "BLOCKED",
      "DONE",
      "CLOSED",
      "FAILED",
      "ORPHANED",
      "CANCELLED",
    ] as const
  ) {
    assert.throws(
      () => requireRunning({ id: "t", status }),
      (e) =>
        e instanceof ConflictError && e.code === "task_not_running" &&
        e.message.includes(`task t is ${status}, not running`),
      status,
    );
  }
});

Deno.test("followUpsNote() puts the follow-ups in an attempt's prompt, oldest first", () => {
  assert.equal(followUpsNote([]), "");
  const note = followUpsNote([
    { seq: 1, at: "", principal: "p", text: "one\ntwo" },
    { seq: 2, at: "", principal: "p", text: "three" },
  ]);
  assert.match(note, /^FOLLOW-UPS FROM THE OPERATOR/);
  assert.match(note, /- one\n {2}two\n- three$/);
});

Deno.test("followUpsPath() keeps each task's follow-ups under .sdd/messages", () => {
  const paths = workspacePaths("/ws");
  assert.equal(followUpsPath(paths, "t-a"), "/ws/.sdd/messages/t-a.jsonl");
});
