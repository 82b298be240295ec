/**
 * Each built-in tracker moves a ticket through its real API (`trackers.<name>.move_to`), against
 * the stand-in speaking the trackers' wire formats: the requests it sends, what the ticket is in
 * afterwards, and the refusals as the real APIs answer them (an unknown state, 403, 404).
 */
import assert from "node:assert/strict";
import type { ApiAccess, TrackerAdapter } from "../lib/trackers/adapter.ts";
import { BUILTIN_TRACKERS } from "../lib/trackers/builtin.ts";
import { HttpApiError } from "../lib/http/api_error.ts";
import {
  type MoveEvent,
  moveFor,
  type MoveResult,
  type TicketMoves,
  UnknownStateError,
} from "../lib/trackers/move.ts";
import type { TicketRef } from "../lib/trackers/ticket.ts";
import {
  type FakeIssue,
  type FakeTrackerApis,
  PLANE_PROJECT,
  startFakeTrackerApis,
} from "./_tracker_apis.ts";

const MOVES: TicketMoves = { claimed: "in progress", landed: "DONE", failed: "blocked" };
const LABEL_MOVES: TicketMoves = { claimed: "In Progress", landed: "closed", failed: "Blocked" };

/** Where each tracker's ticket 7 is, and how its adapter is called. */
const TRACKERS: {
  name: string;
  project: string;
  ids: TicketRef;
  moves: TicketMoves;
  api: (url: string) => string;
}[] = [
  {
    name: "tracker_a",
    project: "PROJ",
    ids: { key: "PROJ-7" },
    moves: MOVES,
    api: (u) => u,
  },
  {
    name: "tracker_b",
    project: "octo/app",
    ids: { repo: "octo/app", number: 7 },
    moves: LABEL_MOVES,
    api: (u) => u,
  },
  {
    name: "tracker_c",
    project: "group/app",
    ids: { project_id: 15, iid: 7 },
    moves: LABEL_MOVES,
    api: (u) => u,
  },
  {
    name: "tracker_d",
    project: "ENG",
    ids: { id: "lin-7" },
    moves: MOVES,
    api: (u) => `${u}/graphql`,
  },
  {
    name: "tracker_e",
    project: `acme/${PLANE_PROJECT}`,
    ids: { project: PLANE_PROJECT, id: "pl-7" },
    moves: MOVES,
    api: (u) => u,
  },
];

const issue = (over: Partial<FakeIssue> = {}): FakeIssue => ({
  number: 7,
  title: "Seven",
  body: "",
  labels: [],
  state: "open",
  updated_at: "2026-11-20T10:00:00Z",
  ...over,
});

function access(fake: FakeTrackerApis, t: typeof TRACKERS[number]): ApiAccess {
  return {
    fetch: globalThis.fetch,
    now: Date.now,
    apiUrl: t.api(fake.url),
    project: t.project,
    token: "tok",
  };
}

async function move(
  fake: FakeTrackerApis,
  t: typeof TRACKERS[number],
  event: MoveEvent,
): Promise<MoveResult> {
  const adapter: TrackerAdapter = BUILTIN_TRACKERS.get(t.name)!;
  return await adapter.moveTicket(access(fake, t), t.ids, moveFor(t.moves, event)!);
}

const writes = (fake: FakeTrackerApis) =>
  fake.requests.filter((r) => r.method !== "GET").map((r) => `${r.method} ${r.path} ${r.body}`);

Deno.test("Jira moves a ticket with the transition whose to.name is the state, found case-insensitively", async () => {
  await using fake = startFakeTrackerApis([issue()]);
  const t = TRACKERS[0];
  assert.deepEqual(await move(fake, t, "claimed"), { outcome: "moved", state: "In Progress" });
  assert.deepEqual(fake.requests.map((r) => `${r.method} ${r.path}`), [
    "GET /rest/api/3/issue/PROJ-7",
    "GET /rest/api/3/issue/PROJ-7/transitions",
    "POST /rest/api/3/issue/PROJ-7/transitions",
  ]);
  assert.equal(fake.requests[0].query.get("fields"), "status");
  assert.deepEqual(JSON.parse(fake.requests[2].body), { transition: { id: "t-st-progress" } });
  assert.equal(fake.requests[2].headers.get("authorization"), "Bearer tok");
  assert.deepEqual(await move(fake, t, "landed"), { outcome: "moved", state: "Done" });
  assert.deepEqual(fake.moves.map((m) => m.change), ["status In Progress", "status Done"]);
});

