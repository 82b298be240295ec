import assert from "node:assert/strict";
import { isoTime, ticketLabels } from "./ticket.ts";
import { linearIssueTicket } from "./linear/webhook.ts";

Deno.test("isoTime() reads the trackers' times and never throws on a time no date holds", () => {
  const cases: [unknown, string | undefined][] = [
    ["2026-11-20T10:00:00Z", "2026-11-20T10:00:00.000Z"],
    ["2026-11-20T10:00:00.000+0100", "2026-11-20T09:00:00.000Z"],
    ["2026-11-20 10:00:00 UTC", "2026-11-20T10:00:00.000Z"],
    [1795000000, "2026-11-18T11:06:40.000Z"],
    [1795000000000, "2026-11-18T11:06:40.000Z"],
    [1e20, undefined],
    [-1e20, undefined],
    [Infinity, undefined],
    ["not a time", undefined],
    ["", undefined],
    [{}, undefined],
    [null, undefined],
  ];
  for (const [value, expected] of cases) assert.equal(isoTime(value), expected, String(value));
});

Deno.test("ticketLabels() tells an event that names no labels from one whose labels were all removed", () => {
  assert.deepEqual(ticketLabels([{ name: "agent" }, "bug", { title: "API" }]), {
    labels: ["agent", "bug", "API"],
  });
  assert.deepEqual(ticketLabels([]), { labels: [] });
  for (const absent of [undefined, null, "agent", {}]) {
    assert.deepEqual(ticketLabels(absent), { labels: [], labelsUnknown: true });
  }
  // Linear's update events may carry only `labelIds`.
  const linear = linearIssueTicket(
    { id: "lin-1", identifier: "ENG-1", labelIds: ["x"] },
    "tracker_d",
  );
  assert.equal(linear.labelsUnknown, true);
});
