/**
 * One task per pod (DESIGN.md §17), end to end on loopback: a small scaler loop reads `/metrics`
 * as KEDA would and starts `service worker --once --clone <remote>` processes, each from an empty
 * directory, until the run has landed every task; `--once` with nothing to claim and
 * `--exit-when-idle` end at once with 0; `--health-port` answers the probes.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runPlan } from "../lib/runner/run.ts";
import { SERVER_APP } from "../routes/_app.ts";
import { tempDir } from "./helpers.ts";
import { rowsOf, sh } from "./_e2e.ts";
import { serveForWorkers, sharedRemote, startWorker, type WorkerProcess } from "./_workers.ts";
import { WORKER_AUTH_YAML, WORKER_READ } from "./_workers.ts";
import { promtoolCheck } from "./_promtool.ts";

/** The samples of a scrape, by series. */
function scrape(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const i = line.lastIndexOf(" ");
    out[line.slice(0, i)] = Number(line.slice(i + 1));
  }
  return out;
}

Deno.test("a scaler loop reading /metrics starts `worker --once` pods, each from a fresh partial clone, until every task has landed", async () => {
  await using dir = await tempDir();
  const ids = ["t1", "t2", "t3", "t4", "t5"];
  const { root, bare } = await sharedRemote(dir.path, [{
    name: "s",
    steps: ids.map((id) => ({
      id,
      script: [["sleep", 300], ["write", `${id}.txt`, `${id}\n`], ["report", `${id} done`]],
    })),
  }], "max_agents: 0\nheartbeat_timeout_s: 30\n" + WORKER_AUTH_YAML);
  const server = await serveForWorkers(root);
  const pods: { name: string; dir: string; w: WorkerProcess; claimed: boolean }[] = [];
  try {
    const lines: string[] = [];
    let finished = false;
    const result = runPlan({ root, server, app: SERVER_APP, out: (l) => lines.push(l) })
      .finally(() => finished = true);
    let checked = false;
    // The scaler, as KEDA's ScaledJob does it: one pod per ready task not already covered by a
    // pod that has not claimed yet, at most 3 pods at once.
    while (!finished) {
      const text = await (await fetch(`${server.url}/metrics`, { headers: WORKER_READ })).text();
      const m = scrape(text);
      if (m.service_run_live === 1 && !checked) {
        await promtoolCheck(text); // a live run's scrape
        checked = true;
      }
      const live = pods.filter((p) =>
        p.w.child.pid && !p.w.lines.some((l) => /ending|reported/.test(l))
      );
      const waiting = live.filter((p) =>
        !p.w.lines.some((l) => /agent .* starting|nothing to claim/.test(l))
      );
      const want = Math.min(m.service_tasks_ready_all - waiting.length, 3 - live.length);
      for (let i = 0; i < want; i++) {
        const name = `pod-${pods.length + 1}`;
        const podDir = join(dir.path, "pods", name); // absent: the pod's emptyDir
        pods.push({
          name,
          dir: podDir,
          w: startWorker(podDir, server.url, name, { args: ["--once", "--clone", bare] }),
          claimed: false,
        });
      }
      await new Promise((r) => setTimeout(r, 150));
    }
    const done = await result;
    assert.equal(done.status, "completed", lines.join("\n"));
    assert.ok(checked, "a scrape of the live run was checked by promtool");
    const codes = await Promise.all(pods.map((p) => p.w.exited()));
    assert.deepEqual(codes, pods.map(() => 0), "every pod exits 0");
    const rows = await rowsOf(root, done.runId);
    const claims = rows.filter((r) => r.type === "task_claimed");
    assert.deepEqual(claims.map((r) => r.data.task_id).sort(), ids, "each task claimed once");
    const byPod = new Map<unknown, number>();
    for (const c of claims) byPod.set(c.data.worker, (byPod.get(c.data.worker) ?? 0) + 1);
    assert.ok([...byPod.values()].every((n) => n === 1), "one task per pod");
    for (const p of pods) {
      const ran = p.w.lines.some((l) => /agent .* starting/.test(l));
      const idle = p.w.lines.some((l) => /nothing to claim \(--once\): ending/.test(l));
      assert.ok(
        ran !== idle,
        `${p.name} either ran one task or found none:\n${p.w.lines.join("\n")}`,
      );
      assert.ok(p.w.lines.some((l) => /partial clone/.test(l)), `${p.name} cloned`);
      assert.equal(
        (await sh(p.dir, "config", "remote.origin.partialclonefilter")).trim(),
        "blob:none",
      );
    }
    for (const id of ids) assert.equal(await Deno.readTextFile(join(root, `${id}.txt`)), `${id}\n`);
    // Over: no run, and every pod said it left.
    const after = scrape(
      await (await fetch(`${server.url}/metrics`, { headers: WORKER_READ })).text(),
    );
    assert.equal(after.service_run_live, 0);
    assert.equal(after.service_workers, 0);
    assert.equal(after.service_tasks_ready_all, 0);
  } finally {
    for (const p of pods) await p.w[Symbol.asyncDispose]();
    await server.shutdown();
  }
});

