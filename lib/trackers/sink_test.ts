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

Deno.test("a ticket edited or closed while its task's claim is being written leaves the started task alone", async () => {
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
    assert.equal(store.get(made.task_id!)!.status, "CLAIMED");
    assert.deepEqual(
      { action: closed.action, reason: closed.reason },
      { action: "unchanged", reason: "task is CLAIMED" },
    );
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
