/**
 * Agents never hold operator power (docs/security.md "Agents"): a hostile agent — a host
 * process, one in a container (real podman), one on a remote worker — with the credential the
 * service handed it, and again with none, tries every operator action on the other task of its
 * run while that task waits for review under `require_approval: true`: approve and merge it,
 * create a task, cancel, retry, operator-complete, reopen, complete and fail it, claim work, and
 * operator-complete its own. Each is refused and nothing is written; its own heartbeat and
 * completion still work. Under the default configuration (no token) and with tokens configured.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runPlan } from "../lib/runner/run.ts";
import { startServer } from "../lib/server/serve.ts";
import { SERVER_APP } from "../routes/_app.ts";
import { AGENT, rowsOf, sh, type Step, until, withEnv, workspace } from "./_e2e.ts";
import { tempDir } from "./helpers.ts";
import { startWorker, workerClone } from "./_workers.ts";
import { IMAGE_AGENT, skipping, testImage } from "./_container_image.ts";

const HOSTILE = await Deno.readTextFile(new URL("./fixtures/hostile_agent.ts", import.meta.url));
const image = await testImage();

/** What the agent tried that only an operator (or a worker) may do. */
const FORBIDDEN = [
  "approve",
  "merge",
  "create",
  "cancel",
  "retry",
  "operator_complete",
  "reopen",
  "complete_other",
  "fail_other",
  "claim_next",
  "own_operator_complete",
];

const STEPS: Step[] = [
  { id: "victim", script: [["write", "victim.txt", "victim\n"], ["report", "victim done"]] },
  { id: "hostile", script: [["run", "deno run -A hostile.ts"], ["exit", 0]] },
];

type Where = "host" | "container" | "worker";

/** Tokens configured for the run: an operator's and a worker's (names unique to the test). */
function tokensConfig(suffix: string) {
  const op = `HOSTILE_OP_TOKEN_${suffix}`;
  const worker = `HOSTILE_WORKER_TOKEN_${suffix}`;
  return {
    yaml: "auth:\n  tokens:\n" +
      `    - {principal: ops, scope: operator, token_env: ${op}}\n` +
      `    - {principal: box, scope: worker, token_env: ${worker}}\n`,
    env: { [op]: `op-${suffix}`, [worker]: `worker-${suffix}` },
    op: `op-${suffix}`,
    worker: `worker-${suffix}`,
  };
}

/** The one `HOSTILE_RESULTS` line under `.sdd` (session logs, a worker's reported log). */
async function hostileResults(root: string): Promise<Record<string, number> | undefined> {
  const walk = async (dir: string): Promise<string | undefined> => {
    const entries = await Array.fromAsync(Deno.readDir(dir)).catch(() => []);
    for (const e of entries) {
      const path = join(dir, e.name);
      if (e.isDirectory && e.name !== "worktrees") {
        const hit = await walk(path);
        if (hit) return hit;
      } else if (e.isFile && e.name.endsWith(".log")) {
        const m = /HOSTILE_RESULTS (\{.*\})/.exec(await Deno.readTextFile(path).catch(() => ""));
        if (m) return m[1];
      }
    }
    return undefined;
  };
  const found = await walk(join(root, ".sdd"));
  return found ? JSON.parse(found) : undefined;
}