Deno.test("GitHub adds the in-progress label on claim, and on landing closes the issue as completed and removes it", async () => {
  await using fake = startFakeTrackerApis([issue({ labels: ["agent"] })]);
  const t = TRACKERS[1];
  assert.deepEqual(await move(fake, t, "claimed"), { outcome: "moved", state: "in progress" });
  assert.deepEqual(writes(fake), [
    'POST /repos/octo/app/issues/7/labels {"labels":["in progress"]}',
  ]);
  assert.ok(fake.requests.some((r) => r.path === "/repos/octo/app/labels"));
  fake.requests.length = 0;
  assert.deepEqual(await move(fake, t, "landed"), { outcome: "moved", state: "closed" });
  assert.deepEqual(writes(fake), [
    "DELETE /repos/octo/app/issues/7/labels/in%20progress ",
    'PATCH /repos/octo/app/issues/7 {"state":"closed","state_reason":"completed"}',
  ]);
  assert.equal(fake.requests.some((r) => r.path.endsWith("/labels") && r.method === "GET"), false);
  assert.deepEqual(fake.issues[0].labels, ["agent"]);
  assert.equal(fake.issues[0].state_reason, "completed");
});

Deno.test("GitHub closes a ticket whose task failed for good, or was cancelled, as not planned", async () => {
  for (const event of ["failed", "cancelled"] as const) {
    await using fake = startFakeTrackerApis([issue()]);
    const t = { ...TRACKERS[1], moves: { [event]: "closed" } };
    assert.deepEqual(await move(fake, t, event), { outcome: "moved", state: "closed" });
    assert.deepEqual(writes(fake), [
      'PATCH /repos/octo/app/issues/7 {"state":"closed","state_reason":"not_planned"}',
    ], event);
  }
});

Deno.test("GitLab writes a move in one PUT: add_labels, remove_labels, state_event close", async () => {
  await using fake = startFakeTrackerApis([issue({ labels: ["in progress"] })]);
  const t = TRACKERS[2];
  assert.deepEqual(await move(fake, t, "failed"), { outcome: "moved", state: "blocked" });
  assert.deepEqual(writes(fake), [
    'PUT /api/v4/projects/group%2Fapp/issues/7 {"add_labels":"blocked","remove_labels":"in progress"}',
  ]);
  assert.equal(fake.requests[0].headers.get("private-token"), "tok");
  fake.requests.length = 0;
  assert.deepEqual(await move(fake, t, "landed"), { outcome: "moved", state: "closed" });
  assert.deepEqual(writes(fake), [
    'PUT /api/v4/projects/group%2Fapp/issues/7 {"remove_labels":"blocked","state_event":"close"}',
  ]);
});

Deno.test("Linear reads the team's workflowStates and moves with issueUpdate(id, input: {stateId})", async () => {
  await using fake = startFakeTrackerApis([issue()]);
  const t = TRACKERS[3];
  assert.deepEqual(await move(fake, t, "claimed"), { outcome: "moved", state: "In Progress" });
  const [read, update] = fake.requests.map((r) => JSON.parse(r.body));
  assert.match(
    read.query,
    /workflowStates\(first: 250, filter: \{ team: \{ key: \{ eq: \$team \} \} \}\)/,
  );
  assert.deepEqual(read.variables, { id: "lin-7", team: "ENG" });
  assert.match(update.query, /issueUpdate\(id: \$id, input: \{ stateId: \$stateId \}\)/);
  assert.deepEqual(update.variables, { id: "lin-7", stateId: "st-progress" });
  assert.equal(fake.requests[0].headers.get("authorization"), "tok");
});

