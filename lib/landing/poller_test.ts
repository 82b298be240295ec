import assert from "node:assert/strict";
import { TrackerApiError } from "../trackers/http.ts";
import { PrPoller } from "./poller.ts";

function poller(look: (n: number) => Promise<string>, changed: string[], warnings: string[] = []) {
  return new PrPoller({
    intervalMs: 10,
    look,
    onChange: (id) => changed.push(id),
    rate: () => ({}),
    warn: (l) => warnings.push(l),
  });
}

const until = async (check: () => boolean) => {
  for (let i = 0; i < 400 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
};

Deno.test("PrPoller: tells the run only when what the host says of a pull request changed", async () => {
  const changed: string[] = [];
  let digest = "a";
  let looks = 0;
  const p = poller(() => {
    looks++;
    return Promise.resolve(digest);
  }, changed);
  p.watch("t1", 1, "a");
  p.start();
  await until(() => looks >= 3);
  assert.deepEqual(changed, [], "unchanged: nothing to tell");
  digest = "b";
  await until(() => changed.length > 0);
  await p.stop();
  assert.deepEqual(changed, ["t1"]);
});

Deno.test("PrPoller.retryDelay(): a rate-limited host's Retry-After and reset are honoured, failures back off", () => {
  const p = poller(() => Promise.resolve(""), []);
  const limited = new TrackerApiError("429", 429, { retryAfterMs: 90_000 });
  assert.ok(p.retryDelay(limited, 1) >= 90_000);
  const exhausted = new TrackerApiError("403", 403, {
    remaining: 0,
    resetAtMs: Date.now() + 600_000,
  });
  assert.ok(p.retryDelay(exhausted, 1) >= 600_000);
  assert.ok(p.retryDelay(new Error("down"), 3) > p.retryDelay(new Error("down"), 1), "backs off");
});

Deno.test("PrPoller: a failed look is no change; the next round looks again, and says so", async () => {
  const changed: string[] = [];
  const warnings: string[] = [];
  let calls = 0;
  const p = poller(
    () => {
      calls++;
      return calls === 1 ? Promise.reject(new Error("HTTP 502")) : Promise.resolve("x");
    },
    changed,
    warnings,
  );
  p.watch("t1", 1, "x");
  p.start();
  await until(() => warnings.length > 0);
  await p.stop();
  assert.match(warnings[0], /HTTP 502.*next look in/);
  assert.deepEqual(changed, []);
});
