/**
 * Verification end to end, as a user meets it (DESIGN.md §10): real git, real agent processes
 * (the scripted agent running a real Python test suite), quality gates and evidence producers
 * run on the merged tree, the ledger, `service status`, the journal, the evidence endpoint and
 * the board's evidence panel in the real browser.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { sha256Hex } from "../lib/journal/hash.ts";
import { tempDir } from "./helpers.ts";
import {
  browserPage,
  CLI,
  cli,
  openRunPage,
  rowsOf,
  serveBoard,
  sh,
  until,
  workspace,
} from "./_e2e.ts";

const CALC = "def add(a, b):\n    return a + b\n";
const TESTS = "import unittest\nfrom calc import add\n\n" +
  "class T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(1, 2), 3)\n" +
  "    def test_zero(self):\n        self.assertEqual(add(0, 0), 0)\n";

async function ledger(root: string) {
  const text = await Deno.readTextFile(join(root, ".sdd/metrics/verification_nudges.jsonl"));
  return text.trim().split("\n").map((l) => JSON.parse(l));
}

/**
 * `service run plan.yaml` as a child process, as a user runs it (its own process, so nothing of
 * this test's process leaks into the run); `onLine` sees its output as it comes.
 */
async function serviceRun(root: string, onLine: (line: string) => void = () => {}) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "--root", root, "run", "plan.yaml", "--port", "0"],
    env: { NO_COLOR: "1", RUST_BACKTRACE: "0" },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const lines: string[] = [];
  const read = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    let rest = "";
    for await (const bytes of stream) {
      const parts = (rest + decoder.decode(bytes, { stream: true })).split("\n");
      rest = parts.pop()!;
      for (const line of parts) {
        lines.push(line);
        onLine(line);
      }
    }
    if (rest) lines.push(rest);
  };
  const [status] = await Promise.all([child.status, read(child.stdout), read(child.stderr)]);
  const terminal = lines.join("\n");
  const runId = /^run (\S+): /m.exec(terminal)?.[1] ?? "";
  return { code: status.code, runId, lines, terminal };
}

async function taskSpec(root: string, id: string) {
  for (const bucket of ["closed", "claimed", "open"]) {
    try {
      return parseYaml(await Deno.readTextFile(join(root, ".sdd/backlog", bucket, `${id}.yaml`)));
    } catch { /* next bucket */ }
  }
  throw new Error(`no spec for ${id}`);
}

/** Replace service.yaml (committed, so the checkout stays clean). */
async function config(root: string, text: string) {
  await Deno.writeTextFile(join(root, "service.yaml"), text);
  await sh(root, "commit", "-q", "-am", "config");
}

const agentConfig = (extra: string) =>
  `cli: generic\ncli_command: ${
    JSON.stringify([
      "deno",
      "run",
      "-A",
      new URL("../agents/scripted_agent.ts", import.meta.url).pathname,
    ])
  }\n${extra}`;

