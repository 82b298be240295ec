import assert from "node:assert/strict";
import { type AgentEnd, exitReason } from "./exit_reason.ts";
import { lastErrorLine } from "../util/last_error_line.ts";

const base: AgentEnd = { exitCode: 1, durationMs: 10_000, rateLimited: false, logPath: "/x/s.log" };

Deno.test("exitReason() names each way an agent ends without reporting", () => {
  const cases: [Partial<AgentEnd>, string, RegExp, boolean, boolean][] = [
    [{}, "agent_failed", /^agent exited \(exit 1\) without reporting completion$/, true, false],
    [
      { logTail: ["working", "Error: ENOSPC: no space left", "bye"] },
      "agent_failed",
      /without reporting completion: Error: ENOSPC: no space left; the disk is full \(Error: ENOSPC: no space left\): free space on it, or the next attempt fails the same way$/,
      true,
      false,
    ],
    [
      { durationMs: 500 },
      "spawn_error",
      /^SpawnError: agent exited within 2s \(exit 1\); read \/x\/s\.log$/,
      true,
      true,
    ],
    [{ durationMs: 500, exitCode: 0 }, "agent_failed", /without reporting/, true, false],
    [
      { endedBy: "timeout", exitCode: 124 },
      "agent_timeout",
      /timed out \(exit 124\); partial work kept/,
      true,
      false,
    ],
    [{ endedBy: "stop", durationMs: 100 }, "agent_stopped", /^run stopped$/, true, false],
    [
      { rateLimited: true, durationMs: 100 },
      "rate_limited",
      /^rate limited: the task resumes after the cooldown$/,
      true,
      false,
    ],
    [
      { exitCode: 41, adapter: "gemini", logTail: ["Invalid auth method selected."] },
      "agent_auth_error",
      /^agent exited 41 \(auth error\): Invalid auth method selected\.; Gemini refused its auth/,
      false,
      false,
    ],
    [
      { exitCode: 127, durationMs: 20, logTail: ["sh: 1: claude: not found"] },
      "spawn_error",
      /^agent exited 127 \(command not found\): sh: 1: claude: not found$/,
      false,
      true,
    ],
    [{ exitCode: 126 }, "spawn_error", /permission denied/, false, false],
  ];
  for (const [over, kind, reason, retryable, fast] of cases) {
    const r = exitReason({ ...base, ...over });
    assert.equal(r.kind, kind, JSON.stringify(over));
    assert.match(r.reason, reason, JSON.stringify(over));
    assert.equal(r.retryable, retryable, JSON.stringify(over));
    assert.equal(r.fastExit, fast, JSON.stringify(over));
  }
});

Deno.test("lastErrorLine() prefers the last line that reads like an error", () => {
  assert.equal(lastErrorLine([]), undefined);
  assert.equal(lastErrorLine(["a", "", "b  "]), "b");
  assert.equal(
    lastErrorLine(["fatal: not a git repository", "done"]),
    "fatal: not a git repository",
  );
  assert.equal(lastErrorLine(["x".repeat(400)])!.length, 298);
});

Deno.test("exitReason() quotes the agent's error line escaped: the reason is printed, journaled and shown", () => {
  const hostile = "error: \x1b]52;c;eA==\x07\x1b[2K\rall tasks merged\u202e";
  for (const durationMs of [500, 10_000]) {
    const { reason } = exitReason({ ...base, durationMs, logTail: [hostile] });
    assert.ok(reason.includes("error: \\x1b]52;c;eA==\\x07\\x1b[2K\\rall tasks merged\\u202e"));
    // deno-lint-ignore no-control-regex -- no control character of the agent's is left
    assert.doesNotMatch(reason, /[\x00-\x1f\x7f-\x9f\u202e]/);
  }
});

