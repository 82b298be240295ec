/**
 * `deno task bench:workers [--max 32] [--per-worker 2] [--sleep-ms 1000] [--once]`: one
 * orchestrator (`service run` in this process, its task server included) and N `service worker`
 * processes on this machine, each with its own clone of a shared bare remote, running the
 * scripted agent with agents that only sleep — so what is measured is the orchestrator: claims,
 * heartbeats and landings per second, and the orchestrator's CPU per task (its own and its git
 * children's), for N = 1, 2, 4 … up to --max.
 *
 * `--once`: one task per pod, as on Kubernetes (DESIGN.md §17). A launcher keeps N `service worker
 * --once --clone <remote>` processes alive, each starting from an empty directory (a fresh partial
 * clone) and ending after its one task; as one ends the next starts, until the run has landed
 * every task. What it adds to the figures is each pod's start: a process, a clone, a registration.
 *
 * `--kubernetes [--tasks 10,50,200]` measures the built-in Kubernetes launcher instead: Jobs
 * created per second against the loopback fake API (bench/launcher_bench.ts).
 *
 * Loopback only; every round is bounded (a round that has not finished after 10 minutes is
 * stopped) and the bench ends by itself.
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { runPlan } from "../lib/runner/run.ts";
import { startServer } from "../lib/server/serve.ts";
import { SERVER_APP } from "../routes/_app.ts";
import { benchLauncher } from "./launcher_bench.ts";

const CLI = new URL("../cli.ts", import.meta.url).pathname;
// A run takes remote workers only with a worker token configured (docs/workers.md "Tokens").
const TOKEN_ENV = "BENCH_WORKER_TOKEN";
const TOKEN = crypto.randomUUID();
Deno.env.set(TOKEN_ENV, TOKEN);
const AGENT = new URL("../agents/scripted_agent.ts", import.meta.url).pathname;

async function git(cwd: string, ...args: string[]): Promise<void> {
  const out = await new Deno.Command("git", { args, cwd, stderr: "piped" }).output();
  if (!out.success) {
    throw new Error(`git ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  }
}

/** This process's CPU seconds (user + system), its waited-for children's included. */
async function cpuSeconds(): Promise<{ self: number; children: number }> {
  const stat = (await Deno.readTextFile("/proc/self/stat")).split(") ")[1].split(" ");
  const tick = 100; // USER_HZ on Linux
  const n = (i: number) => Number(stat[i - 3]);
  return { self: (n(14) + n(15)) / tick, children: (n(16) + n(17)) / tick };
}

/** A workspace with `tasks` sleeping steps, pushed to a bare remote; N worker clones. */
async function fixture(dir: string, tasks: number, sleepMs: number, workers: number) {
  const root = join(dir, "orchestrator");
  const bare = join(dir, "remote.git");
  await Deno.mkdir(root);
  await git(root, "init", "-q", "-b", "main");
  await git(root, "config", "user.email", "bench@localhost");
  await git(root, "config", "user.name", "bench");
  await Deno.writeTextFile(
    join(root, "service.yaml"),
    `cli: generic\ncli_command: ${JSON.stringify(["deno", "run", "-A", AGENT])}\n` +
      "roles:\n  backend: {}\nmax_agents: 0\nheartbeat_timeout_s: 6\n" +
      `auth:\n  tokens:\n    - {principal: bench, scope: worker, token_env: ${TOKEN_ENV}}\n`,
  );
  const steps = Array.from({ length: tasks }, (_, i) =>
    [
      `      - id: t${i}`,
      "        role: backend",
      "        goal: |",
      `          Task t${i}.`,
      "          ```agent-script",
      `          ${JSON.stringify(["sleep", sleepMs])}`,
      `          ${JSON.stringify(["write", `out/t${i}.txt`, `${i}\n`])}`,
      `          ${JSON.stringify(["report", "slept"])}`,
      "          ```",
    ].join("\n"));
  await Deno.writeTextFile(
    join(root, "plan.yaml"),
    `name: bench\nstages:\n  - name: s\n    steps:\n${steps.join("\n")}\n`,
  );
  await Deno.writeTextFile(join(root, "README.md"), "# bench\n");
  await git(root, "add", "-A");
  await git(root, "commit", "-q", "-m", "init");
  await git(dir, "init", "-q", "--bare", "-b", "main", bare);
  await git(root, "remote", "add", "origin", bare);
  await git(root, "push", "-q", "origin", "main");
  const clones: string[] = [];
  for (let i = 0; i < workers; i++) {
    const clone = join(dir, `w${i}`);
    await git(dir, "clone", "-q", bare, clone);
    clones.push(clone);
  }
  return { root, clones };
}

