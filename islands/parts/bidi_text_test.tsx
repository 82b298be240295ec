/**
 * Every text an agent wrote shows the controls that reorder text (U+202A–U+202E, U+2066–U+2069)
 * as visible marks, not only titles and file names: a diff line, a summary, a reason, a gate's
 * line and output, a session log's tail, a review note. An override in a diff line is the
 * "Trojan Source" attack itself: the reviewer reads code in another order than it runs.
 */
import assert from "node:assert/strict";
import type { VNode } from "preact";
import { renderToString } from "preact-render-to-string";
import { AttemptsView, type AttemptsViewProps } from "./attempts_view.tsx";
import { BoardColumns } from "./board_columns.tsx";
import { DiffLines } from "./diff_view.tsx";
import { parseUnifiedDiff } from "../../lib/diff/parse.ts";
import { manyCardReceipt } from "../../tests/_fixtures.ts";

/** Overrides and isolates that would make the text read in another order than it is. */
const HOSTILE =
  "access \u202E }\u2066 if (isAdmin)\u2069 \u2066 begin admins only \u202A\u202B\u202C\u202D\u2067\u2068";
const CONTROLS = /[\u202A-\u202E\u2066-\u2069]/;

function card(): VNode {
  const receipt = manyCardReceipt(3);
  const gated = receipt.board.columns.gated[0];
  gated.gates = [{
    kind: "quality_gate",
    name: "tests",
    detail: `npm test ${HOSTILE}`,
    output_tail: `${HOSTILE}\n[exit 1]`,
  }];
  gated.verdict = { decision: "approve", principal: "op", index: 99, note: HOSTILE };
  return <BoardColumns board={receipt.board} />;
}

function attempts(): VNode {
  const detail: AttemptsViewProps["detail"] = {
    task_id: "a",
    depends_on: [],
    planned: true,
    state: "failed",
    reason: HOSTILE,
    rebases: 0,
    merge_decided: false,
    attempts: [{
      session_id: "s1",
      number: 1,
      outcome: "failed",
      summary: HOSTILE,
      reviews: [{ decision: "approve", principal: "op", index: 5, note: HOSTILE }],
      signals: [{ kind: "quality_gate", name: "t", detail: HOSTILE, output_tail: HOSTILE }],
      log: { sha256: "sha256:" + "0".repeat(64), bytes: 10, verified: true, tail: HOSTILE },
    }],
  };
  return <AttemptsView detail={detail} />;
}

function diffLine(): VNode {
  const [file] = parseUnifiedDiff(
    `diff --git a/a.js b/a.js\n--- a/a.js\n+++ b/a.js\n@@ -1,1 +1,1 @@\n-old\n+${HOSTILE}\n`,
  );
  return <DiffLines file={file} />;
}

const PLACES: [string, () => VNode, number][] = [
  ["a card's gate line, its tooltip and the verdict's note", card, 3],
  ["the task detail's reason, summary, review note, signal, output and log tail", attempts, 6],
  ["a line of the diff", diffLine, 1],
];

for (const [where, render, times] of PLACES) {
  Deno.test(`reordering controls in ${where} are shown as marks, never obeyed`, () => {
    const html = renderToString(render());
    assert.doesNotMatch(html, CONTROLS, "no raw reordering control reaches the page");
    assert.ok(
      html.split("⟨U+202E⟩").length - 1 >= times,
      `every place shows the override as a mark (${times}): ${html.slice(0, 400)}`,
    );
    for (const mark of ["⟨U+2066⟩", "⟨U+2069⟩", "⟨U+202A⟩", "⟨U+2068⟩"]) {
      assert.ok(html.includes(mark), mark);
    }
  });
}
