import assert from "node:assert/strict";
import {
  decideSchedule,
  describeWait,
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

Deno.test("decideSchedule() starts nothing while the adapter is parked or in read-only mode", () => {
  assert.deepEqual(
    decideSchedule({ ...base, parked: { default: 12.2 }, ready: [task("t1")] }).waiting.get("t1"),
    { kind: "parked", adapters: ["default"], seconds: 13 },
  );
  assert.deepEqual(decideSchedule({ ...base, readOnly: true, ready: [task("t1")] }).start, []);
});

/** `[name, chain, parked seconds, started with, or the adapters all parked and the wait]`. */
const FALLBACKS: [string, string[], Record<string, number>, string | [string[], number]][] = [
  ["nothing parked: the configured adapter", ["claude", "codex"], {}, "claude"],
  ["the configured adapter parked: the first fallback", ["claude", "codex", "gemini"], {
    claude: 3600,
  }, "codex"],
  ["two parked: the next ready fallback", ["claude", "codex", "gemini"], {
    claude: 3600,
    codex: 300,
  }, "gemini"],
  ["every adapter parked: waits for the first back", ["claude", "codex"], {
    claude: 3600,
    codex: 299.2,
  }, [["claude", "codex"], 300]],
  [
    "a park that ended: back to the configured adapter",
    ["claude", "codex"],
    { claude: 0 },
    "claude",
  ],
];

for (const [name, chain, parked, expected] of FALLBACKS) {
  Deno.test(`decideSchedule() fallback adapters: ${name}`, () => {
    const d = decideSchedule({
      ...base,
      chains: { backend: chain },
      parked,
      ready: [task("t1", { role: "backend" })],
    });
    if (typeof expected === "string") {
      assert.deepEqual(d.start, ["t1"]);
      assert.equal(d.adapters.get("t1"), expected);
    } else {
      assert.deepEqual(d.start, []);
      assert.deepEqual(d.waiting.get("t1"), {
        kind: "parked",
        adapters: expected[0],
        seconds: expected[1],
      });
    }
  });
}

Deno.test("decideSchedule() sends batch tasks to the lane without an agent slot, owned files held", () => {
  const d = decideSchedule({
    ...base,
    maxAgents: 1,
    running: [task("t0", { owned_files: ["a.py"] })],
    inBatch: [task("t9", { owned_files: ["b.py"] })],
    batch: new Set(["t1", "t2", "t3"]),
    parked: { default: 300 },
    ready: [
      task("t1", { owned_files: ["c.py"] }),
      task("t2", { owned_files: ["b.py"] }),
      task("t3", { owned_files: ["a.py"] }),
      task("t4"),
    ],
  });
  assert.deepEqual(d.batch, ["t1"], "no slot, no adapter needed; owned files still hold");
  assert.deepEqual(d.waiting.get("t2"), { kind: "owned_files", with: "t9", file: "b.py" });
  assert.deepEqual(d.waiting.get("t3"), { kind: "owned_files", with: "t0", file: "a.py" });
  assert.equal(d.waiting.get("t4")?.kind, "parked");
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

Deno.test("decideSchedule(): a task whose owned files overlap a running one's says so, even when no agent slot is free", () => {
  const d = decideSchedule({
    ...base,
    maxAgents: 0,
    running: [],
    inBatch: [task("r1", { owned_files: ["src/a.ts"] })],
    ready: [task("t1", { owned_files: ["src/a.ts"] }), task("t2", { owned_files: ["b.ts"] })],
    workers: [{ name: "box-1", slots: 2, free: 1 }],
  });
  assert.deepEqual(d.waiting.get("t1"), { kind: "owned_files", with: "r1", file: "src/a.ts" });
  assert.equal(describeWait(d.waiting.get("t1")!), "waiting for r1 to merge: both own src/a.ts");
  assert.deepEqual(d.waiting.get("t2"), { kind: "worker_claim", workers: 1, free: 1 });
});

Deno.test("decideSchedule(): with max_agents: 0 a ready task names what the workers lack — none connected, none for its role, all busy", () => {
  const t = task("t1", { role: "ml" });
  const cases: [ScheduleInput["workers"], string][] = [
    [[], "waiting for a worker: none is connected (max_agents: 0 leaves every task to workers)"],
    [
      [{ name: "box-1", roles: ["backend"], slots: 2, free: 2 }],
      "waiting for a worker that takes role ml: none of the 1 connected worker does (their --roles)",
    ],
    [
      [{ name: "box-1", slots: 2, free: 0 }, { name: "gpu", roles: ["ml"], slots: 1, free: 0 }],
      "waiting for a free worker slot (2 workers, all 3 slots busy)",
    ],
  ];
  for (const [workers, words] of cases) {
    const d = decideSchedule({ ...base, maxAgents: 0, ready: [t], workers });
    assert.deepEqual(d.start, []);
    assert.equal(describeWait(d.waiting.get("t1")!), words);
  }
  // Slots of its own: the run waits for them, as before.
  const own = decideSchedule({
    ...base,
    maxAgents: 1,
    running: [task("r")],
    ready: [t],
    workers: [],
  });
  assert.deepEqual(own.waiting.get("t1"), { kind: "max_agents" });
});
