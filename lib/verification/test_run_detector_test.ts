import assert from "node:assert/strict";
import { parseAnyLog } from "../agents/adapters/generic.ts";
import { type DetectOptions, detectTestRuns as detect } from "./test_run_detector.ts";

/** The detector on the events of a log of unknown make (every CLI's format is recognised). */
const detectTestRuns = (log: string, options?: DetectOptions) => detect(parseAnyLog(log), options);

/**
 * Summaries as each runner prints them, including runners that cannot be installed here (cargo
 * nextest, dotnet test, Gradle): transcribed from their output. The real bytes of the runners
 * that can run here are in testdata/runner_outputs (below).
 */
const RUNNER_OUTPUTS: { runner: string; outcome: "passed" | "failed"; log: string }[] = [
  {
    runner: "deno test",
    outcome: "failed",
    log: "running 2 tests from ./a_test.ts\none ... ok (418µs)\ntwo ... FAILED (706µs)\n\n" +
      " FAILURES \n\ntwo => ./a_test.ts:2:6\n\nFAILED | 1 passed | 1 failed (13ms)\n\nerror: Test failed\n",
  },
  {
    runner: "deno test",
    outcome: "passed",
    log:
      "\x1b[0m\x1b[32mok\x1b[0m | 3 passed (2 steps) | 0 failed \x1b[0m\x1b[38;5;245m(12ms)\x1b[0m\n",
  },
  {
    runner: "node --test",
    outcome: "failed",
    log: "not ok 2 - two\n1..2\n# tests 2\n# suites 0\n# pass 1\n# fail 1\n# cancelled 0\n" +
      "# skipped 0\n# todo 0\n# duration_ms 187.739878\n",
  },
  {
    runner: "node --test",
    outcome: "passed",
    log: "✔ one (0.5ms)\nℹ tests 1\nℹ suites 0\nℹ pass 1\nℹ fail 0\nℹ cancelled 0\nℹ skipped 0\n",
  },
  {
    // Bun's documented output (bun is not installed here to capture it).
    runner: "bun test",
    outcome: "passed",
    log: "test.test.js:\n✓ add [0.87ms]\n✓ multiply [0.02ms]\n\n 2 pass\n 0 fail\n" +
      " 2 expect() calls\nRan 2 tests across 1 files. [15.00ms]\n",
  },
  {
    runner: "bun test",
    outcome: "failed",
    log: " 4 pass\n 1 fail\n 5 expect() calls\nRan 5 tests across 2 files. 150ms\n",
  },
  {
    // ExUnit's summary line (mix test).
    runner: "mix test",
    outcome: "failed",
    log: "Finished in 0.04 seconds (0.00s async, 0.04s sync)\n1 doctest, 3 tests, 1 failure\n",
  },
  {
    runner: "jest",
    outcome: "failed",
    log: "Test Suites: 1 failed, 1 total\nTests:       1 failed, 2 passed, 3 total\n" +
      "Snapshots:   0 total\nTime:        0.512 s\nRan all test suites.\n",
  },
  {
    runner: "vitest",
    outcome: "passed",
    log:
      " ✓ src/sum.test.ts (3 tests) 2ms\n\n Test Files  1 passed (1)\n      Tests  3 passed (3)\n" +
      "   Start at  10:00:00\n   Duration  312ms\n",
  },
  {
    runner: "vitest",
    outcome: "failed",
    log: " Test Files  1 failed (1)\n      Tests  1 failed | 2 passed (3)\n",
  },
  {
    runner: "mocha",
    outcome: "failed",
    log: "  sum\n    ✔ adds\n    1) subtracts\n\n\n  1 passing (6ms)\n  1 failing\n\n  1) sum\n",
  },
  {
    runner: "pytest",
    outcome: "failed",
    log: "=========================== short test summary info ============================\n" +
      "FAILED test_c.py::T::test_b - AssertionError: 1 != 2\n" +
      "========================= 1 failed, 1 passed in 0.93s ==========================\n",
  },
  {
    runner: "pytest",
    outcome: "passed",
    log: "...                                  [100%]\n3 passed in 0.01s\n",
  },
  {
    runner: "pytest",
    outcome: "passed",
    log: "==================== 5 passed, 1 warning in 1.20s (0:00:01) ====================\n",
  },
  {
    runner: "unittest",
    outcome: "failed",
    log: "----------------------------------------------------------------------\n" +
      "Ran 2 tests in 0.001s\n\nFAILED (failures=1)\n",
  },
  {
    runner: "unittest",
    outcome: "passed",
    log: "..\n----------------------------------------------------------------------\n" +
      "Ran 2 tests in 0.000s\n\nOK\n",
  },
  {
    runner: "go test",
    outcome: "passed",
    log: "ok  \texample.com/calc\t0.003s\n?   \texample.com/cmd\t[no test files]\n",
  },
  {
    runner: "go test",
    outcome: "failed",
    log:
      "--- FAIL: TestSum (0.00s)\n    sum_test.go:9: got 3\nFAIL\nFAIL\texample.com/calc\t0.004s\nFAIL\n",
  },
  {
    runner: "cargo test",
    outcome: "passed",
    log: "running 1 test\ntest tests::it_works ... ok\n\n" +
      "test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n",
  },
  {
    runner: "cargo nextest",
    outcome: "failed",
    log: "        PASS [   0.004s] calc tests::adds\n        FAIL [   0.005s] calc tests::subs\n" +
      "------------\n     Summary [   0.012s] 2 tests run: 1 passed, 1 failed, 0 skipped\n",
  },
  {
    runner: "rspec",
    outcome: "passed",
    log:
      "...\n\nFinished in 0.00312 seconds (files took 0.0813 seconds to load)\n3 examples, 0 failures\n",
  },
  {
    runner: "phpunit",
    outcome: "passed",
    log: "PHPUnit 10.5.0 by Sebastian Bergmann and contributors.\n\n...   3 / 3 (100%)\n\n" +
      "Time: 00:00.010, Memory: 8.00 MB\n\nOK (3 tests, 5 assertions)\n",
  },
  {
    runner: "phpunit",
    outcome: "failed",
    log: "FAILURES!\nTests: 3, Assertions: 5, Failures: 1.\n",
  },
  {
    runner: "dotnet test",
    outcome: "passed",
    log: "Starting test execution, please wait...\n" +
      "Passed!  - Failed:     0, Passed:     3, Skipped:     0, Total:     3, Duration: 12 ms - Calc.Tests.dll (net8.0)\n",
  },
  {
    runner: "dotnet test",
    outcome: "failed",
    log: "Test summary: total: 3, failed: 1, succeeded: 2, skipped: 0, duration: 0.6s\n",
  },
  {
    runner: "maven surefire",
    outcome: "passed",
    log: "[INFO] -------------------------------------------------------\n[INFO]  T E S T S\n" +
      "[INFO] Results:\n[INFO] \n[INFO] Tests run: 3, Failures: 0, Errors: 0, Skipped: 0\n[INFO] BUILD SUCCESS\n",
  },
  {
    runner: "gradle test",
    outcome: "failed",
    log:
      "> Task :test FAILED\n\nCalcTest > sums() FAILED\n\n3 tests completed, 1 failed\n\nBUILD FAILED in 2s\n",
  },
  {
    runner: "gradle test",
    outcome: "passed",
    log:
      "> Task :compileTestJava\n> Task :test\n\nBUILD SUCCESSFUL in 3s\n4 actionable tasks: 4 executed\n",
  },
];

