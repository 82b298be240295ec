import assert from "node:assert/strict";
import { renderToString } from "preact-render-to-string";
import { cardGateText } from "./card_view.tsx";
import { BoardColumns } from "./board_columns.tsx";
import { manyCardReceipt } from "../../tests/_fixtures.ts";

const COMMAND = 'for f in test/*.js; do node $f || { echo "failed: $f"; exit 1; }; done';

Deno.test("a card's gate line is the gate's words (lib/verification/gate_words.ts), cut at 200 characters", () => {
  assert.equal(
    cardGateText({
      kind: "quality_gate",
      name: "tests",
      detail: COMMAND,
      output_tail: "ok 1\nfailed: test/parse.js\n\n[exit 1]",
    }),
    "quality_gate tests (exit 1): failed: test/parse.js",
  );
  const long = "x".repeat(5000);
  const quoted = cardGateText({ kind: "quality_gate", name: "t", detail: "c", output_tail: long });
  assert.equal(quoted, `quality_gate t: ${"x".repeat(200)}…`, "a 5,000-character line is cut");
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

Deno.test("a card shows the reordering controls of what the agent wrote (its gate output, its reason) instead of obeying them", () => {
  const receipt = manyCardReceipt(5);
  const card = receipt.board.columns.gated[0];
  card.gates = [{
    kind: "agent_failed",
    detail: "agent exited (exit 1): \u202Etxt.exe",
  }];
  const html = renderToString(<BoardColumns board={receipt.board} />);
  assert.ok(!html.includes("\u202E"), "no right-to-left override acts on the card");
  assert.match(html, /agent_failed: agent exited \(exit 1\): ⟨U\+202E⟩txt\.exe/);
});
