/**
 * `deno task bench:workers [--max 32] [--per-worker 2] [--sleep-ms 1000]`: one orchestrator
 * (`service run` in this process, its task server included) and N `service worker` processes
 * on this machine, each with its own clone of a shared bare remote, running the scripted agent
 * with agents that only sleep — so what is measured is the orchestrator: claims, heartbeats and
 * landings per second, and the orchestrator's CPU per task (its own and its git children's),
 * for N = 1, 2, 4 … up to --max. Loopback only; every round is bounded (a round that has not
 * finished after 10 minutes is stopped) and the bench ends by itself.
 *
 * `--kubernetes [--tasks 10,50,200]` measures the built-in Kubernetes launcher instead: Jobs
 * created per second against the loopback fake API (bench/launcher_bench.ts).
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { runPlan } from "../lib/orchestrator/run.ts";
import { startServer } from "../lib/server/serve.ts";
import { SERVER_APP } from "../routes/_app.ts";
import { benchLauncher } from "./launcher_bench.ts";

const CLI = new URL("../cli.ts", import.meta.url).pathname;
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
      "roles:\n  backend: {}\nmax_agents: 0\nheartbeat_timeout_s: 6\n",
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
    env: { NO_COLOR: "1" },
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
    const m = /"\/workers\/[^/]+\/(claim|heartbeat|report)"/.exec(line);
    if (m) counts[m[1]]++;
  }
  return counts;
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
      tokens: [],
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
  const rows = [];
  for (let n = 1; n <= max; n *= 2) {
    const r = await round(n, n * perWorker, sleepMs);
    rows.push(r);
    console.log(JSON.stringify(r));
  }
  const cols = [
    "workers",
    "tasks",
    "wall_s",
    "ideal_wall_s",
    "claims_per_s",
    "heartbeats_per_s",
    "landings_per_s",
    "cpu_ms_per_task",
    "git_cpu_ms_per_task",
  ] as const;
  console.log("\n| " + cols.join(" | ") + " |");
  console.log("|" + cols.map(() => "---").join("|") + "|");
  for (const r of rows) console.log("| " + cols.map((c) => String(r[c])).join(" | ") + " |");
}
