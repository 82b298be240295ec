import assert from "node:assert/strict";
import { join } from "node:path";
import { genericAdapter } from "../agents/adapters/mod.ts";
import { parseConfig } from "../config/load.ts";
import { tempRepo } from "../git/_test_repo.ts";
import { newTask, TaskInputSchema } from "../tasks/task.ts";
import { workspacePaths } from "../workspace.ts";
import { WorktreeEnvironments, WorktreeSetupError } from "../worktree_env/environments.ts";
import { sessionPorts } from "../worktree_env/ports.ts";
import { AgentSession, type SessionStart, SessionStartError } from "./session.ts";

async function start(root: string, over: Partial<SessionStart>): Promise<unknown> {
  const task = newTask(
    { ...TaskInputSchema.parse({ title: "T", role: "backend", goal: "g" }), id: "t1" },
    { status: "CLAIMED", seq: 0, now: "2026-11-21T10:00:00.000Z" },
  );
  const adapter = genericAdapter({ cliCommand: ["/nonexistent/agent"] });
  return await AgentSession.start({
    paths: workspacePaths(root),
    runId: "r1",
    task,
    sessionId: "s1",
    baseCommit: "main",
    adapter,
    launch: { command: "/nonexistent/agent", prefixArgs: [] },
    argv: ["prompt"],
    serverUrl: "http://127.0.0.1:9",
    timeoutS: 60,
    graceMs: 100,
    ...over,
  }).then(() => undefined, (e) => e);
}

Deno.test("a start that fails after the cut is a SessionStartError with its worktree (to be reaped) and its cause: a missing program stays NotFound, which the pool does not retry", async () => {
  await using repo = await tempRepo();
  const err = await start(repo.root, {});
  assert.ok(err instanceof SessionStartError);
  assert.ok(err.cause instanceof Deno.errors.NotFound, String(err.cause));
  assert.ok((await Deno.stat(err.worktree.path)).isDirectory);
  assert.equal(err.env?.SERVICE_TASK_ID, "t1");
});

Deno.test("a failing setup is a SessionStartError caused by WorktreeSetupError; the ports stay leased until the reap releases them, and no agent started", async () => {
  await using repo = await tempRepo();
  const config = parseConfig(
    "cli: claude\nroles: [backend]\nworktree:\n  ports: 1\n  port_range: [21500, 21509]\n" +
      "  setup: ['echo \"cannot reach the registry\" >&2; exit 2']\n",
    "s.yaml",
  );
  const portsDir = workspacePaths(repo.root).portLeases;
  const environments = new WorktreeEnvironments({
    root: repo.root,
    config,
    portsDir,
    lease: { isFree: () => true },
  });
  const err = await start(repo.root, { environments });
  assert.ok(err instanceof SessionStartError);
  assert.ok(err.cause instanceof WorktreeSetupError);
  assert.equal(
    err.cause.reason,
    `setup_failed: echo "cannot reach the registry" >&2; exit 2: cannot reach the registry`,
  );
  assert.equal(err.env?.PORT, "21500");
  assert.deepEqual(await sessionPorts(portsDir, "s1"), [21500]);
  assert.doesNotMatch(await Deno.readTextFile(err.logPath), /nonexistent/);
  assert.ok((await Deno.stat(join(err.worktree.path, "README.md"))).isFile);
});
