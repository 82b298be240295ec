/**
 * The tested artefact: a single bundled file (`deno task bundle`) copied alone into an empty
 * directory runs the CLI, the demo (its agents call back into the same file) and the board page.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runDeno, startServing, tempDir } from "./helpers.ts";
import { mintWorkerSessionCredential } from "../lib/auth/agent_credentials.ts";
import { sweepRoutes } from "./_route_sweep.ts";

const SCRIPT = new URL("../scripts/bundle.ts", import.meta.url).pathname;

function run(args: string[], cwd: string) {
  return runDeno(args, { cwd });
}

Deno.test("the single-file bundle runs alone: --help, the demo end to end, the board page with its islands, every route", async () => {
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

  {
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
  }

  // Every route's handler is in the artefact, imported on first use (routes/_app.ts).
  const root = join(dir.path, "demo");
  const [demoRun] = await Array.fromAsync(Deno.readDir(join(root, ".sdd", "runs")));
  // Minted before the server starts, which reads the workspace's capabilities once.
  const capability = mintWorkerSessionCredential(root, {
    worker: "w1",
    runId: demoRun.name,
    taskId: "t1",
    sessionId: "s1",
  });
  await using full = await startServing([artefact, "--root", root, "serve", "--port", "0"]);
  const answers = await sweepRoutes(full.url, {
    params: { run_id: demoRun.name },
    authorization: (access) => access === "session" ? `Bearer ${capability}` : undefined,
  });
  const statuses = answers.map((a) => `${a.status} ${a.request}`);
  assert.deepEqual(answers.filter((a) => a.status >= 500), [], statuses.join("\n"));
  // Each answered by its handler, not refused in front of it (the demo's run by its board).
  assert.deepEqual(answers.filter((a) => a.status === 401 || a.status === 403), []);
  assert.ok(answers.filter((a) => a.status === 200).length >= 10, statuses.join("\n"));
});
