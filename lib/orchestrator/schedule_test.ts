import assert from "node:assert/strict";
import {
  decideSchedule,
  ownedFilesOverlap,
  type SchedulableTask,
  type ScheduleInput,
} from "./schedule.ts";

const task = (id: string, over: Partial<SchedulableTask> = {}): SchedulableTask => ({
  id,
  priority: 2,
  seq: Number(id.replace(/\D/g, "")) || 0,
  owned_files: [],
  depends_on: [],
  ...over,
});

const base: ScheduleInput = {
  ready: [],
  running: [],
  maxAgents: 4,
  pendingMerge: new Set(),
  cooldownS: 0,
  readOnly: false,
};

Deno.test("decideSchedule() starts lower priority numbers first, then creation order, up to max_agents", () => {
  const d = decideSchedule({
    ...base,
    maxAgents: 2,
    ready: [
      task("t3", { priority: 2 }),
      task("t1", { priority: 3 }),
      task("t2", { priority: 1 }),
      task("t4", { priority: 2 }),
    ],
  });
  assert.deepEqual(d.start, ["t2", "t3"]);
  assert.deepEqual(d.waiting.get("t4"), { kind: "max_agents" });
});

Deno.test("decideSchedule() never runs two tasks whose owned_files overlap", () => {
  const d = decideSchedule({
    ...base,
    running: [task("r1", { owned_files: ["src/parser/"] })],
    ready: [
      task("t1", { owned_files: ["src/parser/lex.ts"] }),
      task("t2", { owned_files: ["docs/**/*.md"] }),
      task("t3", { owned_files: ["docs/guide.md"] }),
      task("t4", { owned_files: ["README.md"] }),
    ],
  });
  assert.deepEqual(d.start, ["t2", "t4"]);
  assert.deepEqual(d.waiting.get("t1"), {
    kind: "owned_files",
    with: "r1",
    file: "src/parser/lex.ts",
  });
  assert.equal(d.waiting.get("t3")?.kind, "owned_files");
});

Deno.test("decideSchedule() holds a task whose dependency's merge is pending", () => {
  const d = decideSchedule({
    ...base,
    pendingMerge: new Set(["a"]),
    ready: [task("t1", { depends_on: ["a"] }), task("t2")],
  });
  assert.deepEqual(d.start, ["t2"]);
  assert.deepEqual(d.waiting.get("t1"), { kind: "dependency_merge", dependency: "a" });
});

Deno.test("decideSchedule() starts nothing during a cooldown or in read-only mode", () => {
  assert.deepEqual(
    decideSchedule({ ...base, cooldownS: 12.2, ready: [task("t1")] }).waiting.get("t1"),
    { kind: "cooldown", seconds: 13 },
  );
  assert.deepEqual(decideSchedule({ ...base, readOnly: true, ready: [task("t1")] }).start, []);
});

Deno.test("ownedFilesOverlap() matches equal paths, directories and globs, not siblings", () => {
  const cases: [string[], string[], boolean][] = [
    [["a.ts"], ["./a.ts"], true],
    [["src"], ["src/x.ts"], true],
    [["src/"], ["srcs/x.ts"], false],
    [["**/*.md"], ["docs/a.md"], true],
    [["a.ts"], ["b.ts"], false],
    [[], ["a"], false],
  ];
  for (const [a, b, want] of cases) {
    assert.equal(ownedFilesOverlap(a, b) !== undefined, want, `${a} ~ ${b}`);
  }
});

Deno.test("decideSchedule() holds a task whose owned_files overlap work that has not merged yet", () => {
  const d = decideSchedule({
    ...base,
    unmerged: [task("done1", { owned_files: ["textkit/__init__.py"] })],
    ready: [
      task("t1", { owned_files: ["textkit/__init__.py", "textkit/slug.py"] }),
      task("t2", { owned_files: ["textkit/wrap.py"] }),
    ],
  });
  assert.deepEqual(d.start, ["t2"]);
  assert.deepEqual(d.waiting.get("t1"), {
    kind: "owned_files",
    with: "done1",
    file: "textkit/__init__.py",
  });
});

Deno.test("decideSchedule() honours roles.<role>.max_agents beside max_agents", () => {
  const d = decideSchedule({
    ...base,
    maxAgents: 4,
    roleMaxAgents: { docs: 1 },
    running: [task("r1", { role: "docs" })],
    ready: [task("t1", { role: "docs" }), task("t2", { role: "backend" })],
  });
  assert.deepEqual(d.start, ["t2"]);
  assert.deepEqual(d.waiting.get("t1"), { kind: "role_max_agents", role: "docs", max: 1 });
});
