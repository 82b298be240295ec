/**
 * Claim throughput of the real task server: start it on 127.0.0.1 port 0 over a temporary
 * workspace, create 10 000 tasks, let 32 concurrent HTTP clients call
 * `POST /tasks/next?role=…` until the queue is empty, assert no task was claimed twice, and
 * report claims per second and latency percentiles.
 *
 *   deno run -A bench/claim_throughput.ts [--tasks 10000] [--clients 32]
 */
import { parseArgs } from "node:util";
import process from "node:process";
import { startServer } from "../lib/server/serve.ts";
import { SERVER_APP } from "../routes/_app.ts";
import { removeBenchDir } from "./_bench_dir.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    tasks: { type: "string", default: "10000" },
    clients: { type: "string", default: "32" },
  },
});
const TASKS = Number(values.tasks);
const CLIENTS = Number(values.clients);
const ROLE = "backend";

const root = await Deno.makeTempDir({ prefix: "claim-bench-" });
const server = await startServer({
  root,
  host: "127.0.0.1",
  port: 0,
  tokens: [],
  announce: false,
  app: SERVER_APP,
});
try {
  const createStart = performance.now();
  const batch = 1000;
  for (let i = 0; i < TASKS; i += batch) {
    const tasks = Array.from({ length: Math.min(batch, TASKS - i) }, (_, j) => ({
      id: `task-${i + j}`,
      title: `task ${i + j}`,
      role: ROLE,
      priority: (i + j) % 3,
    }));
    const res = await fetch(`${server.url}/tasks`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ tasks }),
    });
    if (res.status !== 201) throw new Error(`create failed: ${res.status} ${await res.text()}`);
    await res.body?.cancel();
  }
  const createMs = performance.now() - createStart;

  const claimedBy = new Map<string, string>();
  const latencies: number[] = [];
  let doubles = 0;
  const client = async (n: number) => {
    const session = `bench-${n}`;
    for (;;) {
      const t0 = performance.now();
      const res = await fetch(`${server.url}/tasks/next?role=${ROLE}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ session_id: session }),
      });
      latencies.push(performance.now() - t0);
      if (res.status === 204) return;
      if (res.status !== 200) throw new Error(`claim failed: ${res.status} ${await res.text()}`);
      const task = await res.json();
      if (claimedBy.has(task.id)) doubles++;
      claimedBy.set(task.id, session);
    }
  };
  const cpu0 = process.cpuUsage();
  const claimStart = performance.now();
  await Promise.all(Array.from({ length: CLIENTS }, (_, n) => client(n)));
  const claimSeconds = (performance.now() - claimStart) / 1000;
  const cpu = process.cpuUsage(cpu0);

  latencies.sort((a, b) => a - b);
  const pct = (p: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))];
  const report = {
    tasks: TASKS,
    clients: CLIENTS,
    create_ms: Math.round(createMs),
    claimed: claimedBy.size,
    double_claims: doubles,
    claim_seconds: Math.round(claimSeconds * 1000) / 1000,
    claims_per_second: Math.round(claimedBy.size / claimSeconds),
    p50_ms: Math.round(pct(0.5) * 100) / 100,
    p99_ms: Math.round(pct(0.99) * 100) / 100,
    max_ms: Math.round(latencies[latencies.length - 1] * 100) / 100,
    // Server and clients share this process: CPU per claim is less at the mercy of other load.
    cpu_us_per_claim: Math.round((cpu.user + cpu.system) / claimedBy.size),
    load_average: Deno.loadavg().map((l) => Math.round(l * 10) / 10),
  };
  console.log(JSON.stringify(report, null, 2));
  if (doubles > 0) throw new Error(`${doubles} task(s) claimed twice`);
  if (claimedBy.size !== TASKS) throw new Error(`claimed ${claimedBy.size} of ${TASKS} tasks`);
} finally {
  await server.shutdown();
  await removeBenchDir(root);
}
