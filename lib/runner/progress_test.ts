import assert from "node:assert/strict";
import { TaskStore } from "../tasks/store.ts";
import { workspacePaths } from "../workspace.ts";
import type { Orchestrator } from "../orchestrator/orchestrator.ts";
import { ProgressDisplay, progressLine, waitLines } from "./progress.ts";

Deno.test("ProgressDisplay: the final summary is not printed again when it repeats the last one", async () => {
  const root = await Deno.makeTempDir();
  try {
    const paths = workspacePaths(root);
    const store = await TaskStore.open(paths, { warn: () => {} });
    const lines: string[] = [];
    const progress = new ProgressDisplay((l) => lines.push(l), "run-1");
    // No agent is live at the end of a run: the summary is the counts alone.
    const orchestrator = {
      liveAgents: () => [],
      waitingReasons: () => ({}),
    } as unknown as Orchestrator;
    progress.start(() => ({ store, runtimeDir: paths.runtime, taskIds: [], orchestrator }));
    progress.stop(); // as when the periodic summary fired in the run's last second
    progress.stop();
    assert.equal(lines.length, 1, lines.join("\n"));
    assert.match(lines[0], /^run run-1 · \d+s · no tasks$/);
    await store.close();
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("progressLine() shows the last line with a word, not the brace closing a CLI's error object", () => {
  // Gemini CLI's stderr while its provider answers 500: a stack trace ending in `}`.
  const gemini = [
    "Attempt 3 failed with status 500. Retrying with backoff... _ApiError: {...}",
    "    at async Turn.run (file:///usr/lib/node_modules/@google/gemini-cli/bundle/chunk.js:1:2) {",
    "  status: 500",
    "}",
    "",
  ];
  const cases: [string[], string][] = [
    [gemini, "status: 500"],
    [['{"type":"turn.started"}'], '{"type":"turn.started"}'],
    [["}", ")"], ")"],
    [[], ""],
  ];
  for (const [tail, line] of cases) assert.equal(progressLine(tail), line, JSON.stringify(tail));
});

Deno.test("waitLines(): a run with no agent at work says what its tasks wait for, escaped, the first three named", () => {
  assert.deepEqual(waitLines({}), []);
  const review = "waiting for an operator's merge decision on the board";
  assert.deepEqual(waitLines({ "work-2": review }), [`  work-2 waits: ${review}`]);
  const many = waitLines({ a: "x", b: "y", c: "z", d: "w", e: "v" });
  assert.deepEqual(many, [
    "  a waits: x",
    "  b waits: y",
    "  c waits: z",
    "  … and 2 more waiting",
  ]);
  // A reason can carry an agent's file name: no control sequence reaches the terminal.
  const [line] = waitLines({ t: "protected: \x1b[2J.github/x\nfake line" });
  assert.ok(!line.includes("\x1b") && !line.includes("\n"), JSON.stringify(line));
});