async function hostileRun(where: Where, tokens: boolean): Promise<void> {
  await using dir = await tempDir("service-hostile-");
  const suffix = `${where}_${tokens ? "t" : "n"}_${crypto.randomUUID().slice(0, 8)}`;
  const auth = tokensConfig(suffix);
  using _env = withEnv(tokens ? auth.env : {});
  const review = "review:\n  require_approval: true\n";
  const root = where === "worker" ? join(dir.path, "orchestrator") : dir.path;
  if (where === "worker") await Deno.mkdir(root);
  const extra =
    (where === "worker" ? "max_agents: 0\nheartbeat_timeout_s: 10\n" : "max_agents: 2\n") +
    review + (tokens ? auth.yaml : "");
  await workspace(root, [{ name: "s", steps: STEPS }], extra, { "hostile.ts": HOSTILE });
  if (where === "container") {
    // The same repository, its agents in containers of the test image.
    await Deno.writeTextFile(
      join(root, "service.yaml"),
      `cli: generic\ncli_command: ${JSON.stringify(["deno", "run", "-A", IMAGE_AGENT])}\n` +
        "roles:\n  backend: {}\nisolation: container\nmemory_mb: 512\ncpu_cores: 1\n" +
        `container:\n  image: ${image.ok ? image.ref : "none"}\n${extra}`,
    );
    await sh(root, "commit", "-q", "-am", "container isolation");
  }
  const server = await startServer({
    root,
    host: "127.0.0.1",
    port: 0,
    tokens: tokens
      ? [
        { principal: "ops", scope: "operator", token_env: `HOSTILE_OP_TOKEN_${suffix}` },
        { principal: "box", scope: "worker", token_env: `HOSTILE_WORKER_TOKEN_${suffix}` },
      ]
      : [],
    announce: false,
    app: SERVER_APP,
  });
  const stop = new AbortController();
  const workers: AsyncDisposable[] = [];
  let running: Promise<unknown> | undefined;
  try {
    if (where === "worker") {
      const bare = join(dir.path, "remote.git");
      await sh(dir.path, "init", "-q", "--bare", "-b", "main", bare);
      await sh(root, "remote", "add", "origin", bare);
      await sh(root, "push", "-q", "origin", "main");
      workers.push(
        startWorker(await workerClone(dir.path, bare, "box"), server.url, "box", {
          slots: 2,
          env: tokens ? { SERVICE_TOKEN: auth.worker } : {},
        }),
      );
    }
    const lines: string[] = [];
    running = runPlan({
      root,
      server,
      app: SERVER_APP,
      signal: stop.signal,
      out: (l) => lines.push(l),
    });
    running.catch(() => {});
    const asOperator = (path: string) =>
      fetch(server.url + path, {
        headers: tokens ? { authorization: `Bearer ${auth.op}` } : {},
      }).then((r) => r.json());
    let results: Record<string, number> | undefined;
    await until(
      `the hostile agent's results (${where}); run said:\n${lines.join("\n")}`,
      async () => (results = await hostileResults(root)) !== undefined,
      240_000,
    );
    assert.ok(results && !("error" in results), JSON.stringify(results));
    if (Deno.env.get("HOSTILE_DEBUG")) console.log(where, tokens, JSON.stringify(results));
    for (const name of FORBIDDEN) {
      assert.equal(results[name], 403, `${where}: ${name} with the agent's credential is 403`);
      assert.ok(
        [401, 403].includes(results[`${name}_anonymous`]),
        `${where}: ${name} with no token is refused (${results[`${name}_anonymous`]})`,
      );
    }
    if (where === "container") {
      const logs = await Array.fromAsync(Deno.readDir(join(root, ".sdd/runtime")));
      const said = await Promise.all(
        logs.filter((e) => e.name.endsWith(".log")).map((e) =>
          Deno.readTextFile(join(root, ".sdd/runtime", e.name))
        ),
      );
      assert.ok(
        said.some((t) => /agent runs in container .*network restricted/.test(t)),
        "the agent ran in a container whose only way out is its relays",
      );
    }
    assert.equal(results.own_heartbeat, 200, `${where}: its own heartbeat works`);
    assert.equal(results.own_complete, 200, `${where}: its own completion works`);

    // Nothing written: two tasks, the victim still waiting for review, no decision, no receipt.
    const { tasks: list } = (await asOperator("/tasks")) as {
      tasks: { id: string; status: string }[];
    };
    assert.deepEqual(list.map((t) => t.id).sort(), ["hostile", "victim"]);
    const victim = list.find((t) => t.id === "victim")! as { status: string; operator_done?: true };
    assert.equal(victim.status, "DONE");
    assert.equal(victim.operator_done, undefined);
    const runs = (await asOperator("/review-board/runs")) as { runs: { run_id: string }[] };
    const runId = runs.runs[0].run_id;
    await until("the hostile task to be DONE", async () => {
      const t = (await asOperator("/tasks/hostile")) as { status: string };
      return t.status === "DONE";
    });
    const rows = await rowsOf(root, runId);
    const types = (task: string) =>
      rows.filter((r) => r.data.task_id === task).map((r) => r.type as string);
    for (const t of ["task_review_decision", "task_merged", "task_cancelled", "task_retried"]) {
      assert.ok(!types("victim").includes(t), `${where}: no ${t} for the victim`);
    }
    assert.equal(
      rows.filter((r) => r.type === "task_review_decision").length,
      0,
      "no review decision at all",
    );
    const audit = await Deno.readTextFile(join(root, ".sdd/audit/audit.jsonl")).catch(() => "");
    assert.equal(audit, "", "no receipt on the audit chain");
  } finally {
    stop.abort();
    await running?.catch(() => {});
    for (const w of workers) await w[Symbol.asyncDispose]();
    await server.shutdown();
  }
}

for (const tokens of [false, true]) {
  const config = tokens ? "with tokens configured" : "under the default configuration (no token)";
  Deno.test(`a host agent ${config} is refused every operator action on another task and its own; its own heartbeat and completion work`, async () => {
    await hostileRun("host", tokens);
  });
  Deno.test({
    name:
      `a container agent ${config} is refused every operator action through its relay, with its credential or none; its own heartbeat and completion work`,
    ignore: skipping(image),
    fn: () => hostileRun("container", tokens),
  });
}
// A run takes remote workers only with a worker token configured (lib/workers/admission.ts).
Deno.test("a remote worker's agent with tokens configured gets its own credential, never the worker's, and is refused every operator action; its own heartbeat and completion work", async () => {
  await hostileRun("worker", true);
});

// The scripted agent of the host cases (the container's is in the image).
void AGENT;
