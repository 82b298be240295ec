/**
 * The tested artefact: a single bundled file (`deno task bundle`) copied alone into an empty
 * directory runs the CLI, the demo (its agents call back into the same file) and the board page.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runDeno, startServing, tempDir } from "./helpers.ts";

const SCRIPT = new URL("../scripts/bundle.ts", import.meta.url).pathname;

function run(args: string[], cwd: string) {
  return runDeno(args, { cwd });
}

Deno.test("the single-file bundle runs alone: --help, the demo end to end, and the board page with its islands", async () => {
  await using dir = await tempDir();
  const artefact = join(dir.path, "service.js");
  const built = await run(["run", "-A", SCRIPT, "--out", artefact], dir.path);
  assert.equal(built.code, 0, built.text);

  const help = await run(["run", "-A", artefact, "--help"], dir.path);
  assert.equal(help.code, 0);
  assert.match(help.text, /Commands:/);

  const demo = await run([
    "run",
    "-A",
    artefact,
    "demo",
    "--dir",
    join(dir.path, "demo"),
    "--no-serve",
  ], dir.path);
  assert.equal(demo.code, 0, demo.text);
  assert.match(demo.text, /completed in .* every task verified and merged/);

  await using server = await startServing([
    artefact,
    "--root",
    join(dir.path, "demo"),
    "gui",
    "serve",
    "--port",
    "0",
  ]);
  const page = await (await fetch(`${server.url}/dashboard/review-board`)).text();
  const script = /\/static\/board-[0-9a-f]+\.js/.exec(page)?.[0];
  assert.ok(script, "the page links its island bundle");
  const js = await fetch(`${server.url}${script}`);
  assert.equal(js.status, 200);
  assert.ok((await js.text()).length > 1000);
});
