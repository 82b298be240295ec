/** The outbox's retry policy, and the file surviving a reopen. */
import assert from "node:assert/strict";
import {
  FIRST_RETRY_DELAY_MS,
  GIVE_UP_AFTER_MS,
  MAX_REFUSED_TRIES,
  MAX_RETRY_DELAY_MS,
  nextCommentTry,
  Outbox,
  type OutboxEntry,
} from "./outbox.ts";

const T0 = Date.parse("2026-11-20T10:00:00Z");

Deno.test("nextCommentTry(): back-off doubles from 30 s to 30 min, honours Retry-After, gives up with a reason", () => {
  const down = { retryable: true };
  const refused = { retryable: false };
  const cases: [string, number, number, { retryable: boolean; retryAfterMs?: number }, string][] = [
    ["first failure", 1, T0, down, `retry +${FIRST_RETRY_DELAY_MS}`],
    ["second failure", 2, T0, down, `retry +${2 * FIRST_RETRY_DELAY_MS}`],
    ["many failures are capped", 30, T0, down, `retry +${MAX_RETRY_DELAY_MS}`],
    ["Retry-After is longer", 1, T0, { retryable: true, retryAfterMs: 600_000 }, "retry +600000"],
    [
      "a refusal is retried (a token can be fixed)",
      1,
      T0,
      refused,
      `retry +${FIRST_RETRY_DELAY_MS}`,
    ],
    [
      "refused too often",
      MAX_REFUSED_TRIES,
      T0,
      refused,
      "give up: the tracker refused it 5 times",
    ],
    [
      "down for 7 days",
      99,
      T0 + GIVE_UP_AFTER_MS,
      down,
      "give up: the tracker could not be reached for 7 days",
    ],
  ];
  for (const [name, attempts, nowMs, failure, expected] of cases) {
    const v = nextCommentTry({ attempts, landedMs: T0, nowMs }, failure);
    assert.equal(v.retry ? `retry +${v.atMs - nowMs}` : `give up: ${v.reason}`, expected, name);
  }
});

Deno.test("Outbox: an entry is added once per landing, durably, and its state survives a reopen", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/tracker_outbox.json`;
    const entry: OutboxEntry = {
      key: "tracker_b/t1/7",
      tracker: "tracker_b",
      task_id: "t1",
      ref: "o/r#1",
      ids: { repo: "o/r", number: 1 },
      text: "Landed",
      landed_at: new Date(T0).toISOString(),
      state: "pending",
      attempts: 0,
      next_at: new Date(T0).toISOString(),
    };
    const box = await Outbox.open(path);
    assert.equal(await box.add(entry), true);
    assert.equal(await box.add({ ...entry, text: "again" }), false);
    await box.update(entry.key, { attempts: 1, last_error: "HTTP 503" });
    const again = await Outbox.open(path);
    assert.deepEqual(again.pending().map((e) => [e.key, e.attempts, e.text]), [
      ["tracker_b/t1/7", 1, "Landed"],
    ]);
    await again.update(entry.key, { state: "sent", done_at: new Date().toISOString() });
    assert.deepEqual((await Outbox.open(path)).pending(), []);
    assert.equal((await Outbox.open(path)).get(entry.key)?.state, "sent");
    await Deno.writeTextFile(path, "{torn");
    await assert.rejects(() => Outbox.open(path), /is not a tracker outbox .*move it aside/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
