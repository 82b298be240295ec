import assert from "node:assert/strict";
import { renderToString } from "preact-render-to-string";
import { AttemptsView, type AttemptsViewProps } from "./attempts_view.tsx";
import { EvidenceView } from "./evidence_view.tsx";
import type { EvidenceResponse } from "../../lib/review/types.ts";

const DETAIL: AttemptsViewProps["detail"] = {
  task_id: "a",
  depends_on: [],
  planned: true,
  state: "needs_review",
  rebases: 0,
  merge_decided: false,
  attempts: [{
    session_id: "s1",
    number: 1,
    outcome: "gated",
    summary: "did it",
    verification: {
      tests_run: true,
      quality_gates_run: true,
      completion_signals_checked: false,
      verified: true,
      test_runs: [{ runner: "pytest", outcome: "passed", line: "3 passed" }],
    },
    reviews: [{ decision: "merge", principal: "op", index: 5 }],
    signals: [{ kind: "merge_conflict", detail: "x.py" }],
    retried_because: "merge conflict in x.py",
  }, { session_id: "s2", number: 2, outcome: "completed" }],
};

Deno.test("AttemptsView: each attempt under its one number, its story in order, the verified badge naming the checks that ran", () => {
  const html = renderToString(<AttemptsView detail={DETAIL} />);
  assert.ok(html.indexOf('data-attempt="2"') < html.indexOf('data-attempt="1"'), "newest first");
  const first = html.slice(html.indexOf('data-attempt="1"'));
  const order = [
    "did it",
    "verified: tests ran, quality gates ran",
    "merge</strong> by op",
    "✗ <bdi>merge_conflict: x.py",
    "new attempt: <bdi>merge conflict",
  ];
  const at = order.map((text) => first.indexOf(text));
  assert.ok(at.every((i, n) => i > 0 && (n === 0 || i > at[n - 1])), `in order: ${at}`);
  assert.match(first, / · no completion signals/);
});

Deno.test("AttemptsView: an attempt shows what its worktree got and each setup command with its exit", () => {
  const detail: AttemptsViewProps["detail"] = {
    ...DETAIL,
    state: "gated",
    attempts: [{
      session_id: "s1",
      number: 1,
      outcome: "gated",
      prepared: {
        copied: [".env"],
        linked: ["node_modules"],
        setup: [{ command: "npm ci", exit_code: 0, ms: 1200 }, {
          command: "npm run db:migrate",
          exit_code: 1,
          ms: 300,
        }],
        ports: [20000, 20001],
      },
      signals: [{ kind: "setup_failed", detail: "setup_failed: npm run db:migrate: ECONNREFUSED" }],
    }],
  };
  const html = renderToString(<AttemptsView detail={detail} />);
  assert.match(
    html,
    /Worktree: copied \.env · linked node_modules · PORT 20000 \(ports 20000,20001\)/,
  );
  assert.match(html, /data-setup-exit="0"[^>]*>✓ setup <code>npm ci<\/code>/);
  assert.match(html, /data-setup-exit="1"[^>]*>✗ setup <code>npm run db:migrate<\/code>/);
  assert.ok(html.indexOf("data-prepared") < html.indexOf("setup_failed: npm run db:migrate"));
});

Deno.test("AttemptsView: an attempt that ran on a remote worker names the worker", () => {
  const detail: AttemptsViewProps["detail"] = {
    ...DETAIL,
    attempts: [{ session_id: "s1", number: 1, outcome: "completed", worker: "box-1" }],
  };
  assert.match(
    renderToString(<AttemptsView detail={detail} />),
    /session <code>s1<\/code> · on worker box-1/,
  );
});

