import assert from "node:assert/strict";
import { decidePullRequest, type PrFacts, type PrVerdict } from "./decide.ts";
import type { Check, Requirements, Review, Snapshot } from "./host.ts";

const HEAD = "a".repeat(40);

function snapshot(over: Partial<Snapshot["pr"]> = {}, rest: Partial<Snapshot> = {}): Snapshot {
  return {
    pr: {
      number: 7,
      url: "https://github.test/o/r/pull/7",
      state: "open",
      headBranch: "agent/s1",
      headSha: HEAD,
      baseBranch: "main",
      draft: false,
      mergeable: true,
      ...over,
    },
    checks: [],
    reviews: [],
    ...rest,
  };
}

const NONE: Requirements = {
  checks: [],
  approvals: 0,
  dismissStale: false,
  queue: false,
  upToDate: false,
  sources: [],
  unread: [],
};
const FACTS: PrFacts = { pushed: HEAD, enqueued: false, mayMerge: true, product: "GitHub" };

const check = (name: string, state: Check["state"], required = true): Check => ({
  name,
  state,
  summary: `${name} said ${state}`,
  required,
});
const review = (user: string, state: Review["state"], commitId = HEAD): Review => ({
  id: user,
  user,
  state,
  body: `${user} ${state}`,
  commitId,
});

const CASES: {
  name: string;
  s: Snapshot;
  req?: Partial<Requirements>;
  facts?: Partial<PrFacts>;
  want: PrVerdict["kind"];
  waitsFor?: string;
}[] = [
  { name: "nothing required: it merges", s: snapshot(), want: "merge" },
  {
    name: "merged by the host (a person, the queue): the host's commit",
    s: snapshot({ state: "merged", mergeCommit: "m".repeat(40) }),
    want: "merged",
  },
  { name: "closed unmerged by a person", s: snapshot({ state: "closed" }), want: "closed" },
  {
    name: "the host has not seen the pushed head: checks of another head say nothing",
    s: snapshot({ headSha: "b".repeat(40) }, { checks: [check("ci/test", "success")] }),
    req: { checks: ["ci/test"] },
    want: "wait",
    waitsFor: "waits for GitHub to see the pushed head",
  },
  {
    name: "a required check not reported yet is waited for",
    s: snapshot(),
    req: { checks: ["ci/test"] },
    want: "wait",
    waitsFor: "waits for required check `ci/test`",
  },
  {
    name: "pending required checks are named",
    s: snapshot({}, { checks: [check("ci/test", "pending"), check("lint", "pending")] }),
    req: { checks: ["ci/test", "lint"] },
    want: "wait",
    waitsFor: "waits for required checks `ci/test`, `lint`",
  },
  {
    name: "a failing check nobody requires does not hold the merge",
    s: snapshot({}, { checks: [check("flaky", "failure", false)] }),
    want: "merge",
  },
  {
    name: "a failed required check",
    s: snapshot({}, { checks: [check("ci/test", "failure")] }),
    req: { checks: ["ci/test"] },
    want: "check_failed",
  },
  {
    name: "approvals required and missing",
    s: snapshot({}, { reviews: [review("bob", "commented")] }),
    req: { approvals: 1 },
    want: "wait",
    waitsFor: "waits for 1 approving review",
  },
  {
    name: "two approvals required, one given",
    s: snapshot({}, { reviews: [review("bob", "approved")] }),
    req: { approvals: 3 },
    want: "wait",
    waitsFor: "waits for 2 approving reviews",
  },
  {
    name: "an approval given",
    s: snapshot({}, { reviews: [review("bob", "approved")] }),
    req: { approvals: 1 },
    want: "merge",
  },
  {
    name: "a stale approval does not count when stale reviews are dismissed",
    s: snapshot({}, { reviews: [review("bob", "approved", "c".repeat(40))] }),
    req: { approvals: 1, dismissStale: true },
    want: "wait",
    waitsFor: "waits for 1 approving review",
  },
  {
    name: "the host's own count of approvals wins (GitLab approval rules)",
    s: snapshot({}, { approvalsLeft: 0 }),
    req: { approvals: 2 },
    want: "merge",
  },
  {
    name: "changes requested are honoured even when no review is required",
    s: snapshot({}, { reviews: [review("bob", "changes_requested")] }),
    want: "changes_requested",
  },
  {
    name: "changes requested come before a failed check (the new attempt reads the review)",
    s: snapshot({}, {
      reviews: [review("bob", "changes_requested")],
      checks: [check("ci/test", "failure")],
    }),
    req: { checks: ["ci/test"] },
    want: "changes_requested",
  },
  {
    name: "the host says it conflicts with its base",
    s: snapshot({ mergeable: false }),
    want: "conflict",
  },
  {
    name: "a draft waits for a person",
    s: snapshot({ draft: true }),
    want: "wait",
    waitsFor: "is a draft: mark it ready for review",
  },
  {
    name: "mergeability not computed yet",
    s: snapshot({ mergeable: null }),
    want: "wait",
    waitsFor: "waits for GitHub to check that it merges cleanly",
  },
  {
    name: "a merge queue is required: enqueue",
    s: snapshot(),
    req: { queue: true },
    want: "enqueue",
  },
  {
    name: "in the merge queue",
    s: snapshot({}, { queue: { position: 2, state: "QUEUED" } }),
    req: { queue: true },
    facts: { enqueued: true },
    want: "wait",
    waitsFor: "is in the merge queue (position 2)",
  },
  {
    name: "dropped from the merge queue unmerged: its queue checks failed",
    s: snapshot(),
    req: { queue: true },
    facts: { enqueued: true },
    want: "check_failed",
  },
  {
    name: "ready while the board's decision is pending",
    s: snapshot(),
    facts: { mayMerge: false },
    want: "wait",
    waitsFor: "is ready; waits for the merge decision on the board",
  },
];

for (const c of CASES) {
  Deno.test(`decidePullRequest(): ${c.name}`, () => {
    const v = decidePullRequest(c.s, { ...NONE, ...c.req }, { ...FACTS, ...c.facts });
    assert.equal(v.kind, c.want);
    if (c.waitsFor !== undefined) {
      assert.equal(v.kind === "wait" ? v.waitsFor : "", c.waitsFor);
    }
  });
}

Deno.test("decidePullRequest(): a merged pull request names the host's merge commit", () => {
  const v = decidePullRequest(
    snapshot({ state: "merged", mergeCommit: "m".repeat(40) }),
    NONE,
    FACTS,
  );
  assert.deepEqual(v, { kind: "merged", commit: "m".repeat(40) });
});

Deno.test("decidePullRequest(): a failed check carries its name and what it said", () => {
  const v = decidePullRequest(
    snapshot({}, { checks: [check("ci/test", "failure")] }),
    { ...NONE, checks: ["ci/test"] },
    FACTS,
  );
  assert.equal(v.kind === "check_failed" && v.check.summary, "ci/test said failure");
});
