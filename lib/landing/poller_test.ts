import assert from "node:assert/strict";
import { HttpApiError } from "../http/api_error.ts";
import { hintNames, nextInterval, PrPoller, type PrPollerOptions } from "./poller.ts";

function poller(
  look: (n: number) => Promise<string>,
  changed: string[],
  over: Partial<PrPollerOptions> = {},
) {
  return new PrPoller({
    intervalMs: 10,
    maxIntervalMs: 40,
    look,
    onChange: (id) => changed.push(id),
    rate: () => ({}),
    warn: () => {},
    ...over,
  });
}

const until = async (check: () => boolean) => {
  for (let i = 0; i < 2000 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(check(), "timed out");
};

const pr = (number: number, digest: string, head = `${number}`.repeat(7)) => ({
  number,
  digest,
  head,
  branch: `agent/s-${number}`,
});

Deno.test("PrPoller: tells the run only when what the host says of a pull request changed", async () => {
  const changed: string[] = [];
  let digest = "a";
  let looks = 0;
  const p = poller(() => {
    looks++;
    return Promise.resolve(digest);
  }, changed);
  p.watch("t1", pr(1, "a"));
  p.start();
  await until(() => looks >= 3);
  assert.deepEqual(changed, [], "unchanged: nothing to tell");
  digest = "b";
  await until(() => changed.length > 0);
  await p.stop();
  assert.deepEqual(changed, ["t1"]);
});

Deno.test("nextInterval(): each look that saw nothing new waits longer, up to the cap; a change brings the short interval back", () => {
  const limits = { intervalMs: 2000, maxIntervalMs: 5000 };
  const cases: [number, boolean, number][] = [
    [2000, false, 3000],
    [3000, false, 4500],
    [4500, false, 5000],
    [5000, false, 5000],
    [5000, true, 2000],
    [3000, true, 2000],
    [500, false, 2000], // never shorter than the interval
    [90_000, false, 5000], // nor longer than the cap
  ];
  for (const [current, changed, next] of cases) {
    assert.equal(nextInterval(current, changed, limits), next, `${current} ${changed}`);
  }
});

Deno.test("PrPoller: a pull request that does not change is looked at less and less often", async () => {
  const at: number[] = [];
  const p = poller(
    () => {
      at.push(performance.now());
      return Promise.resolve("same");
    },
    [],
    { intervalMs: 20, maxIntervalMs: 60 },
  );
  p.watch("t1", pr(1, "same"));
  p.start();
  await until(() => at.length >= 6);
  await p.stop();
  const gaps = at.slice(1).map((t, i) => t - at[i]);
  // Timers never fire early: each gap is at least the grown interval (30, 45, 60, 60 ms).
  for (const [i, least] of [30, 45, 60, 60].entries()) {
    assert.ok(gaps[i] >= least - 2, `gap ${i} was ${gaps[i].toFixed(1)} ms, at least ${least}`);
  }
});

Deno.test("hintNames(): a webhook names a pull request by number, head SHA or head branch; naming none means every one", () => {
  const w = { number: 3, head: "abc1234", branch: "agent/s-3" };
  const cases: [Parameters<typeof hintNames>[0], boolean][] = [
    [{}, true],
    [{ numbers: [], shas: [], branches: [] }, true],
    [{ numbers: [3] }, true],
    [{ numbers: [4] }, false],
    [{ shas: ["abc1234"] }, true], // a check suite, a commit status
    [{ shas: ["fff9999"] }, false],
    [{ branches: ["agent/s-3"] }, true], // a pipeline's ref
    [{ branches: ["main"] }, false],
    [{ numbers: [9], shas: ["abc1234"] }, true],
  ];
  for (const [hint, named] of cases) assert.equal(hintNames(hint, w), named, JSON.stringify(hint));
});

Deno.test("PrPoller.wake(): looks at once at the pull requests a delivery names, and at no other", async () => {
  const looked: number[] = [];
  const p = poller(
    (n) => {
      looked.push(n);
      return Promise.resolve("same");
    },
    [],
    { intervalMs: 600_000, maxIntervalMs: 600_000 },
  );
  p.watch("t1", pr(1, "same", "aaaaaaa"));
  p.watch("t2", pr(2, "same", "bbbbbbb"));
  p.start();
  p.wake({ shas: ["bbbbbbb"] }); // a commit status on #2's head
  await until(() => looked.length === 1);
  assert.deepEqual(looked, [2]);
  p.wake({ numbers: [1] }); // a review on #1
  await until(() => looked.length === 2);
  // Someone else's pull request: nothing to look at. (Had it woken #2, #2 would be looked at in
  // the same round as #1 below, both at once: the count would jump past 3.)
  p.wake({ shas: ["ccccccc"], numbers: [7] });
  p.wake({ branches: ["agent/s-1"] }); // a pipeline of #1's branch
  await until(() => looked.length === 3);
  p.wake({}); // an event that names nothing: every one
  await until(() => looked.length === 5);
  await p.stop();
  assert.deepEqual(looked.slice(0, 3), [2, 1, 1]);
  assert.deepEqual(looked.slice(3).sort(), [1, 2]);
});

/** A started poller whose own interval is ten minutes: any look soon is one a delivery asked for. */
function slowPoller() {
  const looked: number[] = [];
  const p = poller(
    (n) => {
      looked.push(n);
      return Promise.resolve("green");
    },
    [],
    { intervalMs: 600_000, maxIntervalMs: 600_000 },
  );
  p.start();
  return { p, looked };
}

Deno.test("PrPoller: a delivery that came while a pull request's first step still read the host makes its first look immediate", async () => {
  const { p, looked } = slowPoller();
  p.wake({ shas: ["ccccccc"] }); // a check suite on #3's head, before the run watches #3
  p.watch("t3", pr(3, "pending", "ccccccc")); // the step read it before the check went green
  p.watch("t4", pr(4, "pending", "ddddddd")); // no delivery named this one
  // Had #4 been woken too, both would be looked at in the same round, at once.
  await until(() => looked.length === 1);
  await p.stop();
  assert.deepEqual(looked, [3]);
});

Deno.test("PrPoller: a commit status on a rebased head that came before the run watched that head makes the next look immediate", async () => {
  const { p, looked } = slowPoller();
  p.watch("t5", pr(5, "pending", "aaaaaaa")); // watched at its first head
  p.watch("t6", pr(6, "pending", "fffffff"));
  // The step rebased #5 and pushed bbbbbbb; a commit status (it names only its SHA) on it came
  // while that step still read the host, so it named no head the run watched.
  p.wake({ shas: ["bbbbbbb"] });
  p.watch("t5", pr(5, "pending", "bbbbbbb"));
  p.watch("t6", pr(6, "pending", "fffffff"));
  await until(() => looked.length === 1);
  await p.stop();
  assert.deepEqual(looked, [5], "the next look comes at once, not in ten minutes");
});

Deno.test("PrPoller: the base branch moving is a change for every pull request; the run's own sighting tells the others", async () => {
  const changed: string[] = [];
  let tip = "base-1";
  let baseLooks = 0;
  const p = poller(() => Promise.resolve("same"), changed, {
    lookBase: () => {
      baseLooks++;
      return Promise.resolve(tip);
    },
  });
  p.watch("t1", pr(1, "same"));
  p.watch("t2", pr(2, "same"));
  p.start();
  await until(() => baseLooks >= 2);
  assert.deepEqual(changed, []);
  tip = "base-2"; // a person merged something into the base
  await until(() => changed.length === 2);
  assert.deepEqual(changed.sort(), ["t1", "t2"]);
  changed.length = 0;
  p.seenBase("base-3", "t1"); // t1's own step fetched the moved base: the others are told
  assert.deepEqual(changed, ["t2"]);
  p.seenBase("base-3", "t2");
  assert.deepEqual(changed, ["t2"], "the same tip again is no move");
  await p.stop();
});

Deno.test("PrPoller.retryDelay(): a rate-limited host's Retry-After and reset are honoured, failures back off", () => {
  const p = poller(() => Promise.resolve(""), []);
  const limited = new HttpApiError("429", { status: 429, rate: { retryAfterMs: 90_000 } });
  assert.ok(p.retryDelay(limited, 1) >= 90_000);
  const exhausted = new HttpApiError("403", {
    status: 403,
    rate: { remaining: 0, resetAtMs: Date.now() + 600_000 },
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
    { warn: (l) => warnings.push(l) },
  );
  p.watch("t1", pr(1, "x"));
  p.start();
  await until(() => warnings.length > 0);
  await p.stop();
  assert.match(warnings[0], /HTTP 502.*next look within/);
  assert.deepEqual(changed, []);
});

Deno.test("PrPoller: while the host stays down the looks back off further each time; a round that only retries a step, blocked, does not reset the back-off", async () => {
  const failures: number[] = [];
  const p = poller(() => Promise.reject(new Error("HTTP 502")), [], { intervalMs: 5 });
  p.retryDelay = (_e: unknown, n: number) => {
    failures.push(n);
    // While the looks wait out the back-off, a step asks to be retried sooner (its own timer).
    if (n === 1) p.retry("t1", 5);
    return 60;
  };
  p.watch("t1", pr(1, "x"));
  p.start();
  await until(() => failures.length >= 3);
  await p.stop();
  assert.deepEqual(failures.slice(0, 3), [1, 2, 3]);
});
