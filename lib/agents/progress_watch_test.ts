import assert from "node:assert/strict";
import { ProgressWatch, quietness, reconnectNotice } from "./progress_watch.ts";

Deno.test("reconnectNotice() knows Codex's reconnect events and plain retry lines, and nothing else", () => {
  const cases: [string, string | undefined][] = [
    [
      '{"type":"error","message":"Reconnecting... waiting for network (Connection failed: error sending request)"}',
      "Reconnecting... waiting for network (Connection failed: error sending request)",
    ],
    [
      '{"type":"error","message":"Reconnecting... 2/5 (stream disconnected before completion)"}',
      "Reconnecting... 2/5 (stream disconnected before completion)",
    ],
    [
      "2026-11-28T12:05:31.722947Z ERROR codex_api::endpoint::responses_websocket: failed to connect to Responses WebSocket stage=Unknown",
      "ERROR codex_api::endpoint::responses_websocket: failed to connect to Responses WebSocket stage=Unknown",
    ],
    ["Reconnecting...", "Reconnecting..."],
    ["⚠ Retrying in 5s (attempt 2)", "⚠ Retrying in 5s (attempt 2)"],
    // Progress, or other errors: not a reconnect.
    ['{"type":"error","message":"unexpected status 401 Unauthorized"}', undefined],
    [
      '{"type":"item.completed","item":{"type":"agent_message","text":"Reconnecting is easy"}}',
      undefined,
    ],
    ["I will retry the tests after fixing the import", undefined],
    ["{not json", undefined],
  ];
  for (const [line, expected] of cases) assert.equal(reconnectNotice(line), expected, line);
});

Deno.test("ProgressWatch: reconnect notices are no progress; the first one starts the stall, progress ends it", () => {
  const w = new ProgressWatch();
  w.see('{"type":"turn.started"}', 1_000);
  assert.deepEqual(w.state, { lastProgressAt: 1_000 });
  w.see('{"type":"error","message":"Reconnecting... 1/5"}', 2_000);
  w.see("", 2_500);
  w.see('{"type":"error","message":"Reconnecting... waiting for network"}', 9_000);
  assert.deepEqual(w.state, {
    lastProgressAt: 1_000,
    reconnecting: { since: 2_000, message: "Reconnecting... waiting for network" },
  });
  w.see('{"type":"item.completed"}', 10_000);
  assert.deepEqual(w.state, { lastProgressAt: 10_000 });
});

Deno.test("quietness() gives ages from a heartbeat's figures", () => {
  assert.deepEqual(
    quietness({
      last_output_at: 990,
      last_progress_at: 900,
      reconnecting: { since: 910, message: "Reconnecting..." },
    }, 1000),
    {
      last_output_age_s: 10,
      last_progress_age_s: 100,
      reconnecting: { for_s: 90, message: "Reconnecting..." },
    },
  );
  assert.deepEqual(quietness({ last_output_at: null }, 1000), {
    last_output_age_s: null,
    last_progress_age_s: null,
  });
});
