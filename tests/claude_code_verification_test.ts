/**
 * Verification with the REAL Claude Code CLI (`npm i -g @anthropic-ai/claude-code`) run by
 * `service run` against a local stand-in of the Messages API that scripts the model's turns as
 * streamed `tool_use` blocks: Claude Code's own Bash tool runs the commands and its stream-json
 * log carries their output as `tool_result` content, which is where the service must find the
 * test run. Skipped only when `claude` is not on PATH.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { resolveBinary } from "../lib/agents/preflight.ts";
import { tempDir } from "./helpers.ts";
import { CLI, rowsOf, sh } from "./_e2e.ts";
import { startFakeAnthropicApi } from "./fakes/anthropic_api.ts";

const claudePath = await resolveBinary("claude", Deno.env.toObject());
if (!claudePath) console.warn("SKIP claude_code_verification_test: `claude` not found in PATH");

const REPORT = `curl -sS -X POST "$SERVICE_SERVER_URL/tasks/$SERVICE_TASK_ID/complete" ` +
  `-H "Authorization: Bearer $SERVICE_TOKEN" -H "Content-Type: application/json" ` +
  `-d '{"summary":"done","tests_run":true}'`;

const CALC = "def add(a, b):\n    return a + b\n";
const TESTS = "import unittest\nfrom calc import add\n\n" +
  "class T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(1, 2), 3)\n";

async function claudeWorkspace(root: string, plan: string, extra = "") {
  await sh(root, "init", "-q", "-b", "main");
  await sh(root, "config", "user.email", "e2e@localhost");
  await sh(root, "config", "user.name", "e2e");
  await Deno.writeTextFile(join(root, "calc.py"), CALC);
  await Deno.writeTextFile(join(root, "test_calc.py"), TESTS);
  await Deno.writeTextFile(
    join(root, "service.yaml"),
    `cli: claude\nroles:\n  backend: {}\n${extra}`,
  );
  await Deno.writeTextFile(join(root, "plan.yaml"), plan);
  await sh(root, "add", "-A");
  await sh(root, "commit", "-q", "-m", "init");
}

/**
 * `service run` as a child process whose environment points Claude Code at the stand-in (never
 * this process's environment: tests of other files run beside this one).
 */
async function runWithClaude(root: string, apiUrl: string) {
  await using home = await tempDir("claude-home-");
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "--root", root, "run", "plan.yaml", "--port", "0"],
    env: {
      NO_COLOR: "1",
      ANTHROPIC_BASE_URL: apiUrl,
      ANTHROPIC_API_KEY: "test-key",
      CLAUDE_CODE_MAX_RETRIES: "0",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_TELEMETRY: "1",
      HOME: home.path,
    },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  const terminal = dec.decode(out.stdout) + dec.decode(out.stderr);
  const runId = /^run (\S+): /m.exec(terminal)?.[1] ?? "";
  return { code: out.code, runId, terminal };
}

async function ledger(root: string) {
  const text = await Deno.readTextFile(join(root, ".sdd/metrics/verification_nudges.jsonl"));
  return text.trim().split("\n").map((l) => JSON.parse(l));
}

Deno.test({
  name:
    "real Claude Code: its Bash tool's test run (in stream-json tool_result) with passing signals and gates is a verified completion, no ALERT",
  ignore: !claudePath,
  async fn() {
    await using dir = await tempDir();
    const root = dir.path;
    await claudeWorkspace(
      root,
      "stages:\n  - name: build\n    steps:\n      - id: calc\n        role: backend\n" +
        "        goal: Add sub() to calc.py and run the tests.\n" +
        "        completion_signals: [{path_exists: calc.py}]\n" +
        '        evidence: [{name: unittest, command: "python3 -m unittest 2>&1", timeout_s: 60}]\n',
      "quality_gates:\n  - {name: compiles, command: python3 -m py_compile calc.py, timeout_s: 60}\n" +
        "verification_nudge: {threshold: 0.0, min_completions: 1}\n",
    );
    await using api = startFakeAnthropicApi({
      inputTokens: 900,
      outputTokens: 40,
      script: [
        { bash: "printf '\\ndef sub(a, b):\\n    return a - b\\n' >> calc.py" },
        { bash: "python3 -m unittest -v 2>&1" },
        { bash: REPORT },
        { text: "Added sub(); the tests pass." },
      ],
    });
    const { code, runId, terminal } = await runWithClaude(root, api.url);
    assert.equal(code, 0, terminal);
    assert.match(terminal, /completed: every task landed/);
    assert.doesNotMatch(terminal, /ALERT/);
    const [record] = await ledger(root);
    assert.deepEqual(
      [
        record.task_id,
        record.tests_run,
        record.quality_gates_run,
        record.completion_signals_checked,
      ],
      ["calc", true, true, true],
    );
    assert.equal(record.verified, true);
    const rows = await rowsOf(root, runId);
    const recorded = rows.find((r) => r.type === "task_verification_recorded")!;
    assert.deepEqual(
      (recorded.data.test_runs as { runner: string }[]).map((r) => r.runner),
      ["unittest"],
    );
    assert.ok(rows.some((r) => r.type === "task_evidence_sealed"));
    assert.ok(rows.some((r) => r.type === "task_merged"));
    // The summary was found inside Claude Code's structured tool output, not a plain line.
    const log = await Deno.readTextFile(
      join(root, ".sdd/runs", runId, "logs", `${record.session_id}.log`),
    );
    assert.match(log, /"type":"tool_result"/);
    assert.ok(!log.split("\n").some((l) => /^Ran 1 test in/.test(l)), "no plain summary line");
  },
});

Deno.test({
  name:
    "real Claude Code: a completion with no evidence (no tests, no signals, no gates) raises the ALERT, whatever the agent claims",
  ignore: !claudePath,
  async fn() {
    await using dir = await tempDir();
    const root = dir.path;
    await claudeWorkspace(
      root,
      "stages:\n  - name: build\n    steps:\n      - id: notes\n        role: backend\n" +
        "        goal: Write NOTES.md.\n",
      "verification_nudge: {threshold: 0.0, min_completions: 1}\n",
    );
    await using api = startFakeAnthropicApi({
      inputTokens: 900,
      outputTokens: 40,
      script: [
        { bash: "echo '# notes' > NOTES.md && echo 'all tests passed'" },
        { bash: REPORT },
        { text: "All tests passed." },
      ],
    });
    const { code, runId, terminal } = await runWithClaude(root, api.url);
    assert.equal(code, 0, terminal);
    assert.match(terminal, /completed: every task landed/);
    assert.equal(terminal.split("\n").filter((l) => /ALERT/.test(l)).length, 1, terminal);
    const rows = await rowsOf(root, runId);
    assert.ok(
      rows.some((r) => r.type === "task_merged"),
      "the work still lands: the alert is advice",
    );
    const [record] = await ledger(root);
    assert.equal(record.verified, false);
    assert.equal(record.tests_run, false, "its claim of tests_run is only a hint");
  },
});
