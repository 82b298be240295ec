import assert from "node:assert/strict";
import { summarizeLedger } from "./nudge.ts";

const rec = (id: string, verified: boolean, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    task_id: id,
    session_id: "s",
    timestamp: 1,
    tests_run: verified,
    quality_gates_run: false,
    completion_signals_checked: false,
    verified,
    ...extra,
  });

const DEFAULTS = { threshold: 0.3, min_completions: 3 };

Deno.test("summarizeLedger() of an empty ledger reports zeros and no alert", () => {
  assert.deepEqual(summarizeLedger("", DEFAULTS), {
    total_completions: 0,
    verified_count: 0,
    unverified_count: 0,
    unverified_ratio: 0,
    threshold_exceeded: false,
    nudge_threshold: 0.3,
    recent_unverified: [],
  });
});

const CASES: {
  name: string;
  lines: string[];
  settings?: typeof DEFAULTS;
  exceeded: boolean;
  ratio: number;
}[] = [
  {
    name: "below min_completions never alerts",
    lines: [rec("a", false), rec("b", false)],
    exceeded: false,
    ratio: 1,
  },
  {
    name: "exactly at the threshold does not alert (strict >)",
    lines: [
      rec("a", false),
      rec("b", true),
      rec("c", true),
      rec("d", true),
      rec("e", true),
      rec("f", true),
      rec("g", true),
      rec("h", true),
      rec("i", true),
      rec("j", true),
    ],
    settings: { threshold: 0.1, min_completions: 3 },
    exceeded: false,
    ratio: 0.1,
  },
  {
    name: "one in three exceeds 0.3 on the unrounded ratio",
    lines: [rec("a", false), rec("b", true), rec("c", true)],
    exceeded: true,
    ratio: 0.333,
  },
  {
    name: "threshold 1.0 never alerts",
    lines: [rec("a", false), rec("b", false), rec("c", false)],
    settings: { threshold: 1, min_completions: 3 },
    exceeded: false,
    ratio: 1,
  },
  {
    name: "threshold 0.0 alerts on any unverified",
    lines: [rec("a", false), rec("b", true), rec("c", true), rec("d", true)],
    settings: { threshold: 0, min_completions: 3 },
    exceeded: true,
    ratio: 0.25,
  },
  {
    name: "a record's own verified field is authoritative",
    lines: [rec("a", false, { tests_run: true }), rec("b", true), rec("c", true)],
    exceeded: true,
    ratio: 0.333,
  },
  {
    name: "torn lines are skipped",
    lines: [rec("a", true), rec("b", true), rec("c", true), '{"task_id":"x",'],
    exceeded: false,
    ratio: 0,
  },
];

for (const c of CASES) {
  Deno.test(`summarizeLedger(): ${c.name}`, () => {
    const s = summarizeLedger(c.lines.join("\n") + "\n", c.settings ?? DEFAULTS);
    assert.equal(s.threshold_exceeded, c.exceeded);
    assert.equal(s.unverified_ratio, c.ratio);
  });
}

Deno.test("summarizeLedger() lists recent unverified newest first", () => {
  const s = summarizeLedger(
    [rec("old", false), rec("ok", true), rec("new", false)].join("\n"),
    DEFAULTS,
  );
  assert.deepEqual(s.recent_unverified, ["new", "old"]);
  assert.equal(s.unverified_count, 2);
  assert.equal(s.verified_count, 1);
});

Deno.test("summarizeLedger(): recent_unverified lists distinct task ids, newest first", () => {
  const text = [rec("a", false), rec("b", false), rec("a", false), rec("c", true)].join("\n");
  const n = summarizeLedger(text, DEFAULTS);
  assert.deepEqual(n.recent_unverified, ["a", "b"]);
  assert.equal(n.unverified_count, 3, "every record counts; only the list is distinct");
});

Deno.test("summarizeLedger(): max_age_hours ages old records out of the summary and the alert", () => {
  const now = 1_700_000_000_000;
  const at = (hoursAgo: number) => ({ timestamp: now / 1000 - hoursAgo * 3600 });
  const text = [
    rec("old1", false, at(50)),
    rec("old2", false, at(49)),
    rec("new1", true, at(2)),
    rec("new2", true, at(1)),
    rec("new3", false, at(0.5)),
  ].join("\n");
  const all = summarizeLedger(text, DEFAULTS, now);
  assert.equal(all.total_completions, 5);
  assert.equal(all.threshold_exceeded, true);
  const recent = summarizeLedger(text, { ...DEFAULTS, max_age_hours: 48 }, now);
  assert.equal(recent.total_completions, 3);
  assert.equal(recent.unverified_count, 1);
  assert.equal(recent.threshold_exceeded, true, "1/3 > 0.3");
  assert.deepEqual(recent.recent_unverified, ["new3"]);
  const day = summarizeLedger(text, { ...DEFAULTS, max_age_hours: 1.5 }, now);
  assert.equal(day.total_completions, 2);
  assert.equal(day.threshold_exceeded, false, "below min_completions");
});