Deno.test("`worker --once` with nothing to claim and `--exit-when-idle` end at once with 0; --health-port answers the probes", async () => {
  await using dir = await tempDir();
  const { root, bare } = await sharedRemote(
    dir.path,
    [{ name: "s", steps: [] }],
    "max_agents: 0\n" + WORKER_AUTH_YAML,
  );
  const server = await serveForWorkers(root);
  try {
    const once = startWorker(join(dir.path, "p1"), server.url, "p1", {
      args: ["--once", "--clone", bare],
    });
    await using _once = once;
    assert.equal(await once.exited(), 0);
    assert.ok(once.lines.some((l) => /worker p1: nothing to claim \(--once\): ending/.test(l)));
    const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (l.addr as Deno.NetAddr).port;
    l.close();
    const idle = startWorker(join(dir.path, "p2"), server.url, "p2", {
      args: ["--clone", bare, "--exit-when-idle", "2", "--health-port", `127.0.0.1:${port}`],
    });
    await using _idle = idle;
    await idle.saw(/registered with/);
    const probe = async (path: string) => {
      const r = await fetch(`http://127.0.0.1:${port}${path}`);
      return `${r.status} ${(await r.text()).trim()}`;
    };
    assert.equal(await probe("/healthz"), "200 ok");
    assert.equal(await probe("/readyz"), "200 ready");
    assert.match(
      await (await fetch(`${server.url}/metrics`, { headers: WORKER_READ })).text(),
      /\nservice_workers 1\n/,
    );
    assert.equal(await idle.exited(), 0);
    assert.ok(
      idle.lines.some((l) => /nothing to run for 2 s \(--exit-when-idle\): ending/.test(l)),
    );
    assert.match(
      await (await fetch(`${server.url}/metrics`, { headers: WORKER_READ })).text(),
      /\nservice_workers 0\n/,
    );
  } finally {
    await server.shutdown();
  }
});

Deno.test("`worker --clone` refuses a directory that holds something else, and reuses its own clone", async () => {
  await using dir = await tempDir();
  const { root, bare } = await sharedRemote(
    dir.path,
    [{ name: "s", steps: [] }],
    "max_agents: 0\n" + WORKER_AUTH_YAML,
  );
  const server = await serveForWorkers(root);
  try {
    const busy = join(dir.path, "busy");
    await Deno.mkdir(busy);
    await Deno.writeTextFile(join(busy, "keep.txt"), "mine\n");
    const refused = startWorker(busy, server.url, "p1", { args: ["--once", "--clone", bare] });
    await using _r = refused;
    assert.equal(await refused.exited(), 1);
    assert.match(refused.lines.join("\n"), /is not empty and not a clone of it/);
    assert.equal(await Deno.readTextFile(join(busy, "keep.txt")), "mine\n", "nothing touched");
    const pod = join(dir.path, "pod");
    for (const run of [1, 2]) {
      const w = startWorker(pod, server.url, `p${run + 1}`, { args: ["--once", "--clone", bare] });
      await using _w = w;
      assert.equal(await w.exited(), 0, w.lines.join("\n"));
      if (run === 2) assert.ok(w.lines.some((l) => /already a clone of .*; fetching/.test(l)));
    }
  } finally {
    await server.shutdown();
  }
});
