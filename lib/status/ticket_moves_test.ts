import assert from "node:assert/strict";
import { failedTicketMoves, ticketMoveLines } from "./ticket_moves.ts";

const row = (data: Record<string, unknown>) =>
  JSON.stringify({ type: "task_ticket_moved", data, seq: 0, v: 1 });

Deno.test("failedTicketMoves() lists the latest failed move per task and event; a later success clears it", () => {
  const base = { tracker: "tracker_a", ref: "PROJ-1", to: "Doing" };
  const lines = [
    row({ ...base, task_id: "a", event: "claimed", outcome: "failed", detail: "no state" }),
    row({ ...base, task_id: "a", event: "claimed", outcome: "moved", state: "Doing" }),
    row({ ...base, task_id: "b", event: "landed", outcome: "failed", detail: "HTTP 403" }),
    row({ ...base, task_id: "b", event: "claimed", outcome: "moved" }),
    "{torn",
    row({ event: "landed", outcome: "failed" }), // malformed: no task_id
  ];
  assert.deepEqual(failedTicketMoves(lines), [
    { ...base, task_id: "b", event: "landed", detail: "HTTP 403" },
  ]);
  assert.deepEqual(ticketMoveLines(failedTicketMoves(lines)), [
    '  b: ticket PROJ-1 not moved to "Doing" (landed): HTTP 403',
  ]);
});
