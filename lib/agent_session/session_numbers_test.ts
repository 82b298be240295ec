import assert from "node:assert/strict";
import { highestSessionNumber } from "./session_numbers.ts";

Deno.test("a resumed run numbers its sessions on from the highest its journal holds", () => {
  const cases: [string, string[], number][] = [
    ["no session yet", [], 0],
    ["the highest, not the last", ["s-0792-002-d487", "s-0792-010-11c7", "s-0792-009-178b"], 10],
    ["another run's sessions do not count", ["s-1111-042-abcd", "s-0792-003-02e4"], 3],
    ["past 999", ["s-0792-1000-abcd", "s-0792-999-abcd"], 1000],
    [
      "ids of other shapes are ignored",
      ["s-0792-", "s-0792-x12-abcd", "s-0792-12-abcd", "worker-7", "s-0792-0042"],
      0,
    ],
  ];
  for (const [name, ids, expected] of cases) {
    assert.equal(highestSessionNumber(ids, "0792"), expected, name);
  }
});
