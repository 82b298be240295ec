/**
 * The evidence panel in the real browser (spec §2.5): a sealed bundle's producers with exit codes
 * and digests, the gate verdict and the flags; EVIDENCE UNVERIFIED with the reasons once a stored
 * output is edited; the 404 words for a task that declared producers and has nothing sealed.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { sealEvidence } from "../../lib/verification/seal.ts";
import { workspacePaths } from "../../lib/workspace.ts";
import { sha256Hex } from "../../lib/journal/hash.ts";
import { TaskStore } from "../../lib/tasks/store.ts";
import { openBoard, screenshot } from "./_harness.ts";

const REPORT = new TextEncoder().encode("Ran 2 tests in 0.001s\n\nOK\n");

async function seal(root: string) {
  await sealEvidence({
    paths: workspacePaths(root),
    runId: "golden",
    journalPath: join(root, ".sdd/runs/golden/journal.jsonl"),
    taskId: "t-parser",
    sessionId: "s-parser",
    tree: "d".repeat(40),
    evidence: { tests_run: true, quality_gates_run: true, completion_signals_checked: true },
    gates: {
      passed: true,
      commit: "c".repeat(40),
      warnings: [],
      signals: [
        { kind: "path_exists", detail: "parser.ts", passed: true, output_tail: "", duration_ms: 1 },
        {
          kind: "quality_gate",
          name: "lint",
          detail: "deno lint",
          passed: true,
          exit_code: 0,
          output_tail: "",
          duration_ms: 9,
        },
      ],
      producers: [
        {
          name: "unittest",
          command: "python3 -m unittest",
          exit_code: 0,
          timed_out: false,
          truncated: false,
          duration_ms: 80,
          output: REPORT,
        },
        {
          name: "coverage",
          command: "coverage report --fail-under 90",
          exit_code: 2,
          timed_out: false,
          truncated: false,
          duration_ms: 40,
          output: new TextEncoder().encode("TOTAL 81%\n"),
        },
      ],
    },
  });
}

Deno.test("board page: the evidence panel shows producers, exit codes, digests and the verdict; an edited output shows EVIDENCE UNVERIFIED", async () => {
  await using board = await openBoard({ prepare: seal });
  const { page } = board;
  await page.goto(`${board.url}/dashboard/review-board?run=golden&task=t-parser`);
  await page.locator("[data-evidence-verified]").waitFor();
  assert.equal(await page.textContent("[data-producer=unittest] [data-exit-code]"), "exit 0");
  assert.equal(await page.textContent("[data-producer=coverage] [data-exit-code]"), "exit 2");
  assert.match(
    (await page.textContent("[data-producer=unittest]"))!,
    new RegExp(`sha256:${sha256Hex(REPORT)} · ${REPORT.length} bytes`),
  );
  assert.equal(await page.locator("[data-verdict=passed]").count(), 1);
  assert.match(
    (await page.textContent("[data-check=lint]"))!,
    /pass.*quality_gate.*lint.*deno lint/,
  );
  assert.equal(await page.locator("[data-evidence-flag][data-on='1']").count(), 3);
  await screenshot(page, "evidence_panel.png");

  const output = join(board.runDir("golden"), "evidence/t-parser", sha256Hex(REPORT));
  await Deno.writeTextFile(output, "Ran 2 tests in 0.001s\n\nFAILED (failures=1)\n");
  await page.reload();
  await page.locator("[data-evidence-unverified]").waitFor();
  assert.equal(await page.textContent("[data-evidence-unverified]"), "EVIDENCE UNVERIFIED");
  assert.match(
    (await page.textContent("[data-evidence-problems]"))!,
    /unittest.*no longer re-hashes/,
  );
});

Deno.test("board page: a task that declared producers with nothing sealed says so", async () => {
  await using board = await openBoard({
    prepare: async (root) => {
      const store = await TaskStore.open(workspacePaths(root));
      await store.create([{
        id: "t-docs",
        title: "Docs",
        role: "docs",
        priority: 2,
        scope: "small",
        complexity: "low",
        depends_on: [],
        owned_files: [],
        completion_signals: [],
        evidence: [{ name: "docs", command: "mdlint", timeout_s: 60 }],
        batch_eligible: false,
      }], { runId: "golden" });
      await store.close();
    },
  });
  const { page } = board;
  await page.goto(`${board.url}/dashboard/review-board?run=golden&task=t-docs`);
  await page.locator("[data-no-evidence=not_sealed]").waitFor();
  assert.match((await page.textContent("[data-no-evidence]"))!, /nothing sealed yet/);
});
