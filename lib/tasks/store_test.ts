import assert from "node:assert/strict";
import { stringify } from "yaml";
import { TaskStore, type Verdict } from "./store.ts";
import { isFinished } from "./task.ts";
import { workspacePaths } from "../workspace.ts";
import { loadPlan } from "../plans/load.ts";
import { parseConfig } from "../config/load.ts";

/** Verification's part is not under test here: a completion records nothing. */
const NO_VERDICT: Verdict = () => undefined;

Deno.test("TaskStore.open() keeps the higher revision when a crash left two copies, and reports bad specs", async () => {
  const root = await Deno.makeTempDir();
  try {
    const paths = workspacePaths(root);
    const first = await TaskStore.open(paths, { warn: () => {} });
    await first.create([{
      id: "a",
      title: "A",
      role: "qa",
      priority: 2,
      scope: "medium",
      complexity: "medium",
      depends_on: [],
      owned_files: [],
      completion_signals: [],
      batch_eligible: false,
    }]);
    const open = await Deno.readTextFile(`${root}/.sdd/backlog/open/a.yaml`);
    await first.claim("a", "s1");
    await first.close();
    // Simulate a crash between writing claimed/a.yaml and removing open/a.yaml.
    await Deno.writeTextFile(`${root}/.sdd/backlog/open/a.yaml`, open);
    await Deno.writeTextFile(
      `${root}/.sdd/backlog/open/bad.yaml`,
      stringify({ id: "bad", status: "WEIRD" }),
    );
    const warnings: string[] = [];
    const second = await TaskStore.open(paths, { warn: (l) => warnings.push(l) });
    assert.equal(second.get("a")?.status, "CLAIMED");
    assert.equal(second.get("a")?.session_id, "s1");
    assert.equal(second.get("bad"), undefined);
    assert.match(warnings.join("\n"), /bad\.yaml.*skipped, left in place/);
    await second.complete("a", {}, NO_VERDICT);
    await second.close();
    await assert.rejects(Deno.stat(`${root}/.sdd/backlog/open/a.yaml`), Deno.errors.NotFound);
    await Deno.stat(`${root}/.sdd/backlog/closed/a.yaml`);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("loadPlan() checks roles against service.yaml and their templates; its tasks create in one batch", async () => {
  const root = await Deno.makeTempDir();
  try {
    const config = parseConfig("cli: claude\nroles: [backend, qa, painter]\n");
    const plan = `${root}/plan.yaml`;
    await Deno.writeTextFile(
      plan,
      "stages:\n  - name: b\n    steps: [{goal: Build, role: backend}]\n  - name: t\n    depends_on: [b]\n    steps: [{goal: Test, role: qa}]\n",
    );
    const parsed = await loadPlan(root, plan, config);
    const store = await TaskStore.open(workspacePaths(root));
    const created = await store.create(parsed.tasks);
    assert.deepEqual(created.map((t) => [t.id, t.status]), [["b-1", "OPEN"], ["t-1", "BLOCKED"]]);
    await store.close();
    await Deno.writeTextFile(
      plan,
      "stages:\n  - name: p\n    steps: [{goal: Paint, role: painter}]\n",
    );
    await assert.rejects(
      loadPlan(root, plan, config),
      /stages\[0\]\.steps\[0\]\.role: role 'painter' has no template directory/,
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

/** A task input with every default spelled out. */
const INPUT = {
  title: "T",
  role: "qa",
  priority: 2,
  scope: "medium" as const,
  complexity: "medium" as const,
  depends_on: [],
  owned_files: [],
  completion_signals: [],
  batch_eligible: false,
};

Deno.test("TaskStore.joinRun(reclaim): a reopened ticket's task, back to OPEN after its run ended, moves to the running run; a live one never does", async () => {
  const root = await Deno.makeTempDir();
  try {
    const store = await TaskStore.open(workspacePaths(root), { warn: () => {} });
    await store.create([{ ...INPUT, id: "ticket" }, { ...INPUT, id: "busy" }]);
    await store.joinRun("ticket", "run-1");
    await store.joinRun("busy", "run-1");
    await store.cancel("ticket", "ticket o/r#1 was closed in tracker_b");
    assert.equal((await store.joinRun("ticket", "run-2", true)).run_id, "run-1"); // CANCELLED
    await store.retry("ticket", "ticket o/r#1 was reopened in tracker_b");
    assert.equal((await store.joinRun("ticket", "run-2")).run_id, "run-1");
    assert.equal((await store.joinRun("ticket", "run-2", true)).run_id, "run-2");
    await store.claim("busy", "s1");
    assert.equal((await store.joinRun("busy", "run-2", true)).run_id, "run-1"); // CLAIMED
    await store.close();
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("TaskStore: an operator's completion of a task nobody works on is DONE for good; a claimed one's is not", async () => {
  const root = await Deno.makeTempDir();
  try {
    const paths = workspacePaths(root);
    const store = await TaskStore.open(paths, { warn: () => {} });
    await store.create([{ ...INPUT, id: "waiting" }, { ...INPUT, id: "worked" }], {
      runId: "run-1",
    });
    await store.create([{ ...INPUT, id: "after", depends_on: ["waiting"] }], { runId: "run-1" });
    assert.equal(store.get("after")?.status, "BLOCKED");
    const done = await store.complete("waiting", { operator: true }, NO_VERDICT);
    assert.equal(done.status, "DONE");
    assert.equal(done.operator_done, true);
    assert.equal(isFinished(done), true);
    assert.equal(store.get("after")?.status, "OPEN", "it satisfies its dependents");
    await store.claim("worked", "s1");
    const vouched = await store.complete("worked", { operator: true }, NO_VERDICT);
    assert.equal(vouched.operator_done, undefined, "the agent's work still lands");
    assert.equal(isFinished(vouched), false);
    await store.close();
    const reopened = await TaskStore.open(paths, { warn: () => {} });
    assert.equal(reopened.get("waiting")?.operator_done, true, "it survives a restart");
    await reopened.cancel("waiting");
    assert.equal(reopened.get("waiting")?.operator_done, undefined, "cancelled: no longer done");
    await reopened.close();
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("TaskStore.requeue(): resumeFrom names the interrupted session a new attempt continues; null starts afresh; absent keeps it", async () => {
  const root = await Deno.makeTempDir();
  try {
    const store = await TaskStore.open(workspacePaths(root), { warn: () => {} });
    await store.create([{ ...INPUT, id: "t" }]);
    const cycle = async (resumeFrom: string | null | undefined, countAttempt = true) => {
      await store.claim("t", crypto.randomUUID());
      await store.orphan("t", "interrupted");
      return await store.requeue("t", { countAttempt, resumeFrom });
    };
    assert.equal((await cycle("s-1", false)).resume_from, "s-1");
    assert.equal(store.get("t")?.attempts, 0, "the stop counted no attempt");
    assert.equal((await cycle(undefined)).resume_from, "s-1");
    assert.equal((await cycle(null)).resume_from, undefined);
    assert.equal(store.get("t")?.attempts, 2);
    await store.close();
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("TaskStore.cancel() without a reason drops the last failure's words: the cancel is the operator's", async () => {
  const root = await Deno.makeTempDir();
  try {
    const store = await TaskStore.open(workspacePaths(root), { warn: () => {} });
    await store.create([{ ...INPUT, id: "t" }, { ...INPUT, id: "u" }]);
    await store.claim("t", "s1");
    await store.fail("t", "Error: cannot reach the model endpoint (HTTP 500)");
    assert.equal((await store.cancel("t")).summary, null);
    assert.equal(
      (await store.cancel("u", "ticket o/r#1 was closed")).summary,
      "ticket o/r#1 was closed",
    );
    await store.close();
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("TaskStore: a server killed with superseded spec files kept for reuse loses nothing: the next start removes them and loads every task as it was, one copy each", async () => {
  const root = await Deno.makeTempDir();
  try {
    const paths = workspacePaths(root);
    const store = new URL("./store.ts", import.meta.url).href;
    // Claims retire open/ files into claimed/, completions retire claimed/ files into closed/.
    const script = `
      import { TaskStore } from ${JSON.stringify(store)};
      import { workspacePaths } from ${
      JSON.stringify(new URL("../workspace.ts", import.meta.url).href)
    };
      const s = await TaskStore.open(workspacePaths(${JSON.stringify(root)}), { warn: () => {} });
      const input = (i) => ({ id: "t" + i, title: "T" + i, role: "qa", priority: 1, scope: "medium",
        complexity: "medium", depends_on: [], owned_files: [], completion_signals: [], batch_eligible: false });
      await s.create(Array.from({ length: 20 }, (_, i) => input(i)));
      for (let i = 0; i < 10; i++) await s.claim("t" + i, "s" + i);
      for (let i = 0; i < 5; i++) await s.complete("t" + i, { session_id: "s" + i }, () => undefined);
      console.log("ready");
      setInterval(() => {}, 60_000); // alive until killed
    `;
    const child = new Deno.Command(Deno.execPath(), {
      args: ["eval", "--ext=js", script],
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let out = "";
    while (!out.includes("ready")) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the child ended before it was ready: ${out}`);
      out += value;
    }
    child.kill("SIGKILL");
    await child.status;
    await reader.cancel();

    const temps = async () => {
      const found: string[] = [];
      for (const bucket of ["open", "claimed", "closed"]) {
        for await (const e of Deno.readDir(`${paths.backlog}/${bucket}`)) {
          if (e.name.includes(".tmp-")) found.push(`${bucket}/${e.name}`);
        }
      }
      return found;
    };
    assert.ok((await temps()).length > 0, "the killed server kept superseded files for reuse");
    const { repairStateOnStart } = await import("../state/startup_repair.ts");
    const repaired = await repairStateOnStart(paths);
    assert.match(repaired.join("\n"), /removed \d+ temporary file\(s\) of interrupted writes/);
    assert.deepEqual(await temps(), []);

    const warnings: string[] = [];
    const again = await TaskStore.open(paths, { warn: (l) => warnings.push(l) });
    assert.deepEqual(warnings, []);
    const status = (i: number) => again.get(`t${i}`)?.status;
    for (let i = 0; i < 20; i++) {
      assert.equal(status(i), i < 5 ? "DONE" : i < 10 ? "CLAIMED" : "OPEN", `t${i}`);
      const copies = [];
      for (const bucket of ["open", "claimed", "closed"]) {
        if (await Deno.stat(`${paths.backlog}/${bucket}/t${i}.yaml`).catch(() => null)) {
          copies.push(bucket);
        }
      }
      assert.equal(copies.length, 1, `t${i}: one copy, found in ${copies}`);
    }
    await again.close();
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("TaskStore.claimedSince(): a claim an earlier process left is not since the mark; a claim made after it is, and so is a claim again", async () => {
  const root = await Deno.makeTempDir();
  try {
    const paths = workspacePaths(root);
    const input = (id: string) => ({ ...INPUT, id, title: id });
    const earlier = await TaskStore.open(paths, { warn: () => {} });
    await earlier.create([input("left"), input("fresh")]);
    await earlier.claim("left", "s-earlier");
    await earlier.close();

    const store = await TaskStore.open(paths, { warn: () => {} });
    const mark = store.claimMark();
    assert.equal(store.get("left")?.status, "CLAIMED");
    assert.equal(store.claimedSince("left", mark), false, "left claimed by the earlier process");
    assert.equal(store.claimedSince("fresh", mark), false, "not claimed at all");
    await store.claim("fresh", "outsider-1");
    assert.equal(store.claimedSince("fresh", mark), true, "a live claimant's");
    const later = store.claimMark();
    assert.equal(store.claimedSince("fresh", later), false, "not since a mark taken after it");
    await store.close();
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("TaskStore.sweepOrphans(): a task whose move cannot be written is tried again each sweep, its failure printed once", async () => {
  const root = await Deno.makeTempDir();
  const printed: string[] = [];
  const error = console.error;
  console.error = (line: string) => printed.push(line);
  try {
    let now = Date.parse("2026-01-01T00:00:00Z");
    const paths = workspacePaths(root);
    const store = await TaskStore.open(paths, {
      warn: () => {},
      heartbeatTimeoutS: 45,
      clock: () => now,
    });
    await store.create([{ ...INPUT, id: "h" }]);
    await store.claim("h", "s1");
    // Its spec's place is taken by a directory: writing the ORPHANED spec fails.
    const spec = `${root}/.sdd/backlog/claimed/h.yaml`;
    await Deno.remove(spec);
    await Deno.mkdir(`${spec}/blocker`, { recursive: true });
    now += 60_000;
    for (let sweep = 0; sweep < 3; sweep++) assert.deepEqual(await store.sweepOrphans(), []);
    assert.equal(printed.length, 1, printed.join("\n"));
    assert.match(printed[0], /cannot orphan h: .*\(tried again each sweep\)/);
    // Once the write can be made, the next sweep orphans it.
    await Deno.remove(spec, { recursive: true });
    assert.deepEqual((await store.sweepOrphans()).map((t) => t.id), ["h"]);
    assert.equal(store.get("h")?.status, "ORPHANED");
    await store.close();
  } finally {
    console.error = error;
    await Deno.remove(root, { recursive: true });
  }
});