for (const { runner, outcome, log } of RUNNER_OUTPUTS) {
  Deno.test(`detectTestRuns() recognises ${runner} (${outcome})`, () => {
    const report = detectTestRuns(log);
    assert.equal(report.tests_run, true, log);
    assert.equal(report.sightings[0].runner, runner);
    assert.equal(report.sightings[0].outcome, outcome);
    assert.equal(report.sightings[0].source, "plain");
  });
}

/** Real output (colour codes included) captured from each runner on a small failing or passing suite. */
const CAPTURED: [file: string, runner: string, outcome: "passed" | "failed"][] = [
  ["deno_test_passed.txt", "deno test", "passed"],
  ["deno_test_failed.txt", "deno test", "failed"],
  ["node_test_tap_failed.txt", "node --test", "failed"],
  ["node_test_spec_failed.txt", "node --test", "failed"],
  ["jest_passed.txt", "jest", "passed"],
  ["jest_failed.txt", "jest", "failed"],
  ["vitest_failed.txt", "vitest", "failed"],
  ["mocha_failed.txt", "mocha", "failed"],
  ["pytest_passed.txt", "pytest", "passed"],
  ["pytest_failed.txt", "pytest", "failed"],
  ["pytest_q_failed.txt", "pytest", "failed"],
  ["unittest_passed.txt", "unittest", "passed"],
  ["unittest_failed.txt", "unittest", "failed"],
  ["go_test_passed.txt", "go test", "passed"],
  ["go_test_failed.txt", "go test", "failed"],
  ["cargo_test_passed.txt", "cargo test", "passed"],
  ["rspec_failed.txt", "rspec", "failed"],
  ["phpunit_passed.txt", "phpunit", "passed"],
  ["phpunit_failed.txt", "phpunit", "failed"],
  ["maven_surefire_passed.txt", "maven surefire", "passed"],
  ["maven_surefire_failed.txt", "maven surefire", "failed"],
  // tape prints no "# fail" line when every test passed (minimist's suite: "# pass  157").
  ["tape_passed.txt", "tape", "passed"],
  ["tape_failed.txt", "tape", "failed"],
  ["ava_passed.txt", "ava", "passed"],
  ["ava_failed.txt", "ava", "failed"],
  ["uvu_passed.txt", "uvu", "passed"],
  ["uvu_failed.txt", "uvu", "failed"],
  ["jasmine_passed.txt", "jasmine", "passed"],
  ["jasmine_failed.txt", "jasmine", "failed"],
  ["mocha_passed.txt", "mocha", "passed"],
  ["tap_passed.txt", "tap", "passed"],
  ["tap_failed.txt", "tap", "failed"],
];

