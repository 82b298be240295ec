import assert from "node:assert/strict";
import { isoTime } from "./ticket.ts";

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
