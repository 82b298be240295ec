/**
 * A stopped run an offline `service cancel` settles is over: its refs leave the shared remote as a
 * finished run's do. Found in a team trial: after `service stop`, `service cancel --all` and a new
 * `service run`, the stopped run's base and its 14 `agent/<session>` branches stayed on origin for
 * good (only a run that ends itself sweeps them).
 */
import assert from "node:assert/strict";
import { tempDir } from "./helpers.ts";
import { cli, sh } from "./_e2e.ts";
import { sharedRemote } from "./_workers.ts";
import { appContext } from "../lib/server/serve.ts";
import { closeTaskStore, taskStoreFor } from "../lib/tasks/registry.ts";
import { TaskInputSchema } from "../lib/tasks/task.ts";
import { appendEvents } from "../lib/journal/journal_file.ts";
import { journalPath, workspacePaths } from "../lib/workspace.ts";
import * as ev from "../lib/journal/events.ts";

async function remoteRefs(bare: string): Promise<string[]> {
  return (await sh(bare, "for-each-ref", "--format=%(refname)")).split("\n").filter(Boolean)
    .sort();
}

Deno.test("service cancel that settles a stopped run's last tasks removes that run's base and agent branches from the remote, and nothing of another run's or a person's", async () => {
  await using dir = await tempDir();
  const { root, bare } = await sharedRemote(dir.path, [{ name: "s", steps: [] }]);
  // Run r-old ran a and b on worker w1, run r-new ran c; each left refs on the remote.
  const ctx = appContext(root, []);
  const store = await taskStoreFor(ctx);
  const input = (id: string) => TaskInputSchema.parse({ id, title: id, role: "backend" });
  await store.create([input("a"), input("b")], { runId: "r-old" });
  await store.create([input("c")], { runId: "r-new" });
  await closeTaskStore(ctx);
  const paths = workspacePaths(root);
  const claimed = (run: string, task: string, session: string) =>
    appendEvents(journalPath(paths, run), [
      ev.taskClaimed({ task_id: task, session_id: session, worker: "w1" }),
    ]);
  await claimed("r-old", "a", "s-old-1");
  await claimed("r-old", "b", "s-old-2");
  await claimed("r-new", "c", "s-new-1");
  const head = (await sh(root, "rev-parse", "HEAD")).trim();
  for (
    const ref of [
      "refs/heads/agent/s-old-1",
      "refs/heads/agent/s-old-2",
      "refs/service/base/r-old",
      "refs/heads/agent/s-new-1",
      "refs/service/base/r-new",
      "refs/heads/agent/someone-else",
    ]
  ) await sh(root, "push", "-q", "origin", `${head}:${ref}`);

  // One of r-old's tasks cancelled: the run can still go on; nothing leaves the remote.
  const first = await cli(root, "cancel", "a");
  assert.equal(first.code, 0, first.out);
  assert.doesNotMatch(first.out, /removed from/);
  assert.equal((await remoteRefs(bare)).length, 7, "main and six refs");
  // Its last one: r-old is over, and only its refs go.
  const last = await cli(root, "cancel", "b");
  assert.equal(last.code, 0, last.out);
  assert.match(last.out, /removed from origin: 3 ref\(s\) of run r-old, which is over/);
  assert.deepEqual(await remoteRefs(bare), [
    "refs/heads/agent/s-new-1",
    "refs/heads/agent/someone-else",
    "refs/heads/main",
    "refs/service/base/r-new",
  ]);
});