/** Start `service worker` over `clone`; resolves once it has registered. */
async function startWorker(clone: string, url: string, name: string) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "worker", "--server", url, "--dir", clone, "--name", name],
    env: { NO_COLOR: "1", SERVICE_TOKEN: TOKEN },
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  while (!/registered/.test(seen)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`worker ${name} ended before registering:\n${seen}`);
    seen += value;
  }
  // Keep draining its output so it never blocks on a full pipe.
  (async () => {
    while (!(await reader.read()).done) { /* drain */ }
  })();
  return child;
}

/** Count access-log requests to worker routes (claims, heartbeats, reports). */
async function workerCalls(root: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = { claim: 0, heartbeat: 0, report: 0 };
  let text = "";
  try {
    text = await Deno.readTextFile(join(root, ".sdd/runtime/access.jsonl"));
  } catch { /* none */ }
  for (const line of text.split("\n")) {
    const m = /"\/workers\/[^/]+\/(?:sessions\/[^/]+\/)?(claim|heartbeat|report)"/.exec(line);
    if (m) counts[m[1]]++;
  }
  return counts;
}

/** A `--once` pod: whether it has claimed (or found nothing) yet; its exit code and output. */
interface OncePod {
  settled: boolean;
  done: Promise<{ code: number; out: string }>;
}

/** Start `service worker --once --clone <bare>` in the empty `dir`. */
function startOncePod(bare: string, dir: string, url: string, name: string): OncePod {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      ...["run", "-A", CLI, "worker", "--server", url, "--dir", dir, "--name", name],
      ...["--once", "--clone", bare],
    ],
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const pod: OncePod = { settled: false, done: Promise.resolve({ code: 0, out: "" }) };
  pod.done = (async () => {
    let out = "";
    for await (const text of child.stdout.pipeThrough(new TextDecoderStream())) {
      out += text;
      if (/agent \S+ starting|nothing to claim/.test(out)) pod.settled = true;
    }
    const { code } = await child.status;
    pod.settled = true;
    return { code, out };
  })();
  return pod;
}

/** The value of the unlabelled series `name` in a scrape of `/metrics`. */
async function gauge(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1] ?? 0);
}

/**
 * One `--once` round: at most `pods` pods at a time, each one task, `tasks` tasks. A launcher
 * reads `/metrics` as KEDA's ScaledJob does: one new pod per ready task not yet covered by a pod
 * that has not claimed.
 */