Deno.test("a run whose agent runs the tests, with passing signals and gates, records verified completions, seals evidence and raises no ALERT", async () => {
  await using dir = await tempDir();
  const root = dir.path;
  await workspace(
    root,
    [{
      name: "build",
      steps: [
        {
          id: "calc",
          script: [
            ["append", "calc.py", "\ndef sub(a, b):\n    return a - b\n"],
            ["run", "python3 -m unittest -v"],
            ["report", "sub() added; tests pass"],
          ],
          signals: [{ path_exists: "calc.py" }],
          evidence: [
            { name: "unittest", command: "python3 -m unittest 2>&1", timeout_s: 60 },
            { name: "size", command: "wc -c < calc.py" },
          ],
        },
        {
          id: "notes",
          role: "docs",
          script: [["write", "NOTES.md", "# notes\n"], ["report"]],
        },
      ],
    }],
    "",
    { "calc.py": CALC, "test_calc.py": TESTS },
  );
  await config(
    root,
    agentConfig(
      "roles:\n  backend: {}\n  docs:\n    quality_gates:\n" +
        '      - {name: notes-present, command: "test -s NOTES.md", timeout_s: 30}\n' +
        "quality_gates:\n" +
        '  - {name: compiles, command: "python3 -m py_compile calc.py", timeout_s: 60}\n' +
        "verification_nudge: {threshold: 0.0, min_completions: 1}\n",
    ),
  );
  const result = await serviceRun(root);
  const terminal = result.terminal;
  assert.equal(result.code, 0, terminal);
  assert.doesNotMatch(terminal, /ALERT/);

  // The ledger: one record per completion, each from what the service observed.
  const records = await ledger(root);
  assert.deepEqual(
    records.map((r) => [
      r.task_id,
      r.tests_run,
      r.quality_gates_run,
      r.completion_signals_checked,
      r.verified,
    ]).sort(),
    [["calc", true, true, true, true], ["notes", false, true, false, true]],
  );
  assert.equal((await taskSpec(root, "calc")).verification_count, 3);
  assert.equal((await taskSpec(root, "calc")).flagged_unverified, false);
  assert.equal((await taskSpec(root, "notes")).verification_count, 1);

  // The journal says where each flag came from.
  const rows = await rowsOf(root, result.runId);
  const recorded = rows.find((r) =>
    r.type === "task_verification_recorded" && r.data.task_id === "calc"
  )!;
  const [run] = recorded.data.test_runs as { runner: string; outcome: string; line: string }[];
  assert.deepEqual([run.runner, run.outcome], ["unittest", "passed"]);
  assert.match(run.line, /^Ran 2 tests in [\d.]+s$/);
  const sealed = rows.filter((r) => r.type === "task_evidence_sealed");
  assert.deepEqual(sealed.map((r) => r.data.task_id), ["calc"]);
  const verifiedAt = rows.findIndex((r) => r.type === "task_verification_recorded");
  const mergedAt = rows.findIndex((r) => r.type === "task_merged");
  assert.ok(verifiedAt < mergedAt, "the record is written before the work lands");

  const status = await cli(root, "status");
  assert.equal(status.code, 0, status.out);
  assert.doesNotMatch(status.out, /ALERT|notice:/);
  assert.match(status.out, /verification: 2\/2 completions verified/);

  // The evidence endpoint and the board's evidence panel.
  await using server = await serveBoard(root);
  const url = `${server.url}/review-board/runs/${result.runId}/evidence/calc`;
  const evidence = await (await fetch(url)).json();
  assert.equal(evidence.verified, true, evidence.problems?.join("; "));
  assert.equal(evidence.bundle_hash, sealed[0].data.bundle_hash);
  assert.deepEqual(
    evidence.producers.map((p: { name: string; exit_code: number }) => [p.name, p.exit_code]),
    [["unittest", 0], ["size", 0]],
  );
  assert.deepEqual(
    evidence.verdict.checks.map((c: { kind: string; passed: boolean }) => [c.kind, c.passed]),
    [["path_exists", true], ["quality_gate", true]],
  );
  const hex = evidence.producers[0].output.sha256.slice("sha256:".length);
  const outputPath = join(root, ".sdd/runs", result.runId, "evidence/calc", hex);
  const output = await Deno.readTextFile(outputPath);
  assert.match(output, /Ran 2 tests/);
  assert.equal(sha256Hex(output), hex);
  const none = await fetch(`${server.url}/review-board/runs/${result.runId}/evidence/notes`);
  assert.equal(none.status, 404);
  assert.equal((await none.json()).error.code, "no_evidence_producers");

  await using browser = await browserPage();
  const { page } = browser;
  await openRunPage(page, server.url, result.runId, "calc");
  await page.locator("[data-evidence-verified]").waitFor();
  assert.equal(
    await page.locator("[data-producer=unittest] [data-exit-code]").textContent(),
    "exit 0",
  );
  assert.match(
    (await page.locator("[data-producer=unittest]").textContent())!,
    /sha256:[0-9a-f]{64}/,
  );
  assert.equal(await page.locator("[data-verdict=passed]").count(), 1);
  assert.equal(await page.locator("[data-evidence-flag='tests run'][data-on='1']").count(), 1);
  // The attempt says what was observed, and which test run.
  const verification = page.locator("[data-attempt] [data-verification]");
  assert.equal(await verification.getAttribute("data-verification"), "verified");
  assert.match(
    (await verification.textContent())!,
    /verified: tests ran, quality gates ran, completion signals checked \(unittest: Ran 2 tests in/,
  );

  // An edited output: the endpoint and the page say EVIDENCE UNVERIFIED.
  await Deno.writeTextFile(outputPath, output.replace("OK", "FAILED (failures=1)"));
  const after = await (await fetch(url)).json();
  assert.equal(after.verified, false);
  assert.equal(after.checks.outputs_rehash, false);
  await openRunPage(page, server.url, result.runId, "calc");
  await page.locator("[data-evidence-unverified]").waitFor();
  assert.equal(await page.textContent("[data-evidence-unverified]"), "EVIDENCE UNVERIFIED");
  assert.match((await page.textContent("[data-evidence-problems]"))!, /no longer re-hashes/);
});

Deno.test("a run with no evidence at all raises the ALERT once, in the live view and in `service status`; the agent's own tests_run claim changes nothing", async () => {
  await using dir = await tempDir();
  const root = dir.path;
  await workspace(root, [{
    name: "build",
    steps: [
      { id: "a", script: [["write", "a.txt", "a\n"], ["report"]] },
      // Claims tests ran (the scripted agent reports tests_run after any zero exit).
      {
        id: "b",
        script: [["write", "b.txt", "b\n"], ["run", "echo all tests passed"], ["report"]],
      },
      // Exits without reporting: recovered partial work, recorded through the same path.
      { id: "c", script: [["write", "c.txt", "c\n"], ["sleep", 2500], ["exit", 0]] },
    ],
  }]);
  const result = await serviceRun(root);
  const terminal = result.terminal;
  assert.equal(result.code, 0, terminal);
  const alerts = result.lines.filter((l) => /ALERT/.test(l));
  assert.equal(alerts.length, 1, terminal);
  assert.match(alerts[0], /ALERT: 3 of 3 completions unverified/);
  // No gate applies to their role: the advice names it (lib/verification/advice.ts).
  assert.match(alerts[0], /Add quality_gates \(none apply to role backend\)/);

  const records = await ledger(root);
  assert.deepEqual(records.map((r) => [r.task_id, r.verified]).sort(), [
    ["a", false],
    ["b", false],
    ["c", false],
  ]);
  const b = await taskSpec(root, "b");
  assert.deepEqual(b.reported_evidence, {
    tests_run: true,
    quality_gates_run: false,
    completion_signals_checked: false,
  });
  assert.equal(b.flagged_unverified, true);
  const rows = await rowsOf(root, result.runId);
  assert.ok(
    rows.some((r) => r.type === "task_completed" && r.data.task_id === "c" && r.data.recovered),
  );

  const status = await cli(root, "status", "--json");
  const nudge = JSON.parse(status.out).verification_nudge;
  assert.equal(nudge.threshold_exceeded, true);
  assert.deepEqual([...nudge.recent_unverified].sort(), ["a", "b", "c"]);
  const human = await cli(root, "status");
  assert.match(human.out, /ALERT: 3 of 3 completions unverified/);
});

Deno.test("a failing quality gate blocks the merge like a failed signal (gate receipt, retry), and each completion gets its own record", async () => {
  await using dir = await tempDir();
  const root = dir.path;
  await workspace(root, [{
    name: "build",
    steps: [{
      id: "g",
      script: [
        ["write", "g.txt", "g\n"],
        ["retry", [["write", "CHANGELOG.md", "- g\n"]]],
        ["report"],
      ],
    }],
  }]);
  const counter = join(root, "..", `${crypto.randomUUID()}.count`);
  await config(
    root,
    agentConfig(
      "roles:\n  backend: {}\nquality_gates:\n" +
        `  - {name: changelog, command: "echo run >> ${counter}; test -f CHANGELOG.md || { echo no CHANGELOG.md; exit 3; }", timeout_s: 30}\n`,
    ),
  );
  const result = await serviceRun(root);
  assert.equal(result.code, 0, result.terminal);
  const rows = await rowsOf(root, result.runId);
  const failed = rows.filter((r) => r.type === "task_verification_failed");
  assert.equal(failed.length, 1);
  const [signal] = failed[0].data.signals as Record<string, string>[];
  assert.equal(signal.kind, "quality_gate");
  assert.equal(signal.name, "changelog");
  assert.match(signal.output_tail, /no CHANGELOG\.md[\s\S]*\[exit 3\]/);
  assert.ok(rows.some((r) => r.type === "task_retried" && r.data.task_id === "g"));
  assert.ok(rows.some((r) => r.type === "task_merged" && r.data.task_id === "g"));
  const records = await ledger(root);
  assert.deepEqual(records.map((r) => [r.task_id, r.quality_gates_run, r.verified]), [
    ["g", true, true],
    ["g", true, true],
  ]);
  assert.notEqual(records[0].session_id, records[1].session_id);
  assert.equal(await Deno.readTextFile(counter), "run\nrun\n", "the gate ran once per attempt");
  await Deno.remove(counter);
});

Deno.test("a broken audit chain cannot seal evidence: the run goes on, the terminal and the endpoint say why", async () => {
  await using dir = await tempDir();
  const root = dir.path;
  await workspace(root, [{
    name: "build",
    steps: [{
      id: "e",
      script: [["write", "e.txt", "e\n"], ["report"]],
      signals: [{ path_exists: "e.txt" }],
      evidence: [{ name: "listing", command: "ls" }],
    }],
  }]);
  await Deno.mkdir(join(root, ".sdd/audit"), { recursive: true });
  await Deno.writeTextFile(join(root, ".sdd/audit/key"), "k".repeat(64) + "\n");
  await Deno.writeTextFile(join(root, ".sdd/audit/audit.jsonl"), '{"not":"an entry"}\n');
  const result = await serviceRun(root);
  const terminal = result.terminal;
  assert.equal(result.code, 0, terminal);
  assert.match(terminal, /e: evidence bundle not sealed: audit chain does not verify/);
  const [record] = await ledger(root);
  assert.equal(record.completion_signals_checked, true, "the record does not depend on the seal");
  await using server = await serveBoard(root);
  const res = await fetch(`${server.url}/review-board/runs/${result.runId}/evidence/e`);
  assert.equal(res.status, 404);
  const body = await res.json();
  assert.equal(body.error.code, "evidence_not_sealed");
  assert.match(body.error.message, /could not be sealed: audit chain does not verify/);
});

Deno.test("a completion whose work conflicts gets one record when it is sent back; its next attempt gets its own", async () => {
  await using dir = await tempDir();
  const root = dir.path;
  await workspace(root, [{
    name: "s",
    steps: [
      {
        id: "left",
        script: [["write", "shared.txt", "left\n"], ["report"]],
        signals: [{ path_exists: "shared.txt" }],
      },
      {
        id: "right",
        script: [
          ["first_attempt", [["write", "shared.txt", "right\n"], ["sleep", 1500], ["report"]]],
          ["retry", [["append", "shared.txt", "right\n"], ["report"]]],
        ],
        signals: [{ path_exists: "shared.txt" }],
      },
    ],
  }]);
  const result = await serviceRun(root);
  assert.equal(result.code, 0, result.terminal);
  const rows = await rowsOf(root, result.runId);
  assert.ok(rows.some((r) => r.type === "merge_conflict" && r.data.task_id === "right"));
  const records = await ledger(root);
  const of = (id: string) =>
    records.filter((r) => r.task_id === id).map((r) => [r.completion_signals_checked, r.verified]);
  assert.deepEqual(of("left"), [[true, true]]);
  // The conflicting completion never reached a gate: recorded when sent back, with nothing seen.
  assert.deepEqual(of("right"), [[false, false], [true, true]]);
  const sessions = records.filter((r) => r.task_id === "right").map((r) => r.session_id);
  assert.notEqual(sessions[0], sessions[1]);
});

Deno.test("under review.require_approval the evidence is sealed and the record written before the operator decides; the merge reuses the gates", async () => {
  await using dir = await tempDir();
  const root = dir.path;
  await workspace(root, [{
    name: "build",
    steps: [{
      id: "r",
      script: [["write", "r.txt", "r\n"], ["report"]],
      signals: [{ path_exists: "r.txt" }],
      evidence: [{ name: "listing", command: "ls" }],
    }],
  }]);
  const counter = join(root, "..", `${crypto.randomUUID()}.count`);
  await config(
    root,
    agentConfig(
      "roles:\n  backend: {}\nreview:\n  require_approval: true\nquality_gates:\n" +
        `  - {name: counted, command: "echo run >> ${counter}", timeout_s: 30}\n`,
    ),
  );
  let url = "";
  let runId = "";
  const running = serviceRun(root, (line) => {
    const m =
      /review board \(live while the run lasts\): (http:\/\/[^/]+)\/dashboard\/review-board\?run=(\S+)/
        .exec(line);
    if (m) [url, runId] = [m[1], m[2]];
  });
  const count = async (type: string) =>
    runId ? (await rowsOf(root, runId)).filter((r) => r.type === type).length : 0;
  await until("the task to wait for review", async () => (await count("task_completed")) === 1);
  // Before any decision: the record, the sealed bundle, one gate run.
  assert.equal((await ledger(root)).length, 1);
  const evidence = await (await fetch(`${url}/review-board/runs/${runId}/evidence/r`)).json();
  assert.equal(evidence.verified, true, JSON.stringify(evidence.problems));
  assert.deepEqual(evidence.producers.map((p: { name: string }) => p.name), ["listing"]);
  assert.equal(await count("task_merged"), 0);
  const res = await fetch(`${url}/dashboard/review-board/runs/${runId}/tasks/r/review`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ decision: "merge" }),
  });
  assert.equal(res.status, 200);
  const result = await running;
  assert.equal(result.code, 0, result.terminal);
  assert.equal(await Deno.readTextFile(counter), "run\n", "the merge reused the gates");
  assert.equal((await ledger(root)).length, 1, "one record per completion");
  await Deno.remove(counter);
});