for (const [file, runner, outcome] of CAPTURED) {
  Deno.test(`detectTestRuns() on the real output of ${runner}: ${file}`, async () => {
    const log = await Deno.readTextFile(
      new URL(`./testdata/runner_outputs/${file}`, import.meta.url),
    );
    const report = detectTestRuns(log);
    assert.equal(report.tests_run, true);
    assert.ok(report.sightings.every((s) => s.runner === runner && s.outcome === outcome));
    // The same output inside a Claude Code Bash tool_result is found the same way.
    const wrapped = detectTestRuns(
      [claudeToolUse("toolu_x", "Bash", { command: "run" }), claudeToolResult("toolu_x", log)]
        .join("\n"),
    );
    assert.deepEqual(
      wrapped.sightings.map((s) => [s.runner, s.outcome, s.line]),
      report.sightings.map((s) => [s.runner, s.outcome, s.line]),
    );
  });
}

const claudeToolUse = (id: string, name: string, input: Record<string, unknown>) =>
  JSON.stringify({
    type: "assistant",
    message: {
      id: "msg_1",
      type: "message",
      role: "assistant",
      model: "claude-sonnet-4-5",
      content: [{ type: "tool_use", id, name, input }],
    },
    session_id: "s1",
  });
const claudeToolResult = (id: string, content: unknown) =>
  JSON.stringify({
    type: "user",
    message: {
      role: "user",
      content: [{ tool_use_id: id, type: "tool_result", content, is_error: false }],
    },
    parent_tool_use_id: null,
    session_id: "s1",
    tool_use_result: { stdout: "", stderr: "", interrupted: false, isImage: false },
  });

Deno.test("detectTestRuns() reads test output inside structured tool results", () => {
  const claude = [
    JSON.stringify({ type: "system", subtype: "init", session_id: "s1", tools: ["Bash"] }),
    claudeToolUse("toolu_01", "Bash", { command: "deno test", description: "Run the tests" }),
    claudeToolResult(
      "toolu_01",
      "running 3 tests from ./m_test.ts\nok | 3 passed | 0 failed (9ms)",
    ),
    JSON.stringify({ type: "result", subtype: "success", result: "Done, 3 tests passed." }),
  ].join("\n");
  const c = detectTestRuns(claude);
  assert.deepEqual(c.sightings.map((s) => [s.runner, s.source, s.logLine]), [
    ["deno test", "claude_tool_result", 3],
  ]);
  const blocks = claudeToolResult("toolu_02", [{ type: "text", text: "3 passed in 0.02s" }]);
  assert.equal(detectTestRuns(blocks).sightings[0].runner, "pytest");

  const codex = [
    JSON.stringify({ type: "thread.started", thread_id: "t" }),
    JSON.stringify({
      type: "item.started",
      item: {
        id: "item_1",
        type: "command_execution",
        command: "bash -lc 'go test ./...'",
        aggregated_output: "",
        status: "in_progress",
      },
    }),
    JSON.stringify({
      type: "item.completed",
      item: {
        id: "item_1",
        type: "command_execution",
        command: "bash -lc 'go test ./...'",
        aggregated_output: "ok  \texample.com/calc\t0.003s\n",
        exit_code: 0,
        status: "completed",
      },
    }),
  ].join("\n");
  assert.deepEqual(detectTestRuns(codex).sightings.map((s) => [s.runner, s.source]), [
    ["go test", "codex_command"],
  ]);
  const codexOld = JSON.stringify({
    id: "0",
    msg: {
      type: "exec_command_end",
      call_id: "c",
      stdout:
        "test result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s\n",
      stderr: "",
      exit_code: 0,
    },
  });
  assert.equal(detectTestRuns(codexOld).sightings[0].runner, "cargo test");

  const gemini = [
    JSON.stringify({ type: "init", timestamp: "t", session_id: "g", model: "gemini-2.5-pro" }),
    JSON.stringify({
      type: "tool_use",
      timestamp: "t",
      tool_name: "run_shell_command",
      tool_id: "call-1",
      parameters: { command: "npx jest" },
    }),
    JSON.stringify({
      type: "tool_result",
      timestamp: "t",
      tool_id: "call-1",
      status: "success",
      output: "Tests:       3 passed, 3 total\nTime: 1s",
    }),
  ].join("\n");
  assert.deepEqual(detectTestRuns(gemini).sightings.map((s) => [s.runner, s.source]), [
    ["jest", "gemini_tool_output"],
  ]);
});