Deno.test("exitReason() quotes a structured CLI's own error message, not its JSON line", () => {
  // The last lines of real runs whose provider answered 500 / 503 until the CLI gave up.
  const claude = [
    '{"type":"system","subtype":"api_retry","attempt":1,"max_retries":1,"retry_delay_ms":505,"error_status":500,"error":"server_error"}',
    '{"type":"assistant","message":{"model":"<synthetic>","role":"assistant","content":[{"type":"text","text":"API Error: 500 Internal server error. This is a server-side issue, usually temporary — try again in a moment."}]},"error":"server_error"}',
    '{"type":"result","subtype":"success","is_error":true,"api_error_status":500,"duration_ms":678,"duration_api_ms":0,"num_turns":1,"result":"API Error: 500 Internal server error. This is a server-side issue, usually temporary — try again in a moment.","stop_reason":"stop_sequence","session_id":"fbbf2f1f","total_cost_usd":0}',
  ];
  const codex = [
    '{"type":"error","message":"Reconnecting... 5/5 (We’re currently experiencing high demand, which may cause temporary errors.)"}',
    '{"type":"turn.failed","error":{"message":"We’re currently experiencing high demand, which may cause temporary errors."}}',
  ];
  const cases: [string, string[], number, string][] = [
    ["claude", claude, 500, "API Error: 500 Internal server error. This is a server-side issue"],
    ["claude", claude, 10_000, "API Error: 500 Internal server error. This is a server-side issue"],
    ["codex", codex, 10_000, "We’re currently experiencing high demand"],
  ];
  for (const [adapter, logTail, durationMs, said] of cases) {
    const { reason } = exitReason({ ...base, adapter, logTail, durationMs });
    assert.ok(reason.includes(`(exit 1)`), reason);
    assert.ok(reason.includes(`: ${said}`), reason);
    assert.doesNotMatch(reason, /\{"type"/, "no JSON line in the reason");
  }
});

Deno.test("exitReason() of a timed-out agent says what its CLI last said went wrong, never a tool's output", () => {
  // Gemini CLI retrying a provider that answers 500 until its timeout (its stderr, plain text).
  const gemini = [
    'Attempt 3 failed with status 500. Retrying with backoff... _ApiError: {"error":{"code":500,"message":"An internal error has occurred.","status":"INTERNAL"}}',
    "    at throwErrorIfNotOK (file:///usr/lib/node_modules/@google/gemini-cli/bundle/chunk.js:267833:24)",
    "    at async Turn.run (file:///usr/lib/node_modules/@google/gemini-cli/bundle/chunk.js:333001:24) {",
    "  status: 500",
    "}",
  ];
  // Claude Code backing off while its provider cannot be reached.
  const claude = [
    '{"type":"system","subtype":"api_retry","attempt":7,"max_retries":10,"retry_delay_ms":32346.7,"error_status":null,"error":"unknown"}',
  ];
  // A healthy agent whose test run failed: the tool's output is not the CLI's error.
  const tool = [
    '{"type":"user","message":{"role":"user","content":[{"tool_use_id":"t1","type":"tool_result","content":"Error: 1 test failed"}]}}',
  ];
  const cases: [string, string[], string][] = [
    ["gemini", gemini, "; its last error: Attempt 3 failed with status 500. Retrying with backoff"],
    ["claude", claude, "; its last error: API retry 7/10: no response, unknown"],
    ["claude", tool, ""],
  ];
  for (const [adapter, logTail, said] of cases) {
    const end = { ...base, adapter, logTail, endedBy: "timeout" as const, exitCode: 124 };
    const { reason } = exitReason(end);
    const head = "agent timed out (exit 124); partial work kept";
    if (said) assert.ok(reason.startsWith(head + said), reason);
    else assert.equal(reason, head);
  }
});

Deno.test("exitReason() never quotes the prompt, the model's words or a tool call as the agent's error", () => {
  // The last lines of real runs whose agent's command killed its CLI (kill -9 $PPID).
  const gemini = [
    "YOLO mode is enabled. All tool calls will be automatically approved.",
    "Ripgrep is not available. Falling back to GrepTool.",
    '{"type":"init","timestamp":"2026-11-29T02:10:51.910Z","session_id":"b99b","model":"auto"}',
    '{"type":"message","timestamp":"2026-11-29T02:10:51.913Z","role":"user","content":"You are a senior backend engineer. If a test failed you must fix it; report errors."}',
    '{"type":"tool_use","timestamp":"2026-11-29T02:10:52.300Z","tool_name":"run_shell_command","tool_id":"r1","parameters":{"command":"kill -9 $PPID"}}',
  ];
  const claude = [
    '{"type":"assistant","message":{"id":"msg_1","model":"claude-opus-4-8","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"kill -9 $PPID # the error must be fixed"}}]}}',
  ];
  const cases: [string, string[], number, string][] = [
    ["gemini", gemini, 1, "agent exited (exit 1) without reporting completion"],
    [
      "claude",
      claude,
      -9,
      "agent exited (exit -9, killed by SIGKILL) without reporting completion",
    ],
    [
      "gemini",
      [...gemini, "Error: spawn rg ENOENT"],
      1,
      "agent exited (exit 1) without reporting completion: Error: spawn rg ENOENT",
    ],
  ];
  for (const [adapter, logTail, exitCode, reason] of cases) {
    assert.equal(exitReason({ ...base, adapter, logTail, exitCode }).reason, reason);
  }
  // Killed within its first 2 s: the fast-exit reason names the signal too.
  assert.equal(
    exitReason({ ...base, adapter: "claude", logTail: claude, exitCode: -9, durationMs: 500 })
      .reason,
    "SpawnError: agent exited within 2s (exit -9, killed by SIGKILL); read /x/s.log",
  );
});

Deno.test("exitReason() never quotes the service's own lines of the session log as the agent's words", () => {
  const header = "──── service: agent runs in container service-s-1 (podman, image x 0123), " +
    "user 65532, memory 512 MB, 1 CPUs); network restricted: it can reach 127.0.0.1:1 (task server)";
  const cases: [Partial<AgentEnd>, RegExp][] = [
    // An agent that wrote nothing: the header was the only line of its log.
    [{ exitCode: 0, logTail: [header] }, /^agent exited \(exit 0\) without reporting completion$/],
    [
      { exitCode: 3, durationMs: 500, logTail: [header] },
      /^SpawnError: agent exited within 2s \(exit 3\); read \/x\/s\.log$/,
    ],
    [
      { exitCode: 1, logTail: ["──── service: worktree setup 1/1: npm ci", header] },
      /^agent exited \(exit 1\) without reporting completion$/,
    ],
    // What the agent said is still quoted, whatever follows it.
    [
      { exitCode: 1, logTail: [header, "fatal: cannot read", "──── service: this log reached"] },
      /without reporting completion: fatal: cannot read$/,
    ],
  ];
  for (const [end, want] of cases) {
    const { reason } = exitReason({ ...base, ...end });
    assert.match(reason, want, JSON.stringify(end.logTail));
  }
});

Deno.test("exitReason() says an agent ran out of memory when the kernel's OOM killer ended a process of its container", () => {
  const tail = ["agent: exec into a memory hog"];
  const cases: [Partial<AgentEnd>, RegExp][] = [
    [
      { exitCode: 137, outOfMemoryMb: 512, logTail: tail },
      /^agent exited \(exit 137, out of memory at memory_mb 512\) without reporting completion: agent: exec into a memory hog$/,
    ],
    [
      { exitCode: 137, durationMs: 500, outOfMemoryMb: 512, logTail: tail },
      /^SpawnError: agent exited within 2s \(exit 137, out of memory at memory_mb 512\): agent: exec/,
    ],
    [{ exitCode: 137, outOfMemoryMb: 0 }, /\(exit 137, out of memory\) without reporting/],
    [{ exitCode: 137 }, /^agent exited \(exit 137\) without reporting completion$/],
  ];
  for (const [end, want] of cases) assert.match(exitReason({ ...base, ...end }).reason, want);
});

Deno.test("an agent that echoes its prompt is not quoted with the prompt's words, however often it is retried", () => {
  const prompt = [
    "# Role: backend",
    "Goal: nothing to do here",
    'If you cannot finish, POST to "$SERVICE_SERVER_URL/tasks/$SERVICE_TASK_ID/fail" with',
    '{"reason": "<what is missing>"} instead.',
    "",
    "PREVIOUS ATTEMPT: agent exited (exit 0) without reporting completion: failed before",
  ].join("\n");
  const echoed = prompt.split("\n").map((l) => `  ${l}`);
  const cases: [string, string[], RegExp][] = [
    ["the echo alone", echoed, /without reporting completion$/],
    [
      "its own words before the echo",
      ["nothing to do for: the goal", ...echoed],
      /: nothing to do for: the goal$/,
    ],
    [
      "its own error after the echo",
      [...echoed, "Error: the model refused"],
      /: Error: the model refused$/,
    ],
    ["a short line is still its own", [...echoed, "```", "done"], /: done$/],
  ];
  for (const [name, logTail, reason] of cases) {
    const d = exitReason({ ...base, exitCode: 0, logTail, prompt });
    assert.match(d.reason, reason, name);
    assert.doesNotMatch(d.reason, /PREVIOUS ATTEMPT|what is missing/, name);
  }
  // Without the prompt known (a remote worker's report), the tail is read as before.
  assert.match(exitReason({ ...base, exitCode: 0, logTail: echoed }).reason, /PREVIOUS ATTEMPT/);
});

Deno.test("exitReason() of an agent whose own writes failed on a full disk counts its exit and says the disk is full", () => {
  const cases: [Partial<AgentEnd>, string, RegExp][] = [
    [
      { logTail: ["writing build/", "cp: error writing 'build/a.o': No space left on device"] },
      "agent_failed",
      /^agent exited \(exit 1\) without reporting completion: .*; the disk is full \(cp: error writing 'build\/a\.o': No space left on device\): free space on it/,
    ],
    [
      { durationMs: 500, logTail: ["fatal: write error: Disk quota exceeded"] },
      "spawn_error",
      /^SpawnError: agent exited within 2s .*; read \/x\/s\.log; the disk is full \(fatal: write error: Disk quota exceeded\)/,
    ],
    [{ logTail: ["Error: 3 tests failed"] }, "agent_failed", /^(?!.*disk is full).*$/],
  ];
  for (const [end, kind, want] of cases) {
    const d = exitReason({ ...base, ...end });
    assert.equal(d.kind, kind);
    assert.equal(d.retryable, true, "its own exit: the attempt counts and may be retried");
    assert.match(d.reason, want);
  }
});
