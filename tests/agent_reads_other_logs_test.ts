/**
 * What an agent reads of other tasks through the task API: its credential (scope `agent`) reads
 * the board's task detail of any task, but another task's session log is not served to it — that
 * log is another agent's output (what its CLI printed, its environment if it printed it), which
 * `isolation: container` otherwise keeps out of the agent's reach. Its own task's log, and every
 * log for a reader or an operator, is served as before. Real server on a loopback port.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { mintAgentCredential } from "../lib/auth/agent_credentials.ts";
import { sha256Hex } from "../lib/journal/hash.ts";
import { runStarted, taskClaimed, taskLogCaptured } from "../lib/journal/events.ts";
import { appendEvents } from "../lib/journal/journal_file.ts";
import { TaskStore } from "../lib/tasks/store.ts";
import { journalPath, runLogPath, workspacePaths } from "../lib/workspace.ts";
import { startServer } from "../lib/server/serve.ts";
import { SERVER_APP } from "../routes/_app.ts";
import { withEnv } from "./_e2e.ts";

const READER = "reader-token-agent-reads";

Deno.test("an agent's credential reads another task's detail without that task's session log; its own task's log, and a reader's view, keep theirs", async () => {
  using _env = withEnv({ ARL_READER: READER });
  const root = await Deno.makeTempDir({ prefix: "agent-reads-" });
  const paths = workspacePaths(root);
  const store = await TaskStore.open(paths, { warn: () => {} });
  await store.create(
    ["a", "b"].map((id) => ({
      id,
      title: id.toUpperCase(),
      role: "dev",
      priority: 0,
      scope: "medium" as const,
      complexity: "medium" as const,
      depends_on: [],
      owned_files: [],
      completion_signals: [],
    })),
    { runId: "run-1" },
  );
  await store.claim("a", "s-a");
  await store.claim("b", "s-b");
  await store.close();
  const events = [runStarted({ run_id: "run-1" })];
  for (const id of ["a", "b"]) {
    const log = `agent ${id}: SERVICE_TOKEN=svcagent_${id.repeat(64)}\n`;
    const path = runLogPath(paths, "run-1", `s-${id}`);
    await Deno.mkdir(join(path, ".."), { recursive: true });
    await Deno.writeTextFile(path, log);
    events.push(
      taskClaimed({ task_id: id, session_id: `s-${id}` }),
      taskLogCaptured({
        task_id: id,
        session_id: `s-${id}`,
        sha256: `sha256:${sha256Hex(log)}`,
        bytes: new TextEncoder().encode(log).length,
      }),
    );
  }
  await appendEvents(journalPath(paths, "run-1"), events);
  const server = await startServer({
    root,
    host: "127.0.0.1",
    port: 0,
    tokens: [{ principal: "eyes", scope: "reader", token_env: "ARL_READER" }],
    announce: false,
    app: SERVER_APP,
  });
  try {
    const tailOf = async (task: string, token: string) => {
      const res = await fetch(`${server.url}/review-board/runs/run-1/tasks/${task}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      assert.equal(res.status, 200, await res.clone().text());
      const body = await res.json();
      const log = body.task.attempts[0].log;
      assert.ok(log, "the log's record (bytes, digest) is still served");
      return log.tail as string | undefined;
    };
    const agentA = mintAgentCredential(root, { runId: "run-1", taskId: "a", sessionId: "s-a" });
    assert.equal(await tailOf("b", agentA), undefined, "task b's log is not served to a's agent");
    assert.match(await tailOf("a", agentA) ?? "", /agent a: SERVICE_TOKEN=/, "its own is");
    assert.match(await tailOf("b", READER) ?? "", /agent b: SERVICE_TOKEN=/, "a reader's is");
  } finally {
    await server.shutdown();
    await Deno.remove(root, { recursive: true });
  }
});
