import assert from "node:assert/strict";
import { ADD_EVIDENCE, verificationAdvice } from "./advice.ts";

const roles: Record<string, string> = { a: "backend", b: "docs", c: "backend", d: "qa" };
const gates: Record<string, number> = { backend: 2, docs: 0, qa: 0 };
const context = {
  roleOf: (id: string) => roles[id],
  gatesOf: (role: string) => gates[role] ?? 0,
};

Deno.test("the alert's advice follows the gates the unverified completions' roles have", () => {
  const cases: [string, string[], typeof context | undefined, RegExp | string][] = [
    ["no configuration known", ["a"], undefined, ADD_EVIDENCE],
    ["nothing unverified", [], context, ADD_EVIDENCE],
    ["a task the store no longer holds", ["a", "gone"], context, ADD_EVIDENCE],
    ["one role without gates", ["b"], context, /^Add quality_gates \(none apply to role docs\)/],
    [
      "two roles without gates, named once each, sorted",
      ["d", "b", "a", "b"],
      context,
      /^Add quality_gates \(none apply to roles docs, qa\)/,
    ],
    [
      "every role gated: the gates never ran, and the reason is on the task",
      ["a", "c"],
      context,
      /^Their quality gates are configured but never ran on these completions: .*conflicted.*`service status` and on its card/,
    ],
  ];
  for (const [name, recent, ctx, expected] of cases) {
    const advice = verificationAdvice(recent, ctx);
    if (typeof expected === "string") assert.equal(advice, expected, name);
    else assert.match(advice, expected, name);
    if (!/^Add quality_gates/.test(advice)) {
      assert.doesNotMatch(advice, /Add quality_gates/, `${name}: never advises adding gates`);
    }
  }
});
