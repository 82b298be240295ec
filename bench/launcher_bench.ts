/**
 * `deno task bench:workers --kubernetes [--tasks 10,50,200]`: how fast the built-in launcher
 * (lib/kubernetes) creates Jobs through `@kubernetes/client-node` against the loopback fake API
 * (tests/fakes/kubernetes_api.ts; its pods are left Pending, so only the API path is measured):
 * for N ready tasks, one pass that lists the run's Jobs and pods, reserves N tasks, mints N claim
 * tickets (each kept durably, fsynced) and creates N Jobs; then a pass over the N Jobs it made
 * (list, plan, nothing to create). Every Job body the fake takes is validated against the
 * OpenAPI schemas as it would be by the real API server's strict field validation.
 */
import { join } from "node:path";
import { FakeKubernetes } from "../tests/fakes/kubernetes_api.ts";
import { connectCluster } from "../lib/kubernetes/api.ts";
import { Launcher, type LaunchTask } from "../lib/kubernetes/mod.ts";
import { KubernetesWorkersSchema } from "../lib/config/kubernetes_schema.ts";
import { TicketBook } from "../lib/workers/tickets.ts";

/** One size's figures. */
export interface LauncherRound {
  tasks: number;
  create_pass_ms: number;
  jobs_per_s: number;
  list_pass_ms: number;
}

async function round(n: number): Promise<LauncherRound> {
  const dir = await Deno.makeTempDir({ prefix: "launcher-bench-" });
  const fake = FakeKubernetes.start({ dir, kubelet: false, run: () => ({ cmd: ["true"] }) });
  try {
    await fake.writeKubeconfig(join(dir, "kubeconfig"));
    const api = await connectCluster({ env: { KUBECONFIG: join(dir, "kubeconfig") } });
    const tasks = new Map<string, LaunchTask>();
    for (let i = 0; i < n; i++) tasks.set(`t${i}`, { status: "OPEN", role: "backend" });
    let reserved = false;
    let session = 0;
    const launcher = new Launcher({
      settings: KubernetesWorkersSchema.parse({
        image: "registry.example/service:1",
        token_secret: "service-tokens",
        max_in_flight: n,
      }),
      api,
      tickets: new TicketBook({ path: join(dir, "claim_tickets.json") }),
      runId: "r-bench",
      serverUrl: "http://service:8052",
      cloneUrl: "https://git.example/shop.git",
      tasks: () => tasks,
      timeoutS: () => 1800,
      sessionId: () => `s-bench-${String(++session).padStart(4, "0")}`,
      reserve: (free) => {
        if (reserved) return Promise.resolve([]);
        reserved = true;
        return Promise.resolve([...tasks.keys()].slice(0, free).map((taskId) => ({ taskId })));
      },
      lapse: (taskId, reason) => {
        throw new Error(`${taskId} lapsed: ${reason}`);
      },
      adopt: () => {},
      lost: () => {},
      log: () => {},
    });
    const t0 = performance.now();
    await launcher.pass();
    const create = performance.now() - t0;
    if (fake.observed.created.length !== n) {
      throw new Error(`created ${fake.observed.created.length} Jobs of ${n}`);
    }
    const t1 = performance.now();
    await launcher.pass();
    const list = performance.now() - t1;
    return {
      tasks: n,
      create_pass_ms: Math.round(create),
      jobs_per_s: Math.round((n / create) * 1000 * 10) / 10,
      list_pass_ms: Math.round(list),
    };
  } finally {
    await fake.close();
    await Deno.remove(dir, { recursive: true });
  }
}

/** Run the rounds and print a table. */
export async function benchLauncher(sizes: number[]): Promise<LauncherRound[]> {
  const rows: LauncherRound[] = [];
  for (const n of sizes) {
    const r = await round(n);
    rows.push(r);
    console.log(JSON.stringify(r));
  }
  const cols = ["tasks", "create_pass_ms", "jobs_per_s", "list_pass_ms"] as const;
  console.log("\n| " + cols.join(" | ") + " |");
  console.log("|" + cols.map(() => "---").join("|") + "|");
  for (const r of rows) console.log("| " + cols.map((c) => String(r[c])).join(" | ") + " |");
  return rows;
}

if (import.meta.main) {
  await benchLauncher([10, 50, 200]);
}
