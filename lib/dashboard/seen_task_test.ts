import assert from "node:assert/strict";
import { cardKey, changedSinceSeen, seenAfter, type ShownTask } from "./seen_task.ts";

const card = (verdict?: string) =>
  cardKey("needs_review", { task_id: "t", last_index: 3, verdict });
const at = (hash: string, c = card(), taskId = "t"): ShownTask => ({ taskId, hash, card: c });

const CASES: {
  name: string;
  seen?: ShownTask;
  shown: ShownTask;
  after: ShownTask;
  changed: boolean;
}[] = [
  { name: "the first board shown is seen", shown: at("h1"), after: at("h1"), changed: false },
  {
    name: "a change elsewhere on the board: the task reads the same, the newer board is seen",
    seen: at("h1"),
    shown: at("h2"),
    after: at("h2"),
    changed: false,
  },
  {
    name: "the task itself changed: what was seen stays",
    seen: at("h1"),
    shown: at("h2", card("merge")),
    after: at("h1"),
    changed: true,
  },
  {
    name: "the board the operator's own review answered is seen, whatever it says of the task",
    seen: { taskId: "t", hash: "h3", card: "" },
    shown: at("h3", card("approve")),
    after: at("h3", card("approve")),
    changed: false,
  },
  {
    name: "another task selected: its board is seen",
    seen: at("h1"),
    shown: at("h2", card("merge"), "u"),
    after: at("h2", card("merge"), "u"),
    changed: false,
  },
  {
    name: "the same column with a new diff is a change",
    seen: at("h1", cardKey("needs_review", { task_id: "t", diff: { sha256: "a" } })),
    shown: at("h2", cardKey("needs_review", { task_id: "t", diff: { sha256: "b" } })),
    after: at("h1", cardKey("needs_review", { task_id: "t", diff: { sha256: "a" } })),
    changed: true,
  },
  {
    name: "a task that got its card while on screen is a change",
    seen: at("h1", cardKey(undefined, undefined)),
    shown: at("h2", card()),
    after: at("h1", cardKey(undefined, undefined)),
    changed: true,
  },
];

Deno.test("seen task: a change to the task on screen is kept from the If-Match until seen, a change elsewhere is not", () => {
  for (const c of CASES) {
    assert.deepEqual(seenAfter(c.seen, c.shown), c.after, c.name);
    assert.equal(changedSinceSeen(seenAfter(c.seen, c.shown), c.shown), c.changed, c.name);
  }
});
