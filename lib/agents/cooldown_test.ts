import assert from "node:assert/strict";
import { join } from "node:path";
import {
  CooldownTracker,
  loadCooldowns,
  RATE_LIMIT_COOLDOWN_S,
  saveCooldowns,
} from "./cooldown.ts";

const T0 = 1_763_719_200;

const CASES: [string, number, boolean, number][] = [
  ["blocks right after the hit", 0, true, 300],
  ["still blocks one second before the end", 299, true, 1],
  ["frees at exactly 300 s", 300, false, 0],
  ["stays free later", 1000, false, 0],
];

for (const [name, after, blocked, remaining] of CASES) {
  Deno.test(`CooldownTracker ${name}`, () => {
    const t = new CooldownTracker();
    t.recordHit("claude", T0, { rule: "token:429" });
    assert.equal(t.isBlocked("claude", T0 + after), blocked);
    assert.equal(t.remaining("claude", T0 + after), remaining);
    assert.equal(t.isBlocked("codex", T0 + after), false, "other adapters are not blocked");
  });
}

Deno.test("CooldownTracker: a later hit extends the block, an earlier one never shortens it", () => {
  const t = new CooldownTracker();
  t.recordHit("gemini", T0 + 100);
  t.recordHit("gemini", T0);
  assert.equal(t.remaining("gemini", T0 + 100), RATE_LIMIT_COOLDOWN_S);
  assert.deepEqual(t.blocked(T0 + 100), { gemini: 300 });
  t.clear("gemini");
  assert.equal(t.isBlocked("gemini", T0 + 100), false);
});

Deno.test("CooldownTracker round-trips through rate_limits.json and drops ended entries", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = join(dir, "rate_limits.json");
    const t = new CooldownTracker();
    t.recordHit("claude", T0, { rule: "anthropic:rate_limit_error", line: "{…}" });
    t.recordHit("old", T0 - 1000);
    await saveCooldowns(path, t, T0);
    const onDisk = JSON.parse(await Deno.readTextFile(path));
    assert.deepEqual(Object.keys(onDisk.cooldowns), ["claude"]);
    const back = await loadCooldowns(path);
    assert.equal(back.remaining("claude", T0 + 10), 290);
    assert.equal((await loadCooldowns(join(dir, "missing.json"))).isBlocked("claude", T0), false);
    await Deno.writeTextFile(path, "{torn");
    assert.equal((await loadCooldowns(path)).isBlocked("claude", T0), false);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("CooldownTracker.fromJSON() ignores malformed entries", () => {
  const t = CooldownTracker.fromJSON({
    cooldowns: { a: { until: "x" }, b: { until: T0 + 5, since: T0 } },
  });
  assert.equal(t.isBlocked("a", T0), false);
  assert.equal(t.remaining("b", T0), 5);
});

Deno.test("CooldownTracker: a named reset parks the adapter until then, not for the cooldown", () => {
  const t = new CooldownTracker();
  const e = t.recordHit("claude", T0, { rule: "claude:usage_limit", resetsAt: T0 + 4 * 3600 });
  assert.equal(e.until, T0 + 4 * 3600);
  assert.equal(e.named, true);
  assert.equal(t.remaining("claude", T0 + 3600), 3 * 3600);
  assert.equal(t.entry("claude", T0 + 4 * 3600), undefined, "back at the reset");
  t.recordHit("claude", T0 + 60, { rule: "token:429" });
  assert.equal(t.remaining("claude", T0 + 60), 4 * 3600 - 60, "a cooldown never shortens it");
});

Deno.test("CooldownTracker: a named reset is kept between 1 s and 32 days from the hit", () => {
  const t = new CooldownTracker();
  assert.equal(t.recordHit("codex", T0, { resetsAt: T0 - 50 }).until, T0 + 1);
  assert.equal(t.recordHit("gemini", T0, { resetsAt: T0 + 400 * 86_400 }).until, T0 + 32 * 86_400);
});

Deno.test("CooldownTracker: a named reset replaces a running cooldown, which was a guess", () => {
  const t = new CooldownTracker();
  t.recordHit("claude", T0, { rule: "claude:rate_limit_event_rejected" });
  const e = t.recordHit("claude", T0 + 1, { rule: "claude:usage_limit", resetsAt: T0 + 40 });
  assert.equal(e.until, T0 + 40, "the named reset, though sooner than the cooldown's end");
  assert.equal(e.named, true);
  t.recordHit("claude", T0 + 2, { rule: "claude:usage_limit", resetsAt: T0 + 20 });
  assert.equal(t.remaining("claude", T0 + 2), 38, "of two named resets the later stands");
});
