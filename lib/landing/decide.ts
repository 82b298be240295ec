/**
 * What a pull request waits for, and what the service does next (pure): given what the host says
 * (the pull request, its checks and reviews, the base branch's requirements) and what the service
 * did (the head it pushed, whether it enqueued it), one verdict. It waits only for what the base
 * requires — a check nobody requires never holds a merge, and rules the token could not read are
 * left to the host's answer to the merge — except a reviewer's "request changes", which is always
 * honoured. The words of a wait are what `service status` and the board say.
 */
import type { Check, Requirements, Review, Snapshot } from "./host.ts";

/** What the service knows of its own pull request. */
export interface PrFacts {
  /** The head it pushed (its gates passed on it). */
  pushed: string;
  /** It put the pull request in the merge queue (train) already. */
  enqueued: boolean;
  /** It may merge now (false while the board's merge decision is pending). */
  mayMerge: boolean;
  /** `GitHub` or `GitLab`, for the words. */
  product: string;
}

/** The verdict on a pull request. */
export type PrVerdict =
  | { kind: "merged"; commit: string }
  | { kind: "closed"; by?: string; comment?: string }
  /** A required check failed on the pushed head. */
  | { kind: "check_failed"; check: Check }
  | { kind: "changes_requested"; reviews: Review[] }
  /** The host says it conflicts with its base. */
  | { kind: "conflict" }
  | { kind: "wait"; waitsFor: string }
  | { kind: "merge" }
  | { kind: "enqueue" };

/** `1 approving review`, `2 approving reviews`. */
function reviews(n: number): string {
  return `${n} approving review${n === 1 ? "" : "s"}`;
}

/** `` `a` `` or `` `a`, `b` `` */
function names(checks: string[]): string {
  return checks.map((c) => `\`${c}\``).join(", ");
}

/** GitHub's merge queue, GitLab's merge train. */
function queueNoun(facts: PrFacts): string {
  return facts.product === "GitLab" ? "merge train" : "merge queue";
}

/** Approvals the pull request still needs. */
export function approvalsLeft(s: Snapshot, req: Requirements): number {
  if (s.approvalsLeft !== undefined) return s.approvalsLeft;
  const approved =
    s.reviews.filter((r) =>
      r.state === "approved" && (!req.dismissStale || r.commitId === undefined ||
        r.commitId === s.pr.headSha)
    ).length;
  return Math.max(0, req.approvals - approved);
}

/** The state of each required check on the head (a required check not reported yet is pending). */
export function requiredChecks(s: Snapshot, req: Requirements): Check[] {
  return req.checks.map((name) =>
    s.checks.find((c) => c.name === name) ??
      { name, state: "pending", summary: "not reported yet", required: true }
  );
}

/** Decide what follows for a pull request (see the module comment). */
export function decidePullRequest(s: Snapshot, req: Requirements, facts: PrFacts): PrVerdict {
  const pr = s.pr;
  if (pr.state === "merged") return { kind: "merged", commit: pr.mergeCommit ?? pr.headSha };
  if (pr.state === "closed") {
    return {
      kind: "closed",
      ...(s.closedBy ? { by: s.closedBy } : {}),
      ...(s.closeComment ? { comment: s.closeComment } : {}),
    };
  }
  if (pr.headSha !== facts.pushed) {
    // Checks and reviews of another head say nothing of the work the gates passed.
    return { kind: "wait", waitsFor: `waits for ${facts.product} to see the pushed head` };
  }
  const requested = s.reviews.filter((r) => r.state === "changes_requested");
  if (requested.length > 0) return { kind: "changes_requested", reviews: requested };
  const required = requiredChecks(s, req);
  const failed = required.find((c) => c.state === "failure");
  if (failed) return { kind: "check_failed", check: failed };
  if (pr.mergeable === false) return { kind: "conflict" };
  const pending = required.filter((c) => c.state === "pending").map((c) => c.name);
  if (pending.length > 0) {
    return {
      kind: "wait",
      waitsFor: `waits for required check${pending.length === 1 ? "" : "s"} ${names(pending)}`,
    };
  }
  const left = approvalsLeft(s, req);
  if (left > 0) return { kind: "wait", waitsFor: `waits for ${reviews(left)}` };
  if (pr.draft) return { kind: "wait", waitsFor: "is a draft: mark it ready for review" };
  if (pr.mergeable === null) {
    return { kind: "wait", waitsFor: `waits for ${facts.product} to check that it merges cleanly` };
  }
  if (s.queue) {
    const where = s.queue.position !== undefined ? ` (position ${s.queue.position})` : "";
    return { kind: "wait", waitsFor: `is in the ${queueNoun(facts)}${where}` };
  }
  if (facts.enqueued) {
    // It left the queue unmerged: the queue's checks failed on the merged result.
    return {
      kind: "check_failed",
      check: {
        name: queueNoun(facts),
        state: "failure",
        summary: `the ${queueNoun(facts)} removed it without merging: its checks failed on the ` +
          "result of merging it with the changes ahead of it",
        required: true,
      },
    };
  }
  if (!facts.mayMerge) {
    return { kind: "wait", waitsFor: "is ready; waits for the merge decision on the board" };
  }
  return { kind: req.queue ? "enqueue" : "merge" };
}
