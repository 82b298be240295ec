import assert from "node:assert/strict";
import { type AgentEnd, exitReason } from "./exit_reason.ts";

const base: AgentEnd = { exitCode: 1, durationMs: 10_000, rateLimited: false, logPath: "/x/s.log" };

Deno.test("exitReason() names each way an agent ends without reporting", () => {
  const cases: [Partial<AgentEnd>, RegExp, boolean][] = [
    [{}, /^agent exited \(code 1\) without reporting completion$/, false],
    [
      { durationMs: 500 },
      /^SpawnError: agent exited within 2s \(exit 1\); read \/x\/s\.log$/,
      true,
    ],
    [{ durationMs: 500, exitCode: 0 }, /without reporting completion/, false],
    [{ endedBy: "timeout", exitCode: 124 }, /timed out \(exit 124\); partial work kept/, false],
    [{ endedBy: "stop", durationMs: 100 }, /^run stopped$/, false],
    [
      { rateLimited: true, durationMs: 100 },
      /^rate limited: the task resumes after the cooldown$/,
      false,
    ],
  ];
  for (const [over, reason, fast] of cases) {
    const r = exitReason({ ...base, ...over });
    assert.match(r.reason, reason, JSON.stringify(over));
    assert.equal(r.fastExit, fast, JSON.stringify(over));
  }
});