async function roundOnce(pods: number, tasks: number, sleepMs: number) {
  const dir = await Deno.makeTempDir({ prefix: "bench-workers-once-" });
  try {
    const { root } = await fixture(dir, tasks, sleepMs, 0);
    const bare = join(dir, "remote.git");
    const server = await startServer({
      root,
      host: "127.0.0.1",
      port: 0,
      tokens: [],
      announce: false,
      app: SERVER_APP,
    });
    const live = new Set<OncePod>();
    const outputs: Promise<{ code: number; out: string }>[] = [];
    let over = false;
    try {
      const cpu0 = await cpuSeconds();
      const t0 = performance.now();
      const running = runPlan({
        root,
        server,
        app: SERVER_APP,
        out: (l) => Deno.env.get("BENCH_VERBOSE") && console.error(l),
        signal: AbortSignal.timeout(600_000),
      }).finally(() => over = true);
      while (!over) {
        const ready = await gauge(server.url, "service_tasks_ready_all");
        const unsettled = [...live].filter((p) => !p.settled).length;
        const want = Math.min(ready - unsettled, pods - live.size);
        for (let i = 0; i < want; i++) {
          const name = `pod-${outputs.length + 1}`;
          const pod = startOncePod(bare, join(dir, "pods", name), server.url, name);
          live.add(pod);
          outputs.push(pod.done.finally(() => live.delete(pod)));
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      const result = await running;
      const wall = (performance.now() - t0) / 1000;
      const ended = await Promise.all(outputs);
      const outs = ended.map((e) => e.out);
      // Reaped pods count among this process's children: their CPU is in `children` too.
      const cpu1 = await cpuSeconds();
      await server.shutdown();
      const landed = result.counts.CLOSED ?? 0;
      if (result.status !== "completed") console.error(result.problems.join("\n"));
      const clones = outs.flatMap((o) =>
        /partial clone, blobs on demand\) in ([\d.]+) s/.exec(o)?.slice(1).map(Number) ?? []
      );
      return {
        workers: pods,
        tasks,
        status: result.status,
        wall_s: round2(wall),
        ideal_wall_s: round2(Math.ceil(tasks / pods) * sleepMs / 1000),
        landings_per_s: round2(landed / wall),
        pods_started: outs.length,
        pods_idle: outs.filter((o) => /nothing to claim/.test(o)).length,
        pods_failed: ended.filter((e) => e.code !== 0).length,
        clone_s_mean: clones.length ? round2(clones.reduce((a, b) => a + b, 0) / clones.length) : 0,
        cpu_ms_per_task: Math.round(((cpu1.self - cpu0.self) * 1000) / tasks),
        children_cpu_ms_per_task: Math.round(((cpu1.children - cpu0.children) * 1000) / tasks),
      };
    } finally {
      over = true;
      await server.shutdown().catch(() => {});
    }
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/** One round: `workers` workers, `tasks` tasks. */
async function round(workers: number, tasks: number, sleepMs: number) {
  const dir = await Deno.makeTempDir({ prefix: "bench-workers-" });
  try {
    const { root, clones } = await fixture(dir, tasks, sleepMs, workers);
    const server = await startServer({
      root,
      host: "127.0.0.1",
      port: 0,
      tokens: [{ principal: "bench", scope: "worker", token_env: TOKEN_ENV }],
      announce: false,
      app: SERVER_APP,
    });
    const children: Deno.ChildProcess[] = [];
    try {
      children.push(
        ...await Promise.all(clones.map((c, i) => startWorker(c, server.url, `w${i}`))),
      );
      const cpu0 = await cpuSeconds();
      const t0 = performance.now();
      const timeout = AbortSignal.timeout(600_000);
      const result = await runPlan({
        root,
        server,
        app: SERVER_APP,
        out: (l) => Deno.env.get("BENCH_VERBOSE") && console.error(l),
        signal: timeout,
      });
      const wall = (performance.now() - t0) / 1000;
      const cpu1 = await cpuSeconds();
      await server.shutdown(); // flushes the access log
      const calls = await workerCalls(root);
      const landed = result.counts.CLOSED ?? 0;
      if (result.status !== "completed") console.error(result.problems.join("\n"));
      return {
        workers,
        tasks,
        status: result.status,
        wall_s: round2(wall),
        claims_per_s: round2(tasks / wall),
        claim_requests_per_s: round2(calls.claim / wall),
        heartbeats_per_s: round2(calls.heartbeat / wall),
        landings_per_s: round2(landed / wall),
        cpu_ms_per_task: Math.round(((cpu1.self - cpu0.self) * 1000) / tasks),
        git_cpu_ms_per_task: Math.round(((cpu1.children - cpu0.children) * 1000) / tasks),
        // The floor: every task sleeps once, `workers` at a time.
        ideal_wall_s: round2(Math.ceil(tasks / workers) * sleepMs / 1000),
      };
    } finally {
      for (const c of children) {
        try {
          c.kill("SIGKILL");
        } catch { /* gone */ }
        await c.status;
      }
      await server.shutdown().catch(() => {});
    }
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      max: { type: "string", default: "32" },
      "per-worker": { type: "string", default: "2" },
      "sleep-ms": { type: "string", default: "1000" },
      once: { type: "boolean", default: false },
      kubernetes: { type: "boolean", default: false },
      tasks: { type: "string", default: "10,50,200" },
    },
  });
  if (values.kubernetes) {
    await benchLauncher(values.tasks!.split(",").map(Number));
    Deno.exit(0);
  }
  const max = Number(values.max);
  const perWorker = Number(values["per-worker"]);
  const sleepMs = Number(values["sleep-ms"]);
  const rows: Record<string, unknown>[] = [];
  for (let n = 1; n <= max; n *= 2) {
    const r = values.once
      ? await roundOnce(n, n * perWorker, sleepMs)
      : await round(n, n * perWorker, sleepMs);
    rows.push(r);
    console.log(JSON.stringify(r));
  }
  const cols = values.once
    ? [
      "workers",
      "tasks",
      "wall_s",
      "ideal_wall_s",
      "landings_per_s",
      "pods_started",
      "pods_idle",
      "pods_failed",
      "clone_s_mean",
      "cpu_ms_per_task",
      "children_cpu_ms_per_task",
    ]
    : [
      "workers",
      "tasks",
      "wall_s",
      "ideal_wall_s",
      "claims_per_s",
      "heartbeats_per_s",
      "landings_per_s",
      "cpu_ms_per_task",
      "git_cpu_ms_per_task",
    ];
  console.log("\n| " + cols.join(" | ") + " |");
  console.log("|" + cols.map(() => "---").join("|") + "|");
  for (const r of rows) console.log("| " + cols.map((c) => String(r[c])).join(" | ") + " |");
}