Deno.test("EvidenceView: a verified bundle whose checks failed says what was verified", () => {
  const bundle = {
    bundle_hash: "sha256:00",
    verified: true,
    checks: {},
    problems: [],
    producers: [],
    verdict: { passed: false, checks: [{ kind: "quality_gate", name: "lint", passed: false }] },
  } as unknown as EvidenceResponse;
  assert.match(
    renderToString(<EvidenceView bundle={bundle} />),
    /data-verified-what[^>]*>.*the bundle is intact; the checks it records did not all pass/,
  );
  const passed = { ...bundle, verdict: { passed: true, checks: [] } } as EvidenceResponse;
  assert.doesNotMatch(renderToString(<EvidenceView bundle={passed} />), /data-verified-what/);
});

Deno.test("AttemptsView: a task's pull request shows its link, state, what it waits for, its checks and reviews; a link that is not http(s) is not a link", () => {
  const pr = {
    number: 7,
    url: "https://github.com/acme/widget/pull/7",
    state: "open",
    checks: [{ name: "ci/test", state: "pending", required: true }],
    reviews: [{ user: "alice", state: "changes_requested" }],
    waits_for: "waits for required check `ci/test`",
  };
  const html = renderToString(<AttemptsView detail={{ ...DETAIL, pull_request: pr }} />);
  assert.match(html, /href="https:\/\/github.com\/acme\/widget\/pull\/7"[^>]*>\s*#7/);
  assert.match(html, /data-pr-waits="true"> waits for required check `ci\/test`/);
  assert.match(html, /ci\/test \(required\) pending/);
  assert.match(html, /alice changes requested/);
  const hostile = renderToString(
    <AttemptsView detail={{ ...DETAIL, pull_request: { ...pr, url: "javascript:alert(1)" } }} />,
  );
  assert.doesNotMatch(hostile, /javascript:/);
});

Deno.test("AttemptsView: what the agent wrote — its summary, its reason, its signals and their output, why it was retried, its log — shows reordering controls instead of obeying them", () => {
  const rlo = "\u202E";
  const detail: AttemptsViewProps["detail"] = {
    ...DETAIL,
    state: "failed",
    reason: `cannot ${rlo}exe.txt`,
    attempts: [{
      session_id: "s1",
      number: 1,
      outcome: "failed",
      summary: `flood done ${rlo} bidi`,
      signals: [{ kind: "quality_gate", name: "t", detail: `c${rlo}`, output_tail: `out${rlo}x` }],
      retried_because: `conflict in ${rlo}sj.x`,
      log: { bytes: 9, sha256: "sha256:00", verified: true, tail: `tail ${rlo}gol` },
    }],
  };
  const html = renderToString(<AttemptsView detail={detail} />);
  assert.ok(!html.includes(rlo), "no right-to-left override acts on the page");
  for (const shown of ["cannot ⟨U+202E⟩exe.txt", "flood done ⟨U+202E⟩ bidi", "out⟨U+202E⟩x"]) {
    assert.ok(html.includes(shown), `${shown} is shown`);
  }
  assert.ok(html.includes("tail ⟨U+202E⟩gol") && html.includes("conflict in ⟨U+202E⟩sj.x"));
});

Deno.test("AttemptsView: an attempt whose worker's lease ran out says it was lost, with no exit code it never saw", () => {
  const detail: AttemptsViewProps["detail"] = {
    ...DETAIL,
    state: "merged",
    attempts: [{
      session_id: "s1",
      number: 1,
      outcome: "gated",
      worker: "box-2",
      exit: { exit_code: -9, duration_ms: 39_000, lease_lost: true },
      signals: [{ kind: "agent_lost", detail: "worker box-2 stopped heartbeating" }],
    }, {
      session_id: "s2",
      number: 2,
      outcome: "merged",
      worker: "box-1",
      exit: { exit_code: 0, duration_ms: 35_000 },
    }],
  };
  const html = renderToString(<AttemptsView detail={detail} />);
  const first = html.slice(html.indexOf('data-attempt="1"'));
  assert.match(
    first,
    /on worker box-2 · lost after 39 s: its worker stopped heartbeating \(no exit seen\)/,
  );
  assert.doesNotMatch(first, /exit -9/);
  assert.match(html, /on worker box-1 · exit 0 after 35 s/);
});
