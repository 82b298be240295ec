import assert from "node:assert/strict";
import type { OutboxEntry } from "../trackers/outbox.ts";
import { writeBackLines, writeBackWaits } from "./tracker_write_back.ts";

const NOW = Date.parse("2026-11-29T12:00:00Z");

function entry(over: Partial<OutboxEntry>): OutboxEntry {
  return {
    key: `tracker_b/t/${Math.random()}`,
    tracker: "tracker_b",
    task_id: "tracker_b-octo-app-3",
    ref: "octo/app#3",
    ids: { repo: "octo/app", number: 3 },
    text: "Landed",
    landed_at: "2026-11-29T11:00:00Z",
    state: "pending",
    attempts: 0,
    next_at: "2026-11-29T11:00:00Z",
    ...over,
  };
}

Deno.test("status names the write-backs a tracker has not taken, with what it said and the next try, and those given up in the last day", () => {
  const cases: [string, OutboxEntry, string | undefined][] = [
    ["not tried yet", entry({}), undefined],
    ["sent", entry({ state: "sent", attempts: 1, done_at: "2026-11-29T11:59:00Z" }), undefined],
    [
      "a comment the tracker failed",
      entry({
        attempts: 2,
        last_error: "GitHub answered POST … with HTTP 429: slow down",
        next_at: "2026-11-29T12:01:00Z",
      }),
      "  tracker_b: comment on octo/app#3 for tracker_b-octo-app-3 waits: try 2 failed: " +
      "GitHub answered POST … with HTTP 429: slow down; next try at 2026-11-29T12:01:00Z",
    ],
    [
      "a move given up",
      entry({
        state: "abandoned",
        attempts: 5,
        last_error: "Jira answered POST … with HTTP 404: not found",
        done_at: "2026-11-29T10:00:00Z",
        move: { event: "landed", to: "Done" } as OutboxEntry["move"],
        ref: "PROJ-2",
      }),
      '  tracker_b: move PROJ-2 to "Done" (landed) for tracker_b-octo-app-3 given up after 5 ' +
      "tries: Jira answered POST … with HTTP 404: not found",
    ],
    [
      "given up two days ago",
      entry({ state: "abandoned", attempts: 5, done_at: "2026-11-27T10:00:00Z" }),
      undefined,
    ],
    [
      "superseded by a later move",
      entry({
        state: "abandoned",
        attempts: 1,
        last_error: "superseded by tracker_b/t/move/landed/3",
        done_at: "2026-11-29T11:59:00Z",
      }),
      undefined,
    ],
  ];
  for (const [name, e, line] of cases) {
    assert.deepEqual(writeBackLines(writeBackWaits([e], NOW)), line ? [line] : [], name);
  }
});
