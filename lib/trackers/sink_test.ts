import assert from "node:assert/strict";
import { TaskStore } from "../tasks/store.ts";
import { workspacePaths } from "../workspace.ts";
import { createTicketSink } from "./sink.ts";
import type { Ticket } from "./ticket.ts";

function ticket(key: string, ref = `octo/app#${key}`): Ticket {
  return {
    tracker: "tracker_b",
    key,
    ref,
    title: `Issue ${key}`,
    body: "",
    labels: [],
    state: "open",
    url: `https://example.test/${key}`,
    raw: {},
  };
}

/** A real store whose creates of the tickets named in `held` wait until `release()`. */
function holdingStore(store: TaskStore, held: Set<string>) {
  let release!: () => void;
  const gate = new Promise<void>((r) => release = r);
  const facade = {
    list: () => store.list(),
    get: (id: string) => store.get(id),
    revise: (id: string, fields: Parameters<TaskStore["revise"]>[1]) => store.revise(id, fields),
    create: async (inputs: Parameters<TaskStore["create"]>[0]) => {
      if (inputs.some((i) => held.has(i.source?.key ?? ""))) await gate;
      return store.create(inputs);
    },
  } as unknown as TaskStore;
  return { facade, release };
}

Deno.test("the ticket sink creates the task of one issue while another issue's create is still being written", async () => {
  const root = await Deno.makeTempDir();
  const store = await TaskStore.open(workspacePaths(root), { warn: () => {} });
  try {
    const { facade, release } = holdingStore(store, new Set(["1"]));
    const sink = createTicketSink({
      store: facade,
      routing: () => ({ role: "backend", labelRoles: [] }),
    });
    const slow = sink([ticket("1")]);
    const [fast] = await sink([ticket("2")]);
    assert.equal(fast.action, "created");
    assert.equal(store.get(fast.task_id!)?.status, "OPEN");
    release();
    assert.equal((await slow)[0].action, "created");
    assert.equal(store.size, 2);
  } finally {
    await store.close();
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("the ticket sink applies deliveries about one issue in order: the second updates the task the first created", async () => {
  const root = await Deno.makeTempDir();
  const store = await TaskStore.open(workspacePaths(root), { warn: () => {} });
  try {
    const { facade, release } = holdingStore(store, new Set(["7"]));
    const sink = createTicketSink({
      store: facade,
      routing: () => ({ role: "backend", labelRoles: [] }),
    });
    const first = sink([ticket("7")]);
    const second = sink([{ ...ticket("7"), title: "Issue 7, retitled" }]);
    release();
    const [[created], [updated]] = await Promise.all([first, second]);
    assert.equal(created.action, "created");
    assert.equal(updated.action, "updated");
    assert.equal(store.size, 1);
    assert.equal(store.get(created.task_id!)?.title, "Issue 7, retitled");
  } finally {
    await store.close();
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("two issues whose refs make the same task id, created side by side, both get a task", async () => {
  const root = await Deno.makeTempDir();
  const store = await TaskStore.open(workspacePaths(root), { warn: () => {} });
  try {
    const sink = createTicketSink({ store, routing: () => ({ role: "backend", labelRoles: [] }) });
    const outcomes = await Promise.all([
      sink([ticket("a", "octo/app a")]),
      sink([ticket("b", "octo/app-a")]),
    ]);
    const ids = outcomes.map(([o]) => o.task_id);
    assert.deepEqual(outcomes.map(([o]) => o.action), ["created", "created"]);
    assert.equal(new Set(ids).size, 2);
    assert.ok(ids.includes("tracker_b-octo-app-a"));
  } finally {
    await store.close();
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("the ticket sink cancels a task not started whose ticket lost its wanted label, and brings it back when labelled again", async () => {
  const root = await Deno.makeTempDir();
  const store = await TaskStore.open(workspacePaths(root), { warn: () => {} });
  try {
    const sink = createTicketSink({
      store,
      routing: () => ({ role: "backend", labels: ["agent"], labelRoles: [] }),
    });
    const at = (labels: string[], updated_at: string): Ticket => ({
      ...ticket("5"),
      labels,
      raw: { updated_at },
    });
    const [made] = await sink([at(["agent"], "2026-01-01T00:00:00Z")]);
    assert.equal(made.action, "created");
    const [unlabelled] = await sink([at(["bug"], "2026-01-01T00:01:00Z")]);
    assert.equal(unlabelled.action, "cancelled");
    const task = store.get(made.task_id!)!;
    assert.equal(task.status, "CANCELLED");
    assert.equal(
      task.summary,
      "ticket octo/app#5 in tracker_b carries none of the labels agent",
    );
    const [relabelled] = await sink([at(["agent"], "2026-01-01T00:02:00Z")]);
    assert.equal(relabelled.action, "reopened");
    assert.equal(store.get(made.task_id!)!.status, "OPEN");
    // An operator's cancel is never undone by a label.
    await store.cancel(made.task_id!, "not now");
    const [later] = await sink([at(["agent", "x"], "2026-01-01T00:03:00Z")]);
    assert.equal(later.action, "unchanged");
    assert.equal(store.get(made.task_id!)!.status, "CANCELLED");
  } finally {
    await store.close();
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("a ticket edited while its task's claim is being written leaves the started task alone; closed then, it cancels it after the claim", async () => {
  const root = await Deno.makeTempDir();
  const store = await TaskStore.open(workspacePaths(root), { warn: () => {} });
  try {
    const sink = createTicketSink({
      store,
      routing: () => ({ role: "backend", labelRoles: [] }),
    });
    const [made] = await sink([{ ...ticket("9"), raw: { updated_at: "2026-01-01T00:00:00Z" } }]);
    // The claim is on its way to disk (not yet committed) when the closing arrives.
    const claiming = store.claim(made.task_id!, "s1");
    const [edited, closed] = await Promise.all([
      sink([{ ...ticket("9"), title: "edited", raw: { updated_at: "2026-01-01T00:00:30Z" } }]),
      sink([{ ...ticket("9"), state: "closed", raw: { updated_at: "2026-01-01T00:01:00Z" } }]),
    ]).then((outs) => outs.map((o) => o[0]));
    await claiming;
    assert.deepEqual(
      { action: edited.action, reason: edited.reason },
      { action: "unchanged", reason: "task is CLAIMED" },
    );
    assert.equal(store.get(made.task_id!)!.title, "Issue 9");
    // The closing is written after the claim: it cancels the started task (its agent is
    // stopped by the run that sees the cancel).
    assert.equal(closed.action, "cancelled");
    assert.equal(store.get(made.task_id!)!.status, "CANCELLED");
    assert.equal(store.get(made.task_id!)!.summary, "ticket octo/app#9 was closed in tracker_b");
  } finally {
    await store.close();
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("an event that names no labels at all neither cancels a labelled ticket's task nor changes its role", async () => {
  const routings = [
    { role: "backend", labels: ["agent"], labelRoles: [["bug", "qa"]] as [string, string][] },
    { role: "backend", labelRoles: [["bug", "qa"]] as [string, string][] },
  ];
  for (const routing of routings) {
    const root = await Deno.makeTempDir();
    const store = await TaskStore.open(workspacePaths(root), { warn: () => {} });
    try {
      const sink = createTicketSink({ store, routing: () => routing });
      const [made] = await sink([{
        ...ticket("6"),
        labels: ["agent", "bug"],
        raw: { updated_at: "2026-01-01T00:00:00Z" },
      }]);
      assert.equal(store.get(made.task_id!)!.role, "qa");
      const [edited] = await sink([{
        ...ticket("6"),
        title: "edited",
        labels: [],
        labelsUnknown: true,
        raw: { updated_at: "2026-01-01T00:01:00Z" },
      }]);
      assert.equal(edited.action, "updated", JSON.stringify(routing));
      const task = store.get(made.task_id!)!;
      assert.deepEqual([task.status, task.role, task.title], ["OPEN", "qa", "edited"]);
    } finally {
      await store.close();
      await Deno.remove(root, { recursive: true });
    }
  }
});

Deno.test("a ticket longer than one command-line argument may be becomes a task whose goal an agent can be started with: cut at 64 KiB on a character, saying where the rest is", async () => {
  const root = await Deno.makeTempDir();
  const store = await TaskStore.open(workspacePaths(root), { warn: () => {} });
  try {
    const sink = createTicketSink({ store, routing: () => ({ role: "backend", labelRoles: [] }) });
    // 200 000 characters of three UTF-8 bytes each: 600 KB, beyond Linux's 128 KiB per argument.
    const body = "界".repeat(200_000);
    const [made] = await sink([{ ...ticket("9"), body }]);
    const goal = store.get(made.task_id!)!.goal;
    const bytes = new TextEncoder().encode(goal).length;
    assert.ok(bytes <= 64 * 1024, `the goal is ${bytes} bytes`);
    assert.ok(goal.startsWith("Issue 9\n\n界界"));
    assert.ok(!goal.includes("\ufffd"), "no character is cut in half");
    assert.match(goal, /it is 600009 bytes, .* The whole ticket: https:\/\/example\.test\/9\]$/);
    // An agent CLI takes its prompt as one argument: it starts (it could not with the whole ticket).
    const started = await new Deno.Command("true", { args: [goal] }).output();
    assert.ok(started.success);
    // A short ticket's goal is its title and body as they are.
    const [small] = await sink([{ ...ticket("10"), body: "  fix it  " }]);
    assert.equal(store.get(small.task_id!)!.goal, "Issue 10\n\nfix it");
  } finally {
    await store.close();
    await Deno.remove(root, { recursive: true });
  }
});

/** A real store and a sink over it routing every ticket to `backend` (labels: `agent`). */
async function sinkOverStore(labels?: string[]) {
  const root = await Deno.makeTempDir();
  const store = await TaskStore.open(workspacePaths(root), { warn: () => {} });
  const sink = createTicketSink({
    store,
    routing: () => ({ role: "backend", labelRoles: [], ...(labels ? { labels } : {}) }),
  });
  let second = 0;
  /** The ticket `key` as it is now (each call one second later than the last). */
  const at = (key: string, change: Partial<Ticket> = {}) =>
    sink([{
      ...ticket(key),
      labels: labels ?? [],
      ...change,
      raw: { updated_at: new Date(Date.UTC(2026, 0, 1, 0, 0, second++)).toISOString() },
    }]).then((o) => o[0]);
  return {
    store,
    at,
    async [Symbol.asyncDispose]() {
      await store.close();
      await Deno.remove(root, { recursive: true });
    },
  };
}

const NO_VERDICT = () => undefined;

Deno.test("a ticket closed before its task's work landed cancels it, running or done; after it landed, or after an operator's cancel, it changes nothing", async () => {
  await using s = await sinkOverStore();
  const { store, at } = s;
  const running = (await at("1")).task_id!;
  await store.claim(running, "s1");
  await store.heartbeat(running, "s1");
  const done = (await at("2")).task_id!;
  await store.claim(done, "s2");
  await store.complete(done, { session_id: "s2" }, NO_VERDICT);
  const landed = (await at("3")).task_id!;
  await store.claim(landed, "s3");
  await store.complete(landed, { session_id: "s3" }, NO_VERDICT);
  await store.markMerged(landed);
  const operator = (await at("4")).task_id!;
  await store.cancel(operator);
  for (const [key, id] of [["1", running], ["2", done]]) {
    assert.equal((await at(key, { state: "closed" })).action, "cancelled");
    assert.equal(store.get(id)!.status, "CANCELLED");
    assert.equal(store.get(id)!.summary, `ticket octo/app#${key} was closed in tracker_b`);
  }
  const afterLanding = await at("3", { state: "closed" });
  assert.deepEqual([afterLanding.action, afterLanding.reason], ["unchanged", "task is CLOSED"]);
  assert.equal(store.get(landed)!.status, "CLOSED");
  const afterOperator = await at("4", { state: "closed" });
  assert.deepEqual([afterOperator.action, afterOperator.reason], [
    "unchanged",
    "task is CANCELLED",
  ]);
  // Reopened: the task its closing cancelled comes back, with fresh attempts.
  const reopened = await at("1");
  assert.equal(reopened.action, "reopened");
  assert.equal(store.get(running)!.status, "OPEN");
  assert.equal(store.get(running)!.attempts, 0);
  assert.equal((await at("4")).action, "unchanged", "an operator's cancel stays");
});

Deno.test("a FAILED task's ticket edited to ask for something else gets a new attempt with the new text; unchanged, it says how to get one", async () => {
  await using s = await sinkOverStore();
  const { store, at } = s;
  const id = (await at("5", { body: "do it" })).task_id!;
  await store.claim(id, "s1");
  await store.fail(id, "the goal is unclear", "s1");
  const same = await at("5", { body: "do it" });
  assert.equal(same.action, "unchanged");
  assert.match(same.reason!, /^task is FAILED: a new attempt follows an edit of the ticket's/);
  assert.equal(store.get(id)!.status, "FAILED");
  const edited = await at("5", { body: "do it this way" });
  assert.equal(edited.action, "retried");
  const task = store.get(id)!;
  assert.equal(task.status, "OPEN");
  assert.equal(task.attempts, 0);
  assert.match(task.goal, /do it this way/);
  assert.equal(task.summary, "ticket octo/app#5 was edited in tracker_b");
  // Its title alone counts too.
  await store.claim(id, "s2");
  await store.fail(id, "again", "s2");
  assert.equal((await at("5", { title: "Retitled", body: "do it this way" })).action, "retried");
  assert.equal(store.get(id)!.title, "Retitled");
});

Deno.test("a FAILED task's ticket closed and reopened, or unlabelled and labelled again, gets a new attempt; unlabelling running work leaves it alone", async () => {
  await using s = await sinkOverStore(["agent"]);
  const { store, at } = s;
  const closedOne = (await at("6")).task_id!;
  const unlabelled = (await at("7")).task_id!;
  const running = (await at("8")).task_id!;
  for (const [id, session] of [[closedOne, "s6"], [unlabelled, "s7"]]) {
    await store.claim(id, session);
    await store.fail(id, "failed", session);
  }
  await store.claim(running, "s8");
  assert.equal((await at("6", { state: "closed" })).action, "cancelled");
  assert.equal((await at("6")).action, "reopened");
  assert.equal(store.get(closedOne)!.status, "OPEN");
  assert.equal(store.get(closedOne)!.summary, "ticket octo/app#6 was reopened in tracker_b");
  assert.equal((await at("7", { labels: [] })).action, "cancelled");
  assert.equal((await at("7")).action, "reopened");
  assert.equal(store.get(unlabelled)!.summary, "ticket octo/app#7 was labelled again in tracker_b");
  const unlabelledRunning = await at("8", { labels: [] });
  assert.deepEqual([unlabelledRunning.action, unlabelledRunning.reason], [
    "unchanged",
    "task is CLAIMED",
  ]);
});

Deno.test("an operator's cancel of a FAILED task on its way to disk as its ticket is edited stays: the edit retries nothing", async () => {
  await using s = await sinkOverStore();
  const { store, at } = s;
  const id = (await at("9", { body: "do it" })).task_id!;
  await store.claim(id, "s1");
  await store.fail(id, "failed", "s1");
  const cancelling = store.cancel(id, "not needed any more");
  const edited = await at("9", { body: "do it this way" });
  await cancelling;
  assert.deepEqual([edited.action, edited.reason], ["unchanged", "task is CANCELLED"]);
  assert.equal(store.get(id)!.status, "CANCELLED");
  assert.equal(store.get(id)!.summary, "not needed any more");
});
