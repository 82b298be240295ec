import assert from "node:assert/strict";
import { parsePlan, PlanError } from "./plan.ts";
import { YamlSyntaxError } from "../config/yaml_source.ts";
import { ValidationError } from "../config/errors.ts";

const ROLES = new Set(["backend", "qa", "docs"]);

Deno.test("parsePlan() turns stage dependencies into task depends_on, with defaults", () => {
  const plan = parsePlan(
    `stages:
  - name: test
    depends_on: [build]
    steps:
      - goal: Test it
        role: qa
        completion_signals: [{test_passes: "deno task test"}]
  - name: build
    steps:
      - goal: Build A
        role: backend
        priority: 1
        owned_files: [src/a.ts]
      - goal: Build B
        role: backend
        scope: small
        complexity: low
        batch_eligible: true
`,
    "plan.yaml",
    { roles: ROLES, templates: ROLES },
  );
  assert.deepEqual(plan.tasks.map((t) => [t.id, t.depends_on]), [
    ["test-1", ["build-1", "build-2"]],
    ["build-1", []],
    ["build-2", []],
  ]);
  const b = plan.tasks[2];
  assert.equal(b.priority, 2);
  assert.equal(b.scope, "small");
  assert.equal(b.complexity, "low");
  assert.equal(b.batch_eligible, true);
  assert.equal(plan.tasks[1].scope, "medium");
  assert.deepEqual(plan.tasks[0].completion_signals, [{ test_passes: "deno task test" }]);
});

const BROKEN: {
  name: string;
  text: string;
  error?: new (...a: never[]) => Error;
  message: RegExp;
}[] = [
  {
    name: "malformed YAML",
    text: "stages: [\n",
    error: YamlSyntaxError,
    message: /not valid YAML/,
  },
  { name: "no stages key", text: "name: x\n", message: /stages: missing required key 'stages'/ },
  { name: "empty stages yields no tasks", text: "stages: []\n", message: /at least one stage/ },
  {
    name: "a stage without steps",
    text: "stages:\n  - name: a\n    steps: []\n",
    message: /stages\[0\]\.steps: a stage needs at least one step/,
  },
  {
    name: "unknown step key with suggestion",
    text:
      "stages:\n  - name: a\n    steps:\n      - goal: g\n        role: qa\n        priorty: 1\n",
    message:
      /:6:9: stages\[0\]\.steps\[0\]\.priorty: unknown key 'priorty' \(did you mean 'priority'\?\)/,
  },
  {
    name: "role not in config",
    text: "stages:\n  - name: a\n    steps:\n      - goal: g\n        role: bakend\n",
    message:
      /:5:15: stages\[0\]\.steps\[0\]\.role: role 'bakend' is not listed.*did you mean 'backend'/,
  },
  {
    name: "missing goal",
    text: "stages:\n  - name: a\n    steps:\n      - role: qa\n",
    message: /stages\[0\]\.steps\[0\]\.goal: missing required key 'goal'/,
  },
  {
    name: "bad scope",
    text: "stages:\n  - name: a\n    steps:\n      - {goal: g, role: qa, scope: huge}\n",
    message: /stages\[0\]\.steps\[0\]\.scope/,
  },
  {
    name: "unknown stage dependency",
    text: "stages:\n  - name: a\n    depends_on: [b]\n    steps: [{goal: g, role: qa}]\n",
    message: /stages\[0\]\.depends_on\[0\]: stage 'a' depends on unknown stage 'b'/,
  },
  {
    name: "cyclic stage dependencies",
    text:
      "stages:\n  - name: a\n    depends_on: [b]\n    steps: [{goal: g, role: qa}]\n  - name: b\n    depends_on: [a]\n    steps: [{goal: h, role: qa}]\n",
    message: /cyclic stage dependencies: a -> b -> a/,
  },
  {
    name: "duplicate step ids",
    text:
      "stages:\n  - name: a\n    steps: [{id: x, goal: g, role: qa}, {id: x, goal: h, role: qa}]\n",
    message: /task id 'x' is used twice/,
  },
  {
    name: "hostile step id",
    text: "stages:\n  - name: a\n    steps: [{id: ../x, goal: g, role: qa}]\n",
    message: /stages\[0\]\.steps\[0\]\.id/,
  },
  {
    name: "unknown completion signal",
    text:
      "stages:\n  - name: a\n    steps: [{goal: g, role: qa, completion_signals: [{file_exists: a}]}]\n",
    message: /completion_signals/,
  },
  {
    name: "duplicate stage names",
    text:
      "stages:\n  - {name: a, steps: [{goal: g, role: qa}]}\n  - {name: a, steps: [{goal: h, role: qa}]}\n",
    message: /duplicate stage name 'a'/,
  },
];

for (const c of BROKEN) {
  Deno.test(`parsePlan() rejects: ${c.name}`, () => {
    assert.throws(() => parsePlan(c.text, "plan.yaml", { roles: ROLES }), (e: unknown) => {
      assert.ok(
        e instanceof (c.error ?? PlanError) || e instanceof Error && e.name === "ValidationError",
        `${(e as Error).name}: ${(e as Error).message}`,
      );
      assert.match((e as Error).message, c.message);
      return true;
    });
  });
}

Deno.test("parsePlan() refuses a role without a template directory", () => {
  assert.throws(
    () =>
      parsePlan("stages:\n  - {name: a, steps: [{goal: g, role: docs}]}\n", "p.yaml", {
        roles: ROLES,
        templates: new Set(["qa"]),
      }),
    /role 'docs' has no template directory[\s\S]*templates\/roles\/docs/,
  );
});

Deno.test("a plan with several mistakes names each of them at once, the first with its fix, a misspelt key once", () => {
  const text = `stages:
  - name: a
    steps:
      - { goal: one, role: backend, depends_on: [b] }
      - { goal: two, rol: backend }
      - { goal: three, role: backend, priority: high }
      - { role: backend }
`;
  let err: unknown;
  try {
    parsePlan(text, "plan.yaml", { roles: ROLES });
  } catch (e) {
    err = e;
  }
  assert.ok(err instanceof ValidationError);
  assert.equal(err.path, "stages[0].steps[0].depends_on");
  assert.equal(err.problem, "unknown key 'depends_on' here (it is a key of stages[0])");
  assert.match(
    err.fix!,
    /^move 'depends_on' to stages\[0\], or remove 'depends_on'; known keys here: id, title, goal/,
  );
  assert.deepEqual(err.also.map((p) => [p.path, p.position.line, p.problem]), [
    ["stages[0].steps[1].rol", 5, "unknown key 'rol' (did you mean 'role'?)"],
    ["stages[0].steps[2].priority", 6, 'expected number, got string ("high")'],
    ["stages[0].steps[3].goal", 7, "missing required key 'goal' in stages[0].steps[3]"],
  ]);
  assert.match(err.message, /\n {2}also 5:\d+: stages\[0\]\.steps\[1\]\.rol: unknown key 'rol'/);
  assert.doesNotMatch(
    err.message,
    /steps\[1\]\.role: missing/,
    "the typo is not also a missing key",
  );
});
