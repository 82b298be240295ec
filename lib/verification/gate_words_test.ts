import assert from "node:assert/strict";
import { gateSaid, gateText } from "./gate_words.ts";

const COMMAND = 'for f in test/*.js; do node $f || { echo "failed: $f"; exit 1; }; done';

Deno.test("gateSaid(): a failed gate in one line — its name, exit code and the line that says what went wrong", () => {
  const cases: [string, unknown, string][] = [
    [
      "a quality gate: its name, exit code, the error line",
      {
        kind: "quality_gate",
        name: "tests",
        detail: COMMAND,
        output_tail: "ok 1\nfailed: x\n[exit 1]",
      },
      "quality_gate tests (exit 1): failed: x",
    ],
    [
      "the line that reads like an error wins over a later summary",
      {
        kind: "quality_gate",
        name: "tests",
        detail: "npm test",
        output_tail: "TypeError: x is not a function\n    at y (z.js:1)\n# pass 3\n[exit 1]",
      },
      "quality_gate tests (exit 1): TypeError: x is not a function",
    ],
    [
      "no error words: the last line",
      { kind: "quality_gate", name: "lint", detail: "deno lint", output_tail: "2 problems\n" },
      "quality_gate lint: 2 problems",
    ],
    [
      "a completion signal has no name: its kind and detail name it",
      { kind: "test_passes", detail: "npm test", output_tail: "Error: boom\n[exit 2]" },
      "test_passes npm test (exit 2): Error: boom",
    ],
    [
      "a missing path",
      { kind: "path_exists", detail: "docs/x.md", output_tail: "docs/x.md does not exist" },
      "path_exists docs/x.md: docs/x.md does not exist",
    ],
    [
      "blank output: the command",
      { kind: "quality_gate", name: "tests", detail: COMMAND, output_tail: "\n\n[exit 2]\n" },
      `quality_gate tests: ${COMMAND}`,
    ],
    [
      "a gate that timed out says so, whatever its output said before",
      {
        kind: "quality_gate",
        name: "tests",
        detail: "npm test",
        output_tail: "Error: connect ECONNREFUSED\nretrying\n[timed out after 120 s]",
      },
      "quality_gate tests (timed out after 120 s): Error: connect ECONNREFUSED",
    ],
    [
      "a negative exit code (a signal)",
      { kind: "quality_gate", name: "t", detail: "c", output_tail: "killed\n[exit -9]" },
      "quality_gate t (exit -9): killed",
    ],
    [
      "an output that is not text is not quoted",
      { kind: "quality_gate", name: "tests", detail: "x", output_tail: 42 },
      "quality_gate tests: x",
    ],
    [
      "a name that is not text is no name",
      { kind: "quality_gate", name: { x: 1 }, detail: "c", output_tail: "failed" },
      "quality_gate c: failed",
    ],
    ["not an object", "spawn failed", '"spawn failed"'],
    ["null", null, "null"],
  ];
  for (const [what, gate, text] of cases) assert.equal(gateSaid(gate), text, what);
});

Deno.test("gateSaid(): a long line or detail is cut, the cut said", () => {
  const long = "x".repeat(5000);
  assert.equal(
    gateSaid({ kind: "quality_gate", name: "t", detail: "c", output_tail: long }, 200),
    `quality_gate t: ${"x".repeat(200)}…`,
  );
  const line = gateSaid({ kind: "quality_gate", name: "t", detail: "c", output_tail: long });
  assert.ok(line.length <= "quality_gate t: ".length + 300, `${line.length}`);
  assert.ok(line.endsWith("…"));
  const detail = gateSaid({ kind: "test_passes", detail: "y".repeat(500), output_tail: "failed" });
  assert.equal(detail, `test_passes ${"y".repeat(80)}…: failed`);
});

Deno.test("gateText(): the detail view keeps the command; a detail naming its kind is said once", () => {
  assert.equal(
    gateText({ kind: "quality_gate", name: "tests", detail: COMMAND }),
    `quality_gate tests: ${COMMAND}`,
  );
  assert.equal(
    gateText({ kind: "cancelled", detail: "cancelled: by an operator" }),
    "cancelled: by an operator",
  );
});
