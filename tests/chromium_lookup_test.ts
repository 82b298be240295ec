/** The browser tests find a Chromium on any machine: variable, system, then the npm build. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { findChromium } from "./_chromium.ts";
import { CHROMIUM_ARGS } from "./_e2e.ts";

/** Directories of fake browsers, removed when the test file's tests are done. */
const made: string[] = [];
addEventListener("unload", () => made.forEach((d) => Deno.removeSync(d, { recursive: true })));

async function fakeBrowserDir(name: string): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "chromium-path-" });
  made.push(dir);
  await Deno.writeTextFile(join(dir, name), "#!/bin/sh\n", { mode: 0o755 });
  return dir;
}

Deno.test("SERVICE_TEST_CHROMIUM wins over a browser on PATH", async () => {
  const dir = await fakeBrowserDir("chromium");
  const mine = join(await fakeBrowserDir("my-chrome"), "my-chrome");
  const env = { SERVICE_TEST_CHROMIUM: mine, PATH: dir } as Record<string, string>;
  assert.equal(await findChromium((k) => env[k]), mine);
});

Deno.test("a SERVICE_TEST_CHROMIUM that is not an executable is an error naming it", async () => {
  const env = { SERVICE_TEST_CHROMIUM: "/nonexistent/chrome", PATH: "" } as Record<string, string>;
  await assert.rejects(() => findChromium((k) => env[k]), /SERVICE_TEST_CHROMIUM=\/nonexistent/);
});

Deno.test("a system Chromium or Chrome on PATH comes next, in order", async () => {
  for (const name of ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"]) {
    const dir = await fakeBrowserDir(name);
    assert.equal(
      await findChromium((k) => (k === "PATH" ? `/nonexistent:${dir}` : undefined)),
      join(dir, name),
    );
  }
});

Deno.test("with no browser installed, the Chromium shipped in the npm package runs the board's kind of page", async () => {
  const executable = await findChromium((k) => (k === "PATH" ? "/nonexistent" : undefined));
  assert.ok(!executable.startsWith("/usr/"), `expected the npm build, got ${executable}`);
  const browser = await chromium.launch({
    executablePath: executable,
    headless: true,
    args: CHROMIUM_ARGS,
  });
  try {
    const page = await browser.newPage();
    await page.setContent("<button onclick=\"this.textContent = 'clicked'\">go</button>");
    await page.click("button");
    assert.equal(await page.textContent("button"), "clicked");
  } finally {
    await browser.close();
  }
});
