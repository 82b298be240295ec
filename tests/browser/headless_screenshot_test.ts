/**
 * The board page for a headless `chromium --screenshot` (and `--dump-dom`, which captures at the
 * same moment): Chromium takes them when the document's `load` fires, so the page must finish
 * loading — the activity stream must not hold `load` — and must have the board on screen by then.
 * With a Chromium that has these commands, the command is the one a user types, run as a real
 * child process. The npm build (a headless shell compiled without them, ../_chromium.ts) takes the
 * same capture over the DevTools protocol, as the command itself does inside Chromium.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { launchChromium, testChromium } from "../_chromium.ts";
import { openBoard } from "./_harness.ts";

/** What to capture: the DOM, or a PNG written to a path. */
type Capture = { dumpDom: true } | { screenshot: string };

/** A capture of `url` in a 1280×900 window, like `chromium --headless`; fails after `ms`. */
async function headless(url: string, capture: Capture, ms = 30_000) {
  const started = Date.now();
  const browser = await testChromium();
  if (!browser.headlessCommands) {
    const { dom } = await overDevTools(url, capture, ms);
    return { code: 0, dom, ms: Date.now() - started, how: "DevTools protocol" };
  }
  const profile = await Deno.makeTempDir({ prefix: "board-headless-" });
  try {
    const flag = "dumpDom" in capture ? "--dump-dom" : `--screenshot=${capture.screenshot}`;
    const out = await new Deno.Command(browser.executable, {
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        `--user-data-dir=${profile}`,
        "--window-size=1280,900",
        flag,
        url,
      ],
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(ms),
    }).output();
    const dom = new TextDecoder().decode(out.stdout);
    return { code: out.code, dom, ms: Date.now() - started, how: flag.split("=")[0] };
  } finally {
    await Deno.remove(profile, { recursive: true }).catch(() => {});
  }
}

/**
 * The command's capture over the DevTools protocol, in the steps Chromium's own headless command
 * handler takes: navigate, wait for `Page.loadEventFired`, then read the DOM and take the shot.
 */
async function overDevTools(url: string, capture: Capture, ms: number) {
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const cdp = await page.context().newCDPSession(page);
    await cdp.send("Page.enable");
    const loaded = new Promise((resolve) => cdp.once("Page.loadEventFired", resolve));
    await cdp.send("Page.navigate", { url });
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      loaded,
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no load event within ${ms} ms`)), ms);
      }),
    ]).finally(() => clearTimeout(timer));
    const { result } = await cdp.send("Runtime.evaluate", {
      expression: "document.documentElement.outerHTML",
      returnByValue: true,
    });
    if ("screenshot" in capture) {
      const { data } = await cdp.send("Page.captureScreenshot", { format: "png" });
      await Deno.writeFile(capture.screenshot, Uint8Array.from(atob(data), (c) => c.charCodeAt(0)));
    }
    return { dom: String(result.value ?? "") };
  } finally {
    await browser.close();
  }
}

Deno.test("headless chromium --screenshot of the board page finishes, with the board and the selected task on it", async () => {
  await using board = await openBoard();
  const page = `${board.url}/dashboard/review-board?run=golden&task=t-parser`;
  const dumped = await headless(page, { dumpDom: true });
  assert.equal(dumped.code, 0);
  assert.doesNotMatch(dumped.dom, /loading[^<]*…/, "captured before the data arrived");
  assert.match(dumped.dom, /data-column="needs_review"/);
  assert.match(dumped.dom, /data-task-id="t-parser"/);
  assert.match(dumped.dom, /data-attempt="1"/, "the selected task's detail is on it too");
  assert.match(dumped.dom, /data-diff-summary/);
  assert.doesNotMatch(dumped.dom, /data-load-hold/, "the load hold is gone once shown");

  const png = join(board.root, "board.png");
  const shot = await headless(page, { screenshot: png });
  assert.equal(shot.code, 0);
  const bytes = await Deno.readFile(png);
  assert.deepEqual([...bytes.subarray(1, 4)], [0x50, 0x4e, 0x47], "a PNG was written");
  console.log(`screenshot (${shot.how}) finished in ${shot.ms} ms (${bytes.length} bytes)`);
});

Deno.test("headless chromium --dump-dom of a workspace with no runs shows the empty board's words", async () => {
  await using board = await openBoard({
    prepare: (root) => Deno.remove(join(root, ".sdd", "runs", "golden"), { recursive: true }),
  });
  const dumped = await headless(`${board.url}/dashboard/review-board`, { dumpDom: true });
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

Deno.test("headless chromium --dump-dom with tokens set: the recipe's #token= fragment gets the board on the capture, and the token leaves the address", async () => {
  const name = `BOARD_SHOT_TOKEN_${crypto.randomUUID().slice(0, 8)}`;
  Deno.env.set(name, "shot-reader-token");
  try {
    await using board = await openBoard({
      tokens: [{ principal: "camera", scope: "reader", token_env: name }],
    });
    const page = `${board.url}/dashboard/review-board?run=golden&task=t-parser`;
    const refused = await headless(page, { dumpDom: true });
    assert.match(refused.dom, /data-error="401"/, "without the token: not authorised");
    const dumped = await headless(`${page}#token=shot-reader-token`, { dumpDom: true });
    assert.equal(dumped.code, 0);
    assert.doesNotMatch(dumped.dom, /data-error=/);
    assert.match(dumped.dom, /data-column="needs_review"/);
    assert.match(dumped.dom, /data-task-id="t-parser"/);
    const { page: tab } = board;
    await tab.goto(`${page}#token=shot-reader-token`);
    await tab.locator("[data-task-id=t-parser]").first().waitFor();
    assert.equal(new URL(tab.url()).hash, "", "the token is out of the address bar");
  } finally {
    Deno.env.delete(name);
  }
});
