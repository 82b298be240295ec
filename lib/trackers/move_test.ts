import assert from "node:assert/strict";
import { decideMove, moveFor, UnknownStateError } from "./move.ts";
import { planLabelMove } from "./label_move.ts";

Deno.test("decideMove(): already there, a done ticket left alone by a claim or failure, else moved", () => {
  const cases: [string, Parameters<typeof decideMove>[0], string][] = [
    ["same name, other case", {
      event: "claimed",
      current: "in progress",
      currentDone: false,
      target: " In Progress ",
    }, "already"],
    ["open ticket claimed", {
      event: "claimed",
      current: "To Do",
      currentDone: false,
      target: "In Progress",
    }, "move"],
    ["done ticket, a later attempt claimed", {
      event: "claimed",
      current: "Done",
      currentDone: true,
      target: "In Progress",
    }, "left"],
    ["done ticket, its task failed", {
      event: "failed",
      current: "Canceled",
      currentDone: true,
      target: "Blocked",
    }, "left"],
    ["done ticket (cancelled), work landed", {
      event: "landed",
      current: "Canceled",
      currentDone: true,
      target: "Done",
    }, "move"],
  ];
  for (const [name, input, act] of cases) assert.equal(decideMove(input).act, act, name);
});

Deno.test("moveFor() asks for the configured state and names the other configured ones", () => {
  const moves = { claimed: "In Progress", landed: "closed", failed: "in progress" };
  assert.deepEqual(moveFor(moves, "landed"), {
    event: "landed",
    to: "closed",
    others: ["In Progress", "in progress"],
  });
  assert.deepEqual(moveFor(moves, "claimed")?.others, ["closed"]);
  assert.equal(moveFor({ landed: "Done" }, "claimed"), undefined);
});

Deno.test("planLabelMove(): labels are matched case-insensitively, never invented, and replace each other", () => {
  const move = { event: "claimed" as const, to: "IN PROGRESS", others: ["closed", "blocked"] };
  const known = ["bug", "In Progress", "Blocked"];
  assert.deepEqual(
    planLabelMove({
      product: "GitHub",
      ref: "o/r#1",
      closed: false,
      labels: ["blocked"],
      known,
      move,
    }),
    {
      add: "In Progress",
      remove: ["blocked"],
      close: false,
      result: { outcome: "moved", state: "In Progress" },
    },
  );
  assert.deepEqual(
    planLabelMove({
      product: "GitHub",
      ref: "o/r#1",
      closed: false,
      labels: ["in progress"],
      known,
      move,
    }),
    { done: { outcome: "already", state: "In Progress" } },
  );
  assert.deepEqual(
    planLabelMove({ product: "GitHub", ref: "o/r#1", closed: true, labels: [], known, move }),
    { done: { outcome: "left", state: "closed" } },
  );
  assert.throws(
    () =>
      planLabelMove({
        product: "GitLab",
        ref: "g/p#1",
        closed: false,
        labels: [],
        known: ["bug"],
        move: { ...move, to: "Doing" },
      }),
    (e) =>
      e instanceof UnknownStateError &&
      e.message === 'GitLab has no state "Doing" that g/p#1 can move to; its states: closed, bug',
  );
});
