/** The browser tests find a Chromium on any machine: variable, system, then the npm build. */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { CHROMIUM_ARGS, findChromium } from "./_chromium.ts";

/** Directories of fake browsers and unpacked builds, removed when the file's tests are done. */
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
  const found = await findChromium((k) => env[k]);
  assert.equal(found.executable, mine);
  assert.equal(found.source, "SERVICE_TEST_CHROMIUM");
});

Deno.test("a SERVICE_TEST_CHROMIUM that is not an executable is an error naming it", async () => {
  const env = { SERVICE_TEST_CHROMIUM: "/nonexistent/chrome", PATH: "" } as Record<string, string>;
  await assert.rejects(() => findChromium((k) => env[k]), /SERVICE_TEST_CHROMIUM=\/nonexistent/);
});

Deno.test("a system Chromium or Chrome on PATH comes next, in order", async () => {
  for (const name of ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"]) {
    const dir = await fakeBrowserDir(name);
    const found = await findChromium((k) => (k === "PATH" ? `/nonexistent:${dir}` : undefined));
    assert.equal(found.executable, join(dir, name));
    assert.equal(found.source, "PATH");
    assert.equal(found.headlessCommands, true);
  }
});

Deno.test("SERVICE_TEST_CHROMIUM=npm takes the npm build even with a browser on PATH, as a machine without one would", async () => {
  const dir = await fakeBrowserDir("chromium");
  const env = { SERVICE_TEST_CHROMIUM: "npm", PATH: dir } as Record<string, string>;
  const found = await findChromium((k) => env[k]);
  assert.equal(found.source, "npm");
  assert.ok(!found.executable.startsWith(dir), found.executable);
});

Deno.test("test files starting together on a fresh machine unpack the npm build once, whole, into a directory of its own", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "fresh-tmp-" });
  made.push(tmp);
  const env = (k: string) => ({ TMPDIR: tmp, PATH: "/nonexistent" } as Record<string, string>)[k];
  const found = await Promise.all([findChromium(env), findChromium(env), findChromium(env)]);
  assert.equal(new Set(found.map((f) => f.executable)).size, 1);
  const [c] = found;
  assert.ok(c.executable.startsWith(join(tmp, "service-test-chromium-")), c.executable);
  const entries = (await Array.fromAsync(Deno.readDir(tmp))).map((e) => e.name).sort();
  assert.equal(entries.filter((n) => !n.endsWith(".lock")).length, 1, `${entries}`);
  const version = await new Deno.Command(c.executable, { args: ["--version"], stdout: "piped" })
    .output();
  assert.match(new TextDecoder().decode(version.stdout), /^Chromium \d+\./);
});

Deno.test("the npm build is a headless shell without --dump-dom and --screenshot: the lookup says so", async () => {
  const c = await findChromium((k) => (k === "PATH" ? "/nonexistent" : undefined));
  assert.equal(c.source, "npm");
  assert.equal(c.headlessCommands, false);
  // Compiled without the headless commands, its binary does not even hold their switch names
  // (a Chromium that has them does): given `--dump-dom` it opens the page and never exits.
  const binary = await Deno.readFile(c.executable);
  assert.equal(Buffer.from(binary.buffer).indexOf("dump-dom"), -1);
});

Deno.test("with no browser installed, the Chromium shipped in the npm package runs the board's kind of page", async () => {
  const c = await findChromium((k) => (k === "PATH" ? "/nonexistent" : undefined));
  assert.ok(!c.executable.startsWith("/usr/"), `expected the npm build, got ${c.executable}`);
  const browser = await chromium.launch({
    executablePath: c.executable,
    headless: true,
    args: CHROMIUM_ARGS,
    env: { ...Deno.env.toObject(), ...c.env },
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

Deno.test("the npm build brings its own fonts: a page has text on a machine without any", async () => {
  const c = await findChromium((k) => (k === "PATH" ? "/nonexistent" : undefined));
  const conf = await Deno.readTextFile(c.env.FONTCONFIG_FILE);
  const bundled = /<dir>([^<]+)<\/dir>/.exec(conf)![1];
  // The same fonts with no system directory at all, as on a machine without fonts installed.
  const alone = await Deno.makeTempDir({ prefix: "fonts-alone-" });
  made.push(alone);
  const onlyBundled = conf.replace(/\s*<dir>\/usr[^<]*<\/dir>/g, "")
    .replace(/<cachedir>[^<]*</, `<cachedir>${alone}/cache<`);
  assert.ok(onlyBundled.includes(bundled) && !onlyBundled.includes("/usr/"), onlyBundled);
  await Deno.writeTextFile(join(alone, "fonts.conf"), onlyBundled);
  const widthWith = async (fontsConf: string) => {
    const browser = await chromium.launch({
      executablePath: c.executable,
      args: CHROMIUM_ARGS,
      env: { ...Deno.env.toObject(), FONTCONFIG_FILE: fontsConf },
    });
    try {
      const page = await browser.newPage();
      await page.setContent("<span>Review board</span>");
      return await page.evaluate(() => document.querySelector("span")!.offsetWidth);
    } finally {
      await browser.close();
    }
  };
  assert.ok(await widthWith(join(alone, "fonts.conf")) > 40, "the bundled fonts draw text");
  await Deno.writeTextFile(
    join(alone, "none.conf"),
    onlyBundled.replace(/\s*<dir>[^<]*<\/dir>/, ""),
  );
  assert.equal(await widthWith(join(alone, "none.conf")), 0, "without them a page has no text");
});
