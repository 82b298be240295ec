/**
 * The agent chosen per role or per task (issue 35): `roles.<role>.cli` with a command of its own
 * (`generic:<role>`), and `cli` on a plan step or a created task. A real run mixes two agent
 * programs; every adapter a run names is checked before `run_started`, and one that cannot start
 * refuses the run naming who uses it; the task API refuses an adapter it does not know.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { AGENT, cli, rowsOf, sh, watchedRun, workspace } from "./_e2e.ts";
import { tempDir } from "./helpers.ts";
import { appContext } from "../lib/server/serve.ts";
import { createApp } from "../routes/_app.ts";
import { closeTaskStore } from "../lib/tasks/registry.ts";

/** A script that writes which agent program ran it into `file`. */
const whoRan = (
  file: string,
) => [["run", `echo "\${AGENT_FLAVOR:-main}" > ${file}`], ["report", file]];

const DOCS_ROLE = "  docs:\n    cli: generic\n    cli_command: " +
  JSON.stringify(["env", "AGENT_FLAVOR=docs", "deno", "run", "-A", AGENT]) + "\n";

Deno.test("roles and plan steps choose their agent: two programs in one run, each task on the one it names", async () => {
  await using dir = await tempDir();
  await workspace(dir.path, [{
    name: "s",
    steps: [
      { id: "b1", script: whoRan("b1.txt") },
      { id: "d1", role: "docs", script: whoRan("d1.txt") },
      { id: "b2", cli: "generic:docs", script: whoRan("b2.txt") },
    ],
  }]);
  // The workspace helper wrote `roles: backend, docs`: give docs its own program.
  const config = join(dir.path, "service.yaml");
  const text = await Deno.readTextFile(config);
  await Deno.writeTextFile(config, text.replace("  docs: {}\n", DOCS_ROLE));
  await sh(dir.path, "commit", "-qam", "docs agents run their own program");
  const run = watchedRun(dir.path);
  const result = await run.result;
  assert.equal(result.status, "completed", run.lines.join("\n"));
  const read = (f: string) => sh(dir.path, "show", `main:${f}`);
  assert.equal(await read("b1.txt"), "main\n");
  assert.equal(await read("d1.txt"), "docs\n");
  assert.equal(await read("b2.txt"), "docs\n", "the step's cli wins over its role's");
  const rows = await rowsOf(dir.path, result.runId);
  const adapterOf = (id: string) =>
    rows.find((r) => r.type === "task_claimed" && r.data.task_id === id)?.data.adapter;
  assert.deepEqual(["b1", "d1", "b2"].map(adapterOf), ["generic", "generic:docs", "generic:docs"]);
});

Deno.test("a role whose agent cannot start refuses the run before it starts, naming the role", async () => {
  await using dir = await tempDir();
  await workspace(dir.path, [{ name: "s", steps: [{ id: "b1", script: whoRan("b1.txt") }] }]);
  const config = join(dir.path, "service.yaml");
  await Deno.writeTextFile(
    config,
    (await Deno.readTextFile(config)).replace(
      "  docs: {}\n",
      "  docs:\n    cli: generic\n    cli_command: no-such-agent-program --headless\n",
    ),
  );
  await sh(dir.path, "commit", "-qam", "a docs agent that is not installed");
  const out = await cli(dir.path, "run", "--port", "0");
  assert.equal(out.code, 1, out.out);
  assert.match(
    out.out,
    /adapter generic:docs \(roles\.docs\.cli\) cannot start agents: binary not found in PATH: no-such-agent-program/,
  );
  await assert.rejects(Deno.stat(join(dir.path, ".sdd/runs")), "no run started");
});

Deno.test("POST /tasks with a cli this service does not know is 422 unknown_adapter; a known one is kept on the task", async () => {
  await using dir = await tempDir();
  await Deno.writeTextFile(
    join(dir.path, "service.yaml"),
    `cli: generic\ncli_command: my-agent\nroles:\n  backend: {}\n${DOCS_ROLE}`,
  );
  const ctx = appContext(dir.path, []);
  const app = createApp(ctx);
  const post = (body: unknown) =>
    app.request("/tasks", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  try {
    const refused = await post({ title: "x", role: "backend", cli: "nope" });
    assert.equal(refused.status, 422);
    assert.equal((await refused.json()).error.code, "unknown_adapter");
    const made = await post({ title: "y", role: "backend", cli: "generic:docs" });
    assert.equal(made.status, 201);
    assert.equal((await made.json()).cli, "generic:docs");
  } finally {
    await closeTaskStore(ctx);
  }
});