/** Things that mention tests without a test run. */
const NEAR_MISSES: { name: string; log: string; prompt?: string }[] = [
  {
    name: "prose 'passed'",
    log: "I fixed the parser. All 3 tests passed and the build is green.\n",
  },
  { name: "prose with counts", log: "Tests: 3 passed\nResult: ok, 3 passed, 0 failed\n" },
  {
    name: "a plan that mentions tests",
    log: "Plan:\n1. write tests for sum()\n2. run `deno test` and `pytest`\n3. make sure ok\n",
  },
  {
    name: "an echoed prompt",
    prompt: "Run the suite; it must end with\nok | 3 passed | 0 failed (5ms)\n",
    log: "Run the suite; it must end with\nok | 3 passed | 0 failed (5ms)\n",
  },
  {
    name: "a run of zero tests",
    log: "ok | 0 passed | 0 failed (1ms)\nno tests ran in 0.01s\nRan 0 tests in 0.000s\n\nOK\n",
  },
  { name: "go packages without tests", log: "?   \texample.com/cmd\t[no test files]\n" },
  {
    name: "unittest's Ran line without a verdict",
    log: "Ran 3 tests in 0.2s\nand then it crashed\n",
  },
  { name: "gradle test up to date", log: "> Task :test UP-TO-DATE\n\nBUILD SUCCESSFUL in 1s\n" },
  {
    name: "the model's prose in stream-json",
    log: [
      JSON.stringify({
        type: "assistant",
        message: {
          role: "assistant",
          content: [{ type: "text", text: "ok | 3 passed | 0 failed (9ms)" }],
        },
      }),
      JSON.stringify({ type: "result", subtype: "success", result: "3 passed in 0.01s" }),
      JSON.stringify({
        type: "item.completed",
        item: { id: "i", type: "agent_message", text: "test result: ok. 3 passed; 0 failed;" },
      }),
      JSON.stringify({
        type: "message",
        role: "assistant",
        content: "Tests:       3 passed, 3 total",
        delta: true,
      }),
    ].join("\n"),
  },
  {
    name: "a file read by the Read tool",
    log: [
      claudeToolUse("toolu_9", "Read", { file_path: "/w/NOTES.md" }),
      claudeToolResult("toolu_9", "     1→ok | 3 passed | 0 failed (9ms)"),
    ].join("\n"),
  },
  {
    name: "a tool's input",
    log: claudeToolUse("toolu_8", "Bash", { command: "echo 'ok | 3 passed | 0 failed (1ms)'" }),
  },
  {
    name: "a summary quoted in the middle of a line",
    log: "he said: ok | 3 passed | 0 failed (5ms)\n",
  },
];

for (const miss of NEAR_MISSES) {
  Deno.test(`detectTestRuns() is not fooled by ${miss.name}`, () => {
    const report = detectTestRuns(miss.log, { prompt: miss.prompt });
    assert.equal(report.tests_run, false, JSON.stringify(report.sightings));
  });
}

Deno.test("detectTestRuns() reports log line numbers and stops at its limit", () => {
  const log = "hello\n" + "ok | 1 passed | 0 failed (1ms)\n".repeat(30);
  const report = detectTestRuns(log, { limit: 5 });
  assert.equal(report.sightings.length, 5);
  assert.equal(report.sightings[0].logLine, 2);
});

Deno.test("detectTestRuns() reads a 20 MB log without slowing down (about 0.5 s on a quiet machine)", () => {
  const log = "compiling module foo...\n".repeat(800_000) + "3 passed in 0.2s\n";
  const t = performance.now();
  assert.equal(detectTestRuns(log).tests_run, true);
  // A loose bound that still catches anything worse than linear, on a loaded shared machine.
  assert.ok(performance.now() - t < 10_000);
});
