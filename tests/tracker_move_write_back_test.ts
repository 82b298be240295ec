/**
 * Ticket moves through the write-back outbox (`trackers.<name>.move_to`), against the stand-in
 * Jira: a claim moves the ticket to In Progress and a landing to Done, each journaled in the
 * task's run; a move is made once per event, also across a restart; a claim's move still being
 * retried never lands after the landing's; a failed move (unknown state, a refusal) is recorded
 * and journaled with its reason and never touches the task.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import * as ev from "../lib/journal/events.ts";
import { appendEvents } from "../lib/journal/journal_file.ts";
import { closeTrackerService, trackerServiceFor } from "../lib/trackers/service.ts";
import { taskStoreFor } from "../lib/tasks/registry.ts";
import { TaskInputSchema } from "../lib/tasks/task.ts";
import { completionVerdict } from "../lib/verification/verdict.ts";
import { journalPath } from "../lib/workspace.ts";
import { type FakeIssue, startFakeTrackerApis } from "./_tracker_apis.ts";
import { testWorkspace } from "./_workspace.ts";

async function until(what: string, ok: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 30_000; // a loaded machine (a full suite beside other work) is slow, not wrong
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const ticket = (number: number, over: Partial<FakeIssue> = {}): FakeIssue => ({
  number,
  title: `Ticket ${number}`,
  body: "",
  labels: [],
  state: "open",
  updated_at: "2026-11-20T10:00:00Z",
  ...over,
});

/** A workspace whose tracker_a (Jira) moves tickets as `moveTo` says, and its run `run-1`. */
async function jiraWorkspace(url: string, moveTo: string) {
  const tokenVar = `TRK_MV_${Deno.pid}_${Math.random().toString(36).slice(2, 8)}`;
  Deno.env.set(tokenVar, "jira-token");
  const ws = await testWorkspace({
    config: "cli: claude\nroles: [backend]\ntrackers:\n  tracker_a:\n    project: PROJ\n" +
      `    polling: false\n    api_url: ${url}\n    token_env: ${tokenVar}\n` +
      `    move_to: ${moveTo}\n`,
  });
  await appendEvents(journalPath(ws.ctx.paths, "run-1"), [ev.runStarted({ run_id: "run-1" })]);
  const open = () => trackerServiceFor(ws.ctx, { commentRetryDelayMs: 20 });
  const create = async (number: number) => {
    const store = await taskStoreFor(ws.ctx);
    const [task] = await store.create([TaskInputSchema.parse({
      title: `Ticket ${number}`,
      role: "backend",
      source: {
        tracker: "tracker_a",
        key: `PROJ-${number}`,
        ref: `PROJ-${number}`,
        url: `https://acme.test/browse/PROJ-${number}`,
        ids: { key: `PROJ-${number}`, project: "PROJ" },
      },
    })]);
    await store.joinRun(task.id, "run-1");
    return { store, id: task.id };
  };
  const journal = async () =>
    (await Deno.readTextFile(join(ws.root, ".sdd/runs/run-1/journal.jsonl"))).trim().split("\n")
      .map((l) => JSON.parse(l)).filter((r) => r.type === "task_ticket_moved").map((r) => r.data);
  return {
    ws,
    open,
    create,
    journal,
    async [Symbol.asyncDispose]() {
      Deno.env.delete(tokenVar);
      await ws[Symbol.asyncDispose]();
    },
  };
}

Deno.test("move_to: a claim moves the ticket to In Progress and the landing to Done, journaled, once per event across a restart", async () => {
  await using fake = startFakeTrackerApis([ticket(1)]);
  await using w = await jiraWorkspace(fake.url, "{ claimed: in progress, landed: done }");
  const service = await w.open();
  const { store, id } = await w.create(1);
  await store.claim(id, "s1");
  await until("In Progress", () => fake.moves.length === 1);
  assert.deepEqual(fake.moves.map((m) => m.change), ["status In Progress"]);
  await store.heartbeat(id); // IN_PROGRESS moves nothing more
  await store.complete(id, {}, completionVerdict(w.ws.ctx.paths));
  await store.markMerged(id);
  await until("Done", () => fake.moves.length === 2);
  assert.deepEqual(fake.moves.map((m) => m.change), ["status In Progress", "status Done"]);
  await until("the journal rows", async () => (await w.journal()).length === 2);
  assert.deepEqual(await w.journal(), [
    {
      task_id: id,
      tracker: "tracker_a",
      ref: "PROJ-1",
      event: "claimed",
      to: "in progress",
      outcome: "moved",
      state: "In Progress",
      detail: `PROJ-1 moved to In Progress for ${id}`,
    },
    {
      task_id: id,
      tracker: "tracker_a",
      ref: "PROJ-1",
      event: "landed",
      to: "done",
      outcome: "moved",
      state: "Done",
      detail: `PROJ-1 moved to Done for ${id}`,
    },
  ]);
  assert.equal(service.runtime.get("tracker_a").last_move?.outcome, "moved");
  await closeTrackerService(w.ws.ctx);
  const calls = fake.requests.length;
  await w.open(); // a restart sends nothing again
  await closeTrackerService(w.ws.ctx);
  assert.equal(fake.requests.length, calls);
  assert.equal((await store.get(id))?.status, "CLOSED");
});

