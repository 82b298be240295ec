/**
 * Tokens from mounted Secrets (DESIGN.md §17): the worker reads SERVICE_TOKEN_FILE, the server a
 * configured token's `<token_env>_FILE`; both read the file again when it changes, so a rotated
 * Secret is taken by a running worker and a running server without a restart.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runPlan } from "../lib/runner/run.ts";
import { loadWorkspaceConfig } from "../lib/config/load.ts";
import { SERVER_APP } from "../routes/_app.ts";
import { tempDir } from "./helpers.ts";
import { rowsOf, withEnv } from "./_e2e.ts";
import { serveForWorkers, sharedRemote, startWorker, workerClone } from "./_workers.ts";

/** Replace `path` as a Kubernetes Secret update does: a new file renamed over the old. */
async function rotate(path: string, text: string): Promise<void> {
  await Deno.writeTextFile(`${path}.new`, text);
  await Deno.rename(`${path}.new`, path);
}

Deno.test("a worker token rotated in its mounted files is taken by the running worker and server", async () => {
  await using dir = await tempDir();
  const { root, bare } = await sharedRemote(
    dir.path,
    [{
      name: "s",
      steps: [{ id: "t", script: [["write", "t.txt", "t\n"], ["report", "done"]] }],
    }],
    "max_agents: 0\nauth:\n  tokens:\n    - {principal: box, scope: worker, token_env: WTF_BOX}\n",
  );
  const serverFile = join(dir.path, "server-secret");
  const workerFile = join(dir.path, "worker-secret");
  await rotate(serverFile, "token-v1\n");
  await rotate(workerFile, "token-v1\n");
  using _env = withEnv({ WTF_BOX_FILE: serverFile });
  const { server: settings } = await loadWorkspaceConfig(root);
  const server = await serveForWorkers(root, settings.tokens);
  try {
    const w1 = startWorker(await workerClone(dir.path, bare, "w1"), server.url, "w1", {
      env: { SERVICE_TOKEN_FILE: workerFile },
    });
    await using _w1 = w1;
    await w1.saw(/registered with/);
    // The Secret is rotated under both while they run. A claim sent between the two writes (or
    // built before them) may be refused: the worker asks again, and goes on with the new token.
    await rotate(serverFile, "token-v2-rotated\n");
    await rotate(workerFile, "token-v2-rotated\n");
    const status = (token: string) =>
      fetch(`${server.url}/status`, { headers: { authorization: `Bearer ${token}` } })
        .then(async (r) => (await r.body?.cancel(), r.status));
    assert.equal(await status("token-v1"), 401, "the old token is refused at once");
    assert.equal(await status("token-v2-rotated"), 200);
    const done = await runPlan({ root, server, app: SERVER_APP, out: () => {} });
    assert.equal(done.status, "completed");
    const rows = await rowsOf(root, done.runId);
    const claim = rows.find((r) => r.type === "task_claimed" && r.data.task_id === "t")!;
    assert.equal(claim.data.worker, "w1", "the worker claimed with the rotated token");
    const refused = w1.lines.findIndex((l) => /refuses the claim \(HTTP 401/.test(l));
    if (refused >= 0) {
      assert.match(w1.lines[refused + 1], /answers again/, "a refusal in the rotation passes");
    }
  } finally {
    await server.shutdown();
  }
});
