/**
 * Every webhook kind the landing listens to (GitHub: `pull_request`, `pull_request_review`,
 * `check_run`, `check_suite`, `status`; GitLab: Merge Request Hook, Pipeline Hook), as the
 * handlers read it and the landing takes it: which pull requests it names, by what.
 */
import assert from "node:assert/strict";
import { githubHandler } from "../trackers/github/webhook.ts";
import { gitlabHandler } from "../trackers/gitlab/webhook.ts";
import { hintNames } from "./poller.ts";
import { wakeOf } from "./wake.ts";

const SHA = "0123456789abcdef0123456789abcdef01234567";
const OTHER = "fedcba9876543210fedcba9876543210fedcba98";
const REPO = { id: 9, full_name: "acme/widget" };
const PROJECT = { id: 7, path_with_namespace: "acme/widget" };
const ours = { number: 12, head: SHA, branch: "agent/s-1" };
const theirs = { number: 13, head: OTHER, branch: "agent/s-2" };

function github(event: string, payload: unknown) {
  return githubHandler.hostEvent!(payload, new Headers({ "x-github-event": event }));
}

function gitlab(payload: unknown) {
  return gitlabHandler.hostEvent!(payload, new Headers());
}

const pr = {
  number: 12,
  state: "open",
  merged: false,
  head: { ref: "agent/s-1", sha: SHA },
  base: { ref: "main", sha: OTHER },
};

/** [what, the host event, names ours, names theirs, says the base moved]. */
const CASES: [string, ReturnType<typeof github>, boolean, boolean, boolean][] = [
  [
    "pull_request synchronize (by number, head and branch)",
    github("pull_request", {
      action: "synchronize",
      number: 12,
      pull_request: pr,
      repository: REPO,
    }),
    true,
    false,
    false,
  ],
  [
    "pull_request closed, merged into main: the base moved",
    github("pull_request", {
      action: "closed",
      number: 13,
      pull_request: { ...pr, number: 13, merged: true, head: { ref: "x", sha: OTHER } },
      repository: REPO,
    }),
    false,
    true,
    true,
  ],
  [
    "pull_request_review submitted",
    github("pull_request_review", {
      action: "submitted",
      review: { state: "approved", commit_id: SHA },
      pull_request: pr,
      repository: REPO,
    }),
    true,
    false,
    false,
  ],
  [
    "check_run completed (its pull requests and head SHA)",
    github("check_run", {
      action: "completed",
      check_run: {
        head_sha: SHA,
        pull_requests: [{ number: 12 }],
        check_suite: { head_branch: "agent/s-1" },
      },
      repository: REPO,
    }),
    true,
    false,
    false,
  ],
  [
    "check_suite completed with no pull request listed (a fork's): by head SHA",
    github("check_suite", {
      action: "completed",
      check_suite: { head_sha: SHA, head_branch: null, pull_requests: [] },
      repository: REPO,
    }),
    true,
    false,
    false,
  ],
  [
    "status: by SHA and the branches holding it",
    github("status", {
      sha: OTHER,
      context: "ci/lint",
      state: "success",
      branches: [{ name: "agent/s-2", commit: { sha: OTHER } }],
      repository: REPO,
    }),
    false,
    true,
    false,
  ],
  [
    "merge_group: names nothing, so every pull request is looked at",
    github("merge_group", { action: "checks_requested", repository: REPO }),
    true,
    true,
    false,
  ],
  [
    "GitLab Merge Request Hook (iid, last commit, source branch)",
    gitlab({
      object_kind: "merge_request",
      project: PROJECT,
      object_attributes: {
        iid: 12,
        action: "approved",
        source_branch: "agent/s-1",
        target_branch: "main",
        last_commit: { id: SHA },
      },
    }),
    true,
    false,
    false,
  ],
  [
    "GitLab Merge Request Hook, merged: the base moved",
    gitlab({
      object_kind: "merge_request",
      project: PROJECT,
      object_attributes: {
        iid: 13,
        action: "merge",
        source_branch: "agent/s-2",
        target_branch: "main",
        last_commit: { id: OTHER },
      },
    }),
    false,
    true,
    true,
  ],
  [
    "GitLab Pipeline Hook of a branch pipeline (sha and ref)",
    gitlab({
      object_kind: "pipeline",
      project: PROJECT,
      object_attributes: { id: 1, ref: "agent/s-1", sha: SHA, status: "success" },
    }),
    true,
    false,
    false,
  ],
  [
    "GitLab Pipeline Hook of a merge request pipeline (refs/merge-requests/13/head)",
    gitlab({
      object_kind: "pipeline",
      project: PROJECT,
      object_attributes: {
        id: 2,
        ref: "refs/merge-requests/13/head",
        sha: "abcdef1",
        status: "failed",
      },
    }),
    false,
    true,
    false,
  ],
];

Deno.test("every webhook kind wakes the landing of the pull request it concerns, and of no other", () => {
  for (const [what, event, namesOurs, namesTheirs, baseMoved] of CASES) {
    assert.ok(event, what);
    const wake = wakeOf(event, { provider: event.provider, repo: "acme/widget", base: "main" });
    assert.ok(wake, what);
    assert.equal(hintNames(wake.hint, ours), namesOurs, `${what}: ours`);
    assert.equal(hintNames(wake.hint, theirs), namesTheirs, `${what}: theirs`);
    assert.equal(wake.baseMoved, baseMoved, `${what}: base moved`);
  }
});

Deno.test("a delivery about another repository, or another host, wakes nothing", () => {
  const event = github("check_suite", {
    check_suite: { head_sha: SHA, pull_requests: [{ number: 12 }] },
    repository: { id: 10, full_name: "acme/other" },
  })!;
  assert.equal(wakeOf(event, { provider: "github", repo: "acme/widget", base: "main" }), undefined);
  assert.equal(wakeOf(event, { provider: "gitlab", repo: "acme/other", base: "main" }), undefined);
  assert.ok(wakeOf(event, { provider: "github", repo: "ACME/Other", base: "main" }));
});

Deno.test("hostile keys in a delivery are dropped, never passed on: bad SHAs, branch names with spaces or control characters, non-numbers, floods", () => {
  const event = github("check_suite", {
    check_suite: {
      head_sha: "not a sha; rm -rf /",
      head_branch: "a b\u0000c",
      pull_requests: [
        { number: "12" },
        { number: -1 },
        { number: 1.5 },
        { number: 99999999999 },
        ...Array.from({ length: 500 }, (_, i) => ({ number: i + 1 })),
      ],
    },
    repository: REPO,
  })!;
  assert.equal(event.shas, "");
  assert.equal(event.branches, "");
  const numbers = event.numbers.split(" ");
  assert.equal(numbers.length, 20, "at most 20 of a kind");
  assert.ok(numbers.every((n) => /^[1-9][0-9]*$/.test(n)), event.numbers);
  const odd = gitlab({
    object_kind: "merge_request",
    project: PROJECT,
    object_attributes: { iid: { toString: "x" }, last_commit: "abc", source_branch: 5 },
  })!;
  assert.deepEqual([odd.numbers, odd.shas, odd.branches, odd.merged_into], ["", "", "", ""]);
});