Deno.test("move_to: a claim's move still retried while the tracker is down never lands after the landing's: the ticket ends Done", async () => {
  await using fake = startFakeTrackerApis([ticket(2)]);
  await using w = await jiraWorkspace(fake.url, "{ claimed: In Progress, landed: Done }");
  const service = await w.open();
  const { store, id } = await w.create(2);
  for (let i = 0; i < 3; i++) fake.failNext.push({ status: 503 });
  await store.claim(id, "s1");
  await until(
    "a failed try of the claim's move",
    () => service.runtime.get("tracker_a").last_move?.outcome === "pending",
  );
  assert.match(
    service.runtime.get("tracker_a").last_move!.detail!,
    /cannot move PROJ-2 to "In Progress" \(claimed\) \(try 1\): .*HTTP 503.*; trying again at /,
  );
  await store.complete(id, {}, completionVerdict(w.ws.ctx.paths));
  await store.markMerged(id);
  await until("Done", () => fake.moves.length >= 1);
  await closeTrackerService(w.ws.ctx);
  assert.deepEqual(fake.moves.map((m) => m.change), ["status Done"]);
  const box = JSON.parse(await Deno.readTextFile(`${w.ws.root}/.sdd/runtime/tracker_outbox.json`));
  assert.deepEqual(
    box.entries.map((
      e: { key: string; state: string },
    ) => [e.key.split("/").slice(3, 4)[0], e.state]),
    [["claimed", "abandoned"], ["landed", "sent"]],
  );
});

Deno.test("move_to: a later attempt's claim never moves a Done ticket back; a ticket a person reopened moves again", async () => {
  await using fake = startFakeTrackerApis([ticket(3, { state: "closed", status: "Done" })]);
  await using w = await jiraWorkspace(fake.url, "{ claimed: In Progress }");
  const service = await w.open();
  const { store, id } = await w.create(3);
  await store.claim(id, "s1");
  await until("the claim's move", async () => (await w.journal()).length === 1);
  assert.equal(fake.moves.length, 0);
  const [left] = await w.journal();
  assert.equal(left.outcome, "left");
  assert.equal(left.state, "Done");
  assert.match(
    service.runtime.get("tracker_a").last_move!.detail!,
    /PROJ-3 left Done: a done ticket/,
  );
  // A person reopens it; the task is tried again and claimed by a new session.
  fake.issues[0].status = "To Do";
  fake.issues[0].state = "open";
  await store.orphan(id, "agent lost");
  await store.reopen(id);
  await store.claim(id, "s2");
  await until("the second claim's move", () => fake.moves.length === 1);
  assert.deepEqual(fake.moves.map((m) => m.change), ["status In Progress"]);
});

Deno.test("move_to: a move that fails is recorded and journaled with its reason and never fails the task", async () => {
  const cases: {
    name: string;
    moveTo: string;
    arrange: (fake: ReturnType<typeof startFakeTrackerApis>) => void;
    reason: RegExp;
  }[] = [
    {
      name: "a state the workflow does not have",
      moveTo: "{ claimed: Doing }",
      arrange: () => {},
      reason:
        /Jira has no state "Doing" that PROJ-4 can move to from "To Do"; its states: In Progress, In Review, Done, Canceled \(set trackers\.tracker_a\.move_to\.claimed to one of them\)/,
    },
    {
      name: "a refusal (403) every time",
      moveTo: "{ claimed: In Progress }",
      arrange: (fake) => {
        for (let i = 0; i < 10; i++) {
          fake.failNext.push({
            status: 403,
            body: JSON.stringify({ errorMessages: ["You do not have permission to transition"] }),
          });
        }
      },
      reason: /HTTP 403.*; gave up: the tracker refused it 5 times/,
    },
    {
      name: "a ticket deleted meanwhile (404)",
      moveTo: "{ claimed: In Progress }",
      arrange: (fake) => {
        fake.issues.length = 0;
      },
      reason: /HTTP 404.*Issue does not exist.*; gave up: the tracker refused it 5 times/,
    },
  ];
  for (const c of cases) {
    await using fake = startFakeTrackerApis([ticket(4)]);
    await using w = await jiraWorkspace(fake.url, c.moveTo);
    const service = await w.open();
    c.arrange(fake);
    const { store, id } = await w.create(4);
    await store.claim(id, "s1");
    await until(`${c.name}: given up`, async () => (await w.journal()).length === 1);
    const [row] = await w.journal();
    assert.equal(row.outcome, "failed", c.name);
    assert.match(row.detail, c.reason, c.name);
    assert.equal(service.runtime.get("tracker_a").last_move?.outcome, "failed", c.name);
    assert.match(service.runtime.get("tracker_a").last_move!.detail!, c.reason, c.name);
    assert.deepEqual(fake.moves, [], c.name);
    assert.equal((await store.get(id))?.status, "CLAIMED", `${c.name}: the task goes on`);
    await closeTrackerService(w.ws.ctx);
  }
});

