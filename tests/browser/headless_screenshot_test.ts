/**
 * The board page for a headless `chromium --screenshot` (and `--dump-dom`, which captures at the
 * same moment): Chromium takes them when the document's `load` fires, so the page must finish
 * loading — the activity stream must not hold `load` — and must have the board on screen by then.
 * The command is the one a user types, run as a real child process.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { chromiumExecutable } from "../_chromium.ts";
import { openBoard } from "./_harness.ts";

/** Run headless Chromium on `url` with `args`; fails after `ms` (the page never loaded). */
async function headless(url: string, args: string[], ms = 30_000) {
  const profile = await Deno.makeTempDir({ prefix: "board-headless-" });
  try {
    const started = Date.now();
    const out = await new Deno.Command(await chromiumExecutable(), {
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        `--user-data-dir=${profile}`,
        "--window-size=1280,900",
        ...args,
        url,
      ],
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(ms),
    }).output();
    return { code: out.code, dom: new TextDecoder().decode(out.stdout), ms: Date.now() - started };
  } finally {
    await Deno.remove(profile, { recursive: true }).catch(() => {});
  }
}

Deno.test("headless chromium --screenshot of the board page finishes, with the board and the selected task on it", async () => {
  await using board = await openBoard();
  const page = `${board.url}/dashboard/review-board?run=golden&task=t-parser`;
  const dumped = await headless(page, ["--dump-dom"]);
  assert.equal(dumped.code, 0);
  assert.doesNotMatch(dumped.dom, /loading[^<]*…/, "captured before the data arrived");
  assert.match(dumped.dom, /data-column="needs_review"/);
  assert.match(dumped.dom, /data-task-id="t-parser"/);
  assert.match(dumped.dom, /data-attempt="1"/, "the selected task's detail is on it too");
  assert.match(dumped.dom, /data-diff-summary/);
  assert.doesNotMatch(dumped.dom, /data-load-hold/, "the load hold is gone once shown");

  const png = join(board.root, "board.png");
  const shot = await headless(page, [`--screenshot=${png}`]);
  assert.equal(shot.code, 0);
  const bytes = await Deno.readFile(png);
  assert.deepEqual([...bytes.subarray(1, 4)], [0x50, 0x4e, 0x47], "a PNG was written");
  console.log(`--screenshot finished in ${shot.ms} ms (${bytes.length} bytes)`);
});

Deno.test("headless chromium --dump-dom of a workspace with no runs shows the empty board's words", async () => {
  await using board = await openBoard({
    prepare: (root) => Deno.remove(join(root, ".sdd", "runs", "golden"), { recursive: true }),
  });
  const dumped = await headless(`${board.url}/dashboard/review-board`, ["--dump-dom"]);
  assert.equal(dumped.code, 0);
  assert.match(dumped.dom, /No runs yet/);
});

Deno.test("board page: the activity stream opens only once the document has loaded", async () => {
  await using board = await openBoard();
  const { page } = board;
  // Some browsers count an open event stream against `load`: one opened earlier never lets
  // the page finish loading. A slow image keeps this page loading for a while, as a slow
  // network would.
  await page.route("**/slow.gif", async (route) => {
    await new Promise((r) => setTimeout(r, 1500));
    await route.fulfill({ status: 404, body: "" });
  });
  await page.addInitScript(() => {
    const states: string[] = [];
    Object.assign(globalThis, { streamOpenedWhile: states });
    globalThis.EventSource = class extends EventSource {
      constructor(url: string | URL, init?: EventSourceInit) {
        states.push(document.readyState);
        super(url, init);
      }
    };
    document.addEventListener("DOMContentLoaded", () => {
      const img = document.createElement("img");
      img.src = "/slow.gif";
      document.body.append(img);
    });
  });
  await page.goto(`${board.url}/dashboard/review-board?run=golden`);
  await page.locator(".live[data-state=live]").waitFor();
  assert.deepEqual(
    await page.evaluate(() =>
      (globalThis as unknown as { streamOpenedWhile: string[] }).streamOpenedWhile
    ),
    ["complete"],
  );
});
