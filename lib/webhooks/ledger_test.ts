import assert from "node:assert/strict";
import { join } from "node:path";
import { ReplayLedger } from "./ledger.ts";

async function tmpLedger(): Promise<{ dir: string; path: string } & AsyncDisposable> {
  const dir = await Deno.makeTempDir({ prefix: "ledger-" });
  return {
    dir,
    path: join(dir, "runtime", "tracker_webhook_ledger.jsonl"),
    [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }),
  };
}

async function accept(ledger: ReplayLedger, adapter: string, key: string): Promise<boolean> {
  if (await ledger.claim(adapter, key) === "seen") return false;
  await ledger.commit(adapter, key);
  return true;
}

Deno.test("ledger: a fresh workspace gets its directory; accepted keys survive a restart", async () => {
  await using t = await tmpLedger();
  const { ledger } = await ReplayLedger.open(t.path);
  assert.equal(await accept(ledger, "tracker_b", "d-1"), true);
  assert.equal(await accept(ledger, "tracker_b", "d-1"), false);
  await ledger.close();
  const lines = (await Deno.readTextFile(t.path)).trim().split("\n").map((l) => JSON.parse(l));
  assert.deepEqual(lines.map((l) => [l.adapter, l.key]), [["tracker_b", "d-1"]]);
  const { ledger: again } = await ReplayLedger.open(t.path);
  assert.equal(again.has("tracker_b", "d-1"), true);
  assert.equal(await accept(again, "tracker_b", "d-1"), false);
  await again.close();
});

Deno.test("ledger: keys are per adapter", async () => {
  await using t = await tmpLedger();
  const { ledger } = await ReplayLedger.open(t.path);
  assert.equal(await accept(ledger, "tracker_b", "same"), true);
  assert.equal(await accept(ledger, "tracker_d", "same"), true);
  await ledger.close();
});

Deno.test("ledger: 50 concurrent identical deliveries are accepted exactly once", async () => {
  await using t = await tmpLedger();
  const { ledger } = await ReplayLedger.open(t.path);
  const results = await Promise.all(
    Array.from({ length: 50 }, () => accept(ledger, "tracker_b", "race")),
  );
  assert.equal(results.filter(Boolean).length, 1);
  await ledger.close();
  assert.equal((await Deno.readTextFile(t.path)).trim().split("\n").length, 1);
});

Deno.test("ledger: a released claim (processing failed) lets the next delivery in", async () => {
  await using t = await tmpLedger();
  const { ledger } = await ReplayLedger.open(t.path);
  assert.equal(await ledger.claim("tracker_b", "k"), "new");
  const waiter = ledger.claim("tracker_b", "k");
  ledger.release("tracker_b", "k");
  assert.equal(await waiter, "new");
  await ledger.commit("tracker_b", "k");
  assert.equal(await ledger.claim("tracker_b", "k"), "seen");
  await ledger.close();
});

Deno.test("ledger: a torn tail is repaired on open (good lines kept, the rest moved aside)", async () => {
  await using t = await tmpLedger();
  await Deno.mkdir(join(t.dir, "runtime"));
  await Deno.writeTextFile(
    t.path,
    '{"adapter":"tracker_b","key":"a","at":"2026-01-01T00:00:00.000Z"}\n' +
      '{"adapter":"tracker_b","key":"b","at":"2026-01-01T00:00:00.000Z"}\n{"adapter":"tra',
  );
  const { ledger, repair } = await ReplayLedger.open(t.path);
  assert.equal(repair?.kept, 2);
  assert.equal(repair?.dropped, 1);
  assert.ok(
    repair?.movedTo && (await Deno.readTextFile(repair.movedTo)).includes('{"adapter":"tra'),
  );
  assert.equal(ledger.has("tracker_b", "a"), true);
  assert.equal(ledger.has("tracker_b", "b"), true);
  assert.equal(await accept(ledger, "tracker_b", "c"), true);
  await ledger.close();
  for (const line of (await Deno.readTextFile(t.path)).trim().split("\n")) JSON.parse(line);
});

Deno.test("ledger: memory keeps the last N keys (LRU) and compaction keeps the file bounded", async () => {
  await using t = await tmpLedger();
  const { ledger } = await ReplayLedger.open(t.path, { capacity: 4, compactAfter: 8 });
  for (let i = 0; i < 20; i++) assert.equal(await accept(ledger, "tracker_e", `k${i}`), true);
  assert.equal(ledger.size, 4);
  assert.equal(ledger.has("tracker_e", "k19"), true);
  assert.equal(ledger.has("tracker_e", "k15"), false);
  await ledger.close();
  const lines = (await Deno.readTextFile(t.path)).trim().split("\n");
  assert.ok(lines.length <= 4 + 8, `file has ${lines.length} lines`);
  const { ledger: again } = await ReplayLedger.open(t.path, { capacity: 4 });
  assert.equal(again.has("tracker_e", "k19"), true);
  assert.equal(again.has("tracker_e", "k16"), true);
  await again.close();
});

Deno.test("ledger: 500 concurrent accepts across compactions are all durable and parse", async () => {
  await using t = await tmpLedger();
  const { ledger } = await ReplayLedger.open(t.path, { capacity: 1000, compactAfter: 64 });
  const keys = Array.from({ length: 500 }, (_, i) => `c${i}`);
  const results = await Promise.all(keys.map((k) => accept(ledger, "tracker_b", k)));
  assert.ok(results.every(Boolean));
  await ledger.close();
  const { ledger: again } = await ReplayLedger.open(t.path, { capacity: 1000 });
  for (const k of keys) assert.equal(again.has("tracker_b", k), true, k);
  await again.close();
});
