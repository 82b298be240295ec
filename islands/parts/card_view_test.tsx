import assert from "node:assert/strict";
import { renderToString } from "preact-render-to-string";
import { cardGateText } from "./card_view.tsx";
import { gateText } from "../../lib/verification/gate_words.ts";
import { BoardColumns } from "./board_columns.tsx";
import { manyCardReceipt } from "../../tests/_fixtures.ts";

const COMMAND = 'for f in test/*.js; do node $f || { echo "failed: $f"; exit 1; }; done';

Deno.test("a card's gate line says what the gate's output said last, the command staying in the task's detail", () => {
  const cases: [string, unknown, string][] = [
    [
      "a quality gate: its name, its exit code and its last line",
      {
        kind: "quality_gate",
        name: "tests",
        detail: COMMAND,
        output_tail: "ok 1\nfailed: test/parse.js\n\n[exit 1]",
      },
      "quality_gate tests (exit 1): failed: test/parse.js",
    ],
    [
      "no exit line: the last line alone",
      { kind: "quality_gate", name: "lint", detail: "deno lint", output_tail: "2 problems\n" },
      "quality_gate lint: 2 problems",
    ],
    [
      "output of blank lines only: the command, as before",
      { kind: "quality_gate", name: "tests", detail: COMMAND, output_tail: "\n\n[exit 2]\n" },
      `quality_gate tests: ${COMMAND}`,
    ],
    [
      "a signal without output: kind and detail",
      { kind: "test_passes", detail: "deno test exited 1" },
      "test_passes: deno test exited 1",
    ],
    [
      "a detail that names its kind already is said once",
      { kind: "cancelled", detail: "cancelled: by an operator" },
      "cancelled: by an operator",
    ],
    [
      "a gate's output that is not text is not quoted",
      { kind: "quality_gate", name: "tests", detail: "x", output_tail: 42 },
      "quality_gate tests: x",
    ],
    ["not an object", "spawn failed", '"spawn failed"'],
  ];
  for (const [what, gate, text] of cases) assert.equal(cardGateText(gate), text, what);
  const long = "x".repeat(5000);
  const quoted = cardGateText({ kind: "quality_gate", name: "t", detail: "c", output_tail: long });
  assert.equal(quoted, `quality_gate t: ${"x".repeat(200)}…`, "a 5,000-character line is cut");
  assert.equal(
    gateText({ kind: "quality_gate", name: "tests", detail: COMMAND }),
    `quality_gate tests: ${COMMAND}`,
  );
});

Deno.test("a gate's output is rendered inert on the card, the command in its title", () => {
  const receipt = manyCardReceipt(5);
  const card = receipt.board.columns.gated[0];
  card.gates = [{
    kind: "quality_gate",
    name: "tests",
    detail: COMMAND,
    output_tail: '<img src=x onerror="alert(1)">\u001b[31mred\n[exit 1]',
  }];
  const html = renderToString(<BoardColumns board={receipt.board} />);
  assert.doesNotMatch(html, /<img src=x/);
  assert.match(html, /quality_gate tests \(exit 1\): &lt;img src=x onerror=/);
  assert.match(
    html,
    /title="quality_gate tests: for f in test\/\*\.js; do node \$f \|\| \{ echo &quot;failed: \$f&quot;; exit 1; }; done"/,
  );
});