Deno.test("Plane reads the project's states and PATCHes the work item's state uuid", async () => {
  await using fake = startFakeTrackerApis([issue()]);
  const t = TRACKERS[4];
  assert.deepEqual(await move(fake, t, "landed"), { outcome: "moved", state: "Done" });
  const base = `/api/v1/workspaces/acme/projects/${PLANE_PROJECT}`;
  assert.deepEqual(fake.requests.map((r) => `${r.method} ${r.path}`), [
    `GET ${base}/issues/pl-7/`,
    `GET ${base}/states/`,
    `PATCH ${base}/issues/pl-7/`,
  ]);
  assert.deepEqual(JSON.parse(fake.requests[2].body), { state: "st-done" });
  assert.equal(fake.requests[0].headers.get("x-api-key"), "tok");
});

Deno.test("every tracker: a ticket already in the state is not written again, and a done ticket is never moved back by a claim or a failure", async () => {
  for (const t of TRACKERS) {
    await using fake = startFakeTrackerApis([issue()]);
    assert.equal((await move(fake, t, "claimed")).outcome, "moved", t.name);
    const before = fake.moves.length;
    assert.equal((await move(fake, t, "claimed")).outcome, "already", t.name);
    assert.equal(fake.moves.length, before, `${t.name}: nothing written the second time`);
    assert.equal((await move(fake, t, "landed")).outcome, "moved", t.name);
    assert.equal((await move(fake, t, "landed")).outcome, "already", t.name);
    const done = fake.moves.length;
    assert.equal((await move(fake, t, "claimed")).outcome, "left", t.name);
    assert.equal((await move(fake, t, "failed")).outcome, "left", t.name);
    assert.equal(fake.moves.length, done, `${t.name}: a done ticket stays done`);
    assert.equal(fake.issues[0].state, "closed", t.name);
  }
});

Deno.test("every tracker: a refused move fails with the tracker's reason (unknown state naming the states there are, 403, 404)", async () => {
  const cases: {
    name: string;
    arrange: (fake: FakeTrackerApis, t: typeof TRACKERS[number]) => typeof TRACKERS[number];
    expect: (e: unknown, t: string) => void;
  }[] = [
    {
      name: "unknown state",
      arrange: (_fake, t) => ({ ...t, moves: { claimed: "Doing" } }),
      expect: (e, t) => {
        assert.ok(e instanceof UnknownStateError, `${t}: ${e}`);
        assert.match(e.message, /has no state "Doing" that .* can move to/, t);
        assert.match(e.message, /its states: .*(In Progress|in progress)/, t);
      },
    },
    {
      name: "403",
      arrange: (fake, t) => {
        fake.failNext.push({
          status: 403,
          body: JSON.stringify({ message: "Resource not accessible by integration" }),
        });
        return t;
      },
      expect: (e, t) => {
        assert.ok(e instanceof HttpApiError, `${t}: ${e}`);
        assert.equal(e.status, 403, t);
        assert.equal(e.retryable, false, t);
      },
    },
    {
      name: "404 (no such ticket)",
      arrange: (fake, t) => {
        fake.issues.length = 0;
        return t;
      },
      expect: (e, t) => {
        assert.ok(e instanceof HttpApiError, `${t}: ${e}`);
        assert.equal(e.retryable, false, t);
        assert.match(e.message, /404|Entity not found/, t);
      },
    },
  ];
  for (const c of cases) {
    for (const tracker of TRACKERS) {
      await using fake = startFakeTrackerApis([issue()]);
      const t = c.arrange(fake, tracker);
      const e = await move(fake, t, "claimed").then(() => undefined, (e) => e);
      c.expect(e, `${tracker.name}, ${c.name}`);
      assert.deepEqual(fake.moves, [], `${tracker.name}, ${c.name}: nothing moved`);
    }
  }
});
