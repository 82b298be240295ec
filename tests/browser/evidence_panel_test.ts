/**
 * The evidence panel in the real browser (spec §2.5): a sealed bundle's producers with exit codes
 * and digests, the gate verdict and the flags; EVIDENCE UNVERIFIED with the reasons once a stored
 * output is edited; the 404 words for a task that declared producers and has nothing sealed.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  passedCheck,
  producerRun,
  sealSample,
  taskInput,
} from "../../lib/verification/_test_fixtures.ts";
import { workspacePaths } from "../../lib/workspace.ts";
import { sha256Hex } from "../../lib/journal/hash.ts";
import { TaskStore } from "../../lib/tasks/store.ts";
import { openBoard, screenshot } from "./_harness.ts";

const REPORT_TEXT = "Ran 2 tests in 0.001s\n\nOK\n";
const REPORT = new TextEncoder().encode(REPORT_TEXT);

async function seal(root: string): Promise<void> {
  await sealSample(workspacePaths(root), {
    runId: "golden",
    taskId: "t-parser",
    checks: [
      passedCheck("path_exists", "parser.ts"),
      passedCheck("quality_gate", "deno lint", "lint"),
    ],
    producers: [producerRun("unittest", REPORT_TEXT), producerRun("coverage", "TOTAL 81%\n", 2)],
  });
}

Deno.test("board page: the evidence panel shows producers, exit codes, digests and the verdict; an edited output shows EVIDENCE UNVERIFIED, on the card too", async () => {
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
  assert.equal(await page.locator(".columns [data-card-evidence]").count(), 0);
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
  // The card says so too, where an operator scanning the board sees it.
  const mark = page.locator(".columns [data-task-id=t-parser] [data-card-evidence=unverified]");
  assert.match((await mark.innerText())!, /EVIDENCE UNVERIFIED/);
  assert.match((await mark.getAttribute("title"))!, /unittest.*no longer re-hashes/);
});

Deno.test("board page: a task that declared producers with nothing sealed says so", async () => {
  await using board = await openBoard({
    prepare: async (root) => {
      const store = await TaskStore.open(workspacePaths(root));
      await store.create([
        taskInput("t-docs", { evidence: [{ name: "docs", command: "mdlint", timeout_s: 60 }] }),
      ], { runId: "golden" });
      await store.close();
    },
  });
  const { page } = board;
  await page.goto(`${board.url}/dashboard/review-board?run=golden&task=t-docs`);
  await page.locator("[data-no-evidence=not_sealed]").waitFor();
  assert.match((await page.textContent("[data-no-evidence]"))!, /nothing sealed yet/);
});

Deno.test("board page: a task with no evidence says so without a failed request or a console error", async () => {
  await using board = await openBoard();
  const { page } = board;
  const errors: string[] = [];
  const failed: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("response", (r) => {
    if (r.status() >= 400) failed.push(`${r.status()} ${new URL(r.url()).pathname}`);
  });
  await page.goto(`${board.url}/dashboard/review-board?run=golden&task=t-docs`);
  await page.locator("[data-no-evidence=none]").waitFor();
  assert.equal(await page.textContent("[data-no-evidence]"), "no evidence producers declared");
  await page.locator("[data-attempt], .detail .error").first().waitFor().catch(() => {});
  assert.deepEqual(failed, [], "no request of the page failed");
  assert.deepEqual(errors, [], "no console error");
});
