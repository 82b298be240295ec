import assert from "node:assert/strict";
import type { OutlineTask } from "../board/activity_types.ts";
import type { Card } from "../board/types.ts";
import { cardFace } from "./card_face.ts";

const CARD: Card = {
  task_id: "a",
  last_index: 9,
  gates: [{ kind: "merge_conflict", detail: "x.py" }],
  verdict: { decision: "merge", principal: "op", index: 4 },
};

function task(over: Partial<OutlineTask>): OutlineTask {
  return {
    task_id: "a",
    depends_on: [],
    planned: true,
    state: "needs_review",
    attempts: 1,
    rebases: 0,
    merge_decided: false,
    ...over,
  };
}

Deno.test("cardFace() shows the current attempt's gates and verdict only; older ones are history", () => {
  const table: { name: string; task?: OutlineTask; gates: boolean; verdict: boolean }[] = [
    { name: "no outline entry: as projected", task: undefined, gates: true, verdict: true },
    {
      name: "the attempt that was gated and merged is the current one",
      task: task({ state: "gated", current_since: 2, gated_index: 6 }),
      gates: true,
      verdict: true,
    },
    {
      name: "a new attempt after the conflict",
      task: task({ attempts: 2, current_since: 8, gated_index: 6 }),
      gates: false,
      verdict: false,
    },
    {
      name: "a rebase replaced the merged diff; its gates came after",
      task: task({ current_since: 5, gated_index: 6 }),
      gates: true,
      verdict: false,
    },
  ];
  for (const c of table) {
    const face = cardFace(CARD, c.task);
    assert.equal(face.card.gates !== undefined, c.gates, c.name);
    assert.equal(face.card.verdict !== undefined, c.verdict, c.name);
    assert.equal(face.history, !c.gates || !c.verdict, c.name);
  }
  assert.deepEqual(CARD.gates, [{ kind: "merge_conflict", detail: "x.py" }], "never changed");
  const withDiff: Card = { ...CARD, diff: { sha256: "sha256:d1", added: 1, removed: 0, files: 1 } };
  const running = cardFace(withDiff, task({ attempts: 2, current_since: 8, diff_index: 3 }));
  assert.equal(running.card.diff, undefined, "attempt 2 has not captured a diff yet");
  const captured = cardFace(withDiff, task({ attempts: 2, current_since: 8, diff_index: 10 }));
  assert.equal(captured.card.diff?.sha256, "sha256:d1");
  assert.equal(CARD.verdict?.index, 4);
});

Deno.test("cardFace() says what the column cannot: the attempt, FAILED or cancelled, a block, tampered evidence", () => {
  assert.equal(cardFace(CARD, task({ attempts: 3 })).attempt, 3);
  assert.equal(cardFace(CARD, task({ attempts: 0 })).attempt, undefined);
  for (const state of ["failed", "cancelled", "blocked", "waiting"] as const) {
    assert.deepEqual(cardFace(CARD, task({ state, reason: "why" })).standing, {
      state,
      reason: "why",
    });
  }
  assert.equal(cardFace(CARD, task({ state: "gated" })).standing, undefined);
  const mark = { verified: false, problems: ["bundle.json is missing"] };
  assert.deepEqual(cardFace(CARD, task({}), mark).evidence, mark);
});

Deno.test("cardFace() carries where the current attempt's agent runs, from the outline only", () => {
  const iso = `container:docker:${"1".repeat(64)}`;
  assert.equal(cardFace(CARD, task({ isolation: iso })).isolation, iso);
  assert.equal(cardFace(CARD, task({})).isolation, undefined);
  assert.equal(cardFace(CARD, undefined).isolation, undefined);
});
