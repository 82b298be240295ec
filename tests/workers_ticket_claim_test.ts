/**
 * A claim with a one-time ticket (DESIGN.md §17): through the route, the run's desk redeems it —
 * the ticket's task only, once, for its own run — and refuses everything else with the status
 * the worker reads (403 unknown, 409 used / expired / another run, 503 while no run is live).
 */
import assert from "node:assert/strict";
import { createApp } from "../routes/_app.ts";
import { appContext } from "../lib/server/serve.ts";
import { openDesk } from "../lib/workers/desk.ts";
import { RemoteWork, type RemoteWorkOptions } from "../lib/workers/remote_work.ts";
import { TicketBook } from "../lib/workers/tickets.ts";
import type { CoreEvent } from "../lib/orchestrator/core/protocol.ts";
import { tempDir } from "./helpers.ts";
// A run takes claims only with a worker token configured (lib/workers/admission.ts).
import { WORKER_READ, WORKER_TOKENS } from "./_workers.ts";

function claim(app: ReturnType<typeof createApp>, worker: string, body: unknown) {
  return app.request(`/workers/${worker}/claim`, {
    method: "POST",
    headers: { "content-type": "application/json", ...WORKER_READ },
    body: JSON.stringify(body),
  });
}

Deno.test("a ticket claim asks the run for the ticket's task only, once; other tickets are refused", async () => {
  await using dir = await tempDir();
  await Deno.writeTextFile(`${dir.path}/service.yaml`, "cli: claude\nroles: [backend]\n");
  const app = createApp(appContext(dir.path, WORKER_TOKENS));
  const ticket = "svctkt_abcdefghijklmnop";
  // No run live: the pod keeps its ticket and asks again.
  const early = await claim(app, "svc-t1-pod", { free: 1, ticket });
  assert.equal(early.status, 503);
  assert.equal((await early.json()).error.code, "no_live_run");

  const tickets = new TicketBook({ clock: () => 1_000 });
  const mine = await tickets.mint({
    run_id: "r1",
    task_id: "t1",
    session_id: "s-r1-001",
    job: "svc-t1-abc",
    isolation: "pod:x:1",
    expires_at: 60_000,
  });
  const other = await tickets.mint({
    run_id: "r0",
    task_id: "t2",
    session_id: "s-r0-001",
    job: "svc-t2-abc",
    isolation: "pod:x:1",
    expires_at: 60_000,
  });
  const asked: CoreEvent[] = [];
  const remote: RemoteWork = new RemoteWork({
    runId: "r1",
    tickets,
    // The run's watch on its workers reads the workspace's registry (lib/workers/registry.ts).
    paths: { root: dir.path },
    log: () => {},
    clock: Date.now,
    push: (e: CoreEvent) => {
      asked.push(e);
      // The core answers at once with nothing: the claim is what is under test here.
      if (e.type === "worker_asks") {
        void remote.dispatch({
          kind: "dispatch",
          requestId: e.requestId,
          worker: e.worker,
          tasks: [],
        });
      }
    },
  } as unknown as RemoteWorkOptions);
  const close = openDesk(dir.path, remote);
  try {
    const table: [string, unknown, number, string][] = [
      [
        "a ticket never minted",
        { free: 1, ticket: "svctkt_neverminted0000" },
        403,
        "ticket_unknown",
      ],
      ["another run's ticket", { free: 1, ticket: other }, 409, "ticket_other_run"],
      ["not a ticket at all", { free: 1, ticket: "../../etc" }, 400, ""],
    ];
    for (const [what, body, status, code] of table) {
      const res = await claim(app, "svc-t1-pod", body);
      assert.equal(res.status, status, what);
      if (code) assert.equal((await res.json()).error.code, code, what);
      else await res.body?.cancel();
    }
    assert.equal(asked.length, 0, "a refused ticket asks the run nothing");
    const first = await claim(app, "svc-t1-pod", { free: 4, ticket: mine });
    assert.equal(first.status, 204);
    assert.equal(asked.length, 1);
    const ask = asked[0];
    assert.ok(ask.type === "worker_asks");
    assert.equal(ask.task, "t1", "the ticket's task only");
    assert.equal(ask.free, 1, "one task, whatever the body asked");
    const again = await claim(app, "svc-t1-pod", { free: 1, ticket: mine });
    assert.equal(again.status, 409);
    assert.equal((await again.json()).error.code, "ticket_used");
  } finally {
    close();
  }
});