Deno.test("move_to: a claim's move superseded by the landing while the tracker holds an earlier call is never sent", async () => {
  await using fake = startFakeTrackerApis([ticket(1), ticket(2)]);
  await using w = await jiraWorkspace(fake.url, "{ claimed: In Progress, landed: Done }");
  // The outbox's entries; none while the file is not written yet (the first failed try writes it).
  const box = async () =>
    JSON.parse(
      await Deno.readTextFile(join(w.ws.root, ".sdd/runtime/tracker_outbox.json"))
        .catch((e) => e instanceof Deno.errors.NotFound ? '{"entries":[]}' : Promise.reject(e)),
    ).entries as {
      key: string;
      task_id: string;
      state: string;
      attempts: number;
      next_at: string;
    }[];
  await w.open();
  const tasks = [await w.create(1), await w.create(2)];
  // The tracker is down while both claims' moves are tried; the service stops meanwhile.
  for (let i = 0; i < 200; i++) fake.failNext.push({ status: 503 });
  for (const [i, t] of tasks.entries()) await t.store.claim(t.id, `s${i}`);
  await until(
    "a failed try of both moves",
    async () => (await box()).filter((e) => e.attempts >= 1).length === 2,
  );
  await closeTrackerService(w.ws.ctx);
  fake.failNext.length = 0;
  // The next start tries the earlier move first; the other one's task lands while it waits.
  const order = (await box()).sort((a, b) => a.next_at.localeCompare(b.next_at));
  const [held, landed] = order.map((e) => tasks.find((t) => t.id === e.task_id)!);
  const number = (t: typeof held) => tasks.indexOf(t) + 1;
  const release = Promise.withResolvers<void>();
  fake.hold = release.promise; // back up, but its first answer takes long
  const seen = fake.requests.length;
  await w.open();
  try {
    await until("the first call", () => fake.requests.length > seen);
    await landed.store.complete(landed.id, {}, completionVerdict(w.ws.ctx.paths));
    await landed.store.markMerged(landed.id);
    await until(
      "the landed task's claim move superseded",
      async () =>
        (await box()).some((e) =>
          e.task_id === landed.id && e.key.includes("/claimed/") && e.state === "abandoned"
        ),
    );
  } finally {
    fake.hold = undefined;
    release.resolve();
  }
  await until("both moves", () => fake.moves.length >= 2);
  await closeTrackerService(w.ws.ctx);
  assert.deepEqual(
    fake.moves.map((m) => `${m.number} ${m.change}`),
    [`${number(held)} status In Progress`, `${number(landed)} status Done`],
  );
});

Deno.test("move_to: an operator's cancel moves the claimed ticket to its cancelled state; a cancel its ticket made moves nothing", async () => {
  await using fake = startFakeTrackerApis([ticket(7), ticket(8), ticket(9)]);
  await using w = await jiraWorkspace(fake.url, "{ claimed: in progress, cancelled: to do }");
  await w.open();
  // Claimed, then cancelled by an operator (`service cancel`, a pull request closed by hand):
  // the ticket no longer says someone works on it.
  const first = await w.create(7);
  await first.store.claim(first.id, "s1");
  await until("In Progress", () => fake.moves.length === 1);
  await first.store.cancel(first.id);
  await until("back to To Do", () => fake.moves.length === 2);
  assert.deepEqual(fake.moves.map((m) => m.change), ["status In Progress", "status To Do"]);
  await until("both journaled", async () => (await w.journal()).length === 2);
  const cancelled = (await w.journal())[1];
  assert.equal(cancelled.event, "cancelled");
  assert.equal(cancelled.outcome, "moved");
  // A task its ticket cancelled (closed in the tracker): the person already moved the ticket.
  const second = await w.create(8);
  await second.store.cancel(second.id, "ticket PROJ-8 was closed in tracker_a");
  // A later claim's move is sent after anything that cancel would have sent.
  const third = await w.create(9);
  await third.store.claim(third.id, "s3");
  await until("the later claim's move", async () => (await w.journal()).length === 3);
  assert.deepEqual((await w.journal()).map((r) => [r.ref, r.event]), [
    ["PROJ-7", "claimed"],
    ["PROJ-7", "cancelled"],
    ["PROJ-9", "claimed"],
  ]);
});
