/**
 * Webhook intake as a tracker experiences it: `service serve` in its own process on 127.0.0.1
 * port 0 over a temporary workspace, N signed GitHub-style deliveries (each a real ~5 KB
 * `issue_comment` payload with its own delivery id, accepted and recorded durably in the replay
 * ledger) sent by C concurrent keep-alive clients, then a replay storm re-sending every one of
 * the last 4096 (what spec §8 says the receiver remembers) N times in random order (each must
 * answer `replay`). Reports deliveries per second and latency percentiles, and
 * checks the ledger holds exactly the accepted ids.
 *
 *   deno task bench:webhooks [--deliveries 20000] [--clients 32]
 */
import { parseArgs } from "node:util";
import { join } from "node:path";
import { signBody } from "../lib/webhooks/signature.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    deliveries: { type: "string", default: "20000" },
    clients: { type: "string", default: "32" },
  },
});
const N = Number(values.deliveries);
const CLIENTS = Number(values.clients);
const SECRET = "bench-secret";
const CLI = new URL("../cli.ts", import.meta.url).pathname;

/** A GitHub `issue_comment` delivery of realistic size (accepted and ignored: not an issue event). */
function payload(i: number): string {
  return JSON.stringify({
    action: "created",
    issue: {
      number: 42,
      title: "Parser rejects trailing commas",
      state: "open",
      html_url: "https://github.com/octo-org/app/issues/42",
      labels: [{ id: 1, name: "bug", color: "d73a4a", default: true }],
      body: "Steps to reproduce\n".repeat(40),
      user: { login: "octocat", id: 1, type: "User", site_admin: false },
      created_at: "2026-11-20T10:00:00Z",
      updated_at: "2026-11-20T10:00:00Z",
    },
    comment: {
      id: 1_000_000 + i,
      body: `comment ${i}: ` + "lorem ipsum dolor sit amet ".repeat(60),
      user: { login: "octocat", id: 1, type: "User" },
      created_at: "2026-11-20T10:00:00Z",
    },
    repository: { id: 1, name: "app", full_name: "octo-org/app", private: false },
    sender: { login: "octocat", id: 1, type: "User" },
  });
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

interface Phase {
  name: string;
  seconds: number;
  perSecond: number;
  p50: number;
  p99: number;
  max: number;
  statuses: Record<string, number>;
}

async function phase(
  name: string,
  url: string,
  deliveries: { body: string; headers: Record<string, string> }[],
): Promise<Phase> {
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  let next = 0;
  const start = performance.now();
  await Promise.all(Array.from({ length: CLIENTS }, async () => {
    while (next < deliveries.length) {
      const d = deliveries[next++];
      const t0 = performance.now();
      const res = await fetch(url, { method: "POST", headers: d.headers, body: d.body });
      const answer = await res.json();
      latencies.push(performance.now() - t0);
      const key = res.status === 200 ? answer.status : String(res.status);
      statuses[key] = (statuses[key] ?? 0) + 1;
    }
  }));
  const seconds = (performance.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    name,
    seconds,
    perSecond: deliveries.length / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: latencies[latencies.length - 1],
    statuses,
  };
}

const root = await Deno.makeTempDir({ prefix: "webhook-bench-" });
await Deno.writeTextFile(
  join(root, "service.yaml"),
  "cli: claude\nroles: [backend]\ntrackers:\n  tracker_b:\n    webhook: { enabled: true, secret_env: BENCH_WEBHOOK_SECRET }\n",
);
const server = new Deno.Command(Deno.execPath(), {
  args: ["run", "-A", CLI, "--root", root, "serve", "--port", "0"],
  env: { NO_COLOR: "1", BENCH_WEBHOOK_SECRET: SECRET },
  stdout: "piped",
  stderr: "inherit",
}).spawn();
try {
  const reader = server.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  while (!/listening on (\S+)/.test(seen)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`serve exited before listening: ${seen}`);
    seen += value;
  }
  reader.releaseLock();
  server.stdout.cancel().catch(() => {});
  const base = /listening on (\S+)/.exec(seen)![1];
  const url = `${base}/webhooks/trackers/tracker_b`;

  // Signing is the tracker's cost, not the receiver's: done before the clock starts.
  const deliveries = Array.from({ length: N }, (_, i) => {
    const body = payload(i);
    return {
      body,
      headers: {
        "content-type": "application/json",
        "X-GitHub-Event": "issue_comment",
        "X-Tracker-B-Delivery": crypto.randomUUID(),
        "X-Hub-Signature-256": signBody("hub-sha256", SECRET, body),
      },
    };
  });
  const bytes = deliveries.reduce((n, d) => n + d.body.length, 0) / N;
  // Warm-up on separate ids (JIT, connections), not counted.
  await phase(
    "warm-up",
    url,
    deliveries.slice(0, 500).map((d) => ({
      ...d,
      headers: { ...d.headers, "X-Tracker-B-Delivery": crypto.randomUUID() },
    })),
  );
  const fresh = await phase("signed deliveries (accepted, durable ledger)", url, deliveries);
  // The storm re-sends the deliveries the receiver must remember (spec §8: the last 4096 ids),
  // in random order, N times in all.
  // Concurrent clients finish slightly out of order: stay a few ids inside the window.
  const remembered = deliveries.slice(-Math.min(N, 4096 - 2 * CLIENTS));
  const stormDeliveries = Array.from(
    { length: N },
    () => remembered[Math.floor(Math.random() * remembered.length)],
  );
  const storm = await phase("replay storm (remembered ids, random order)", url, stormDeliveries);

  const ledger = (await Deno.readTextFile(join(root, ".sdd/runtime/tracker_webhook_ledger.jsonl")))
    .trim().split("\n");
  console.log(
    `webhook intake: ${N} deliveries of ~${
      Math.round(bytes)
    } B, ${CLIENTS} clients, server in its own process`,
  );
  for (const p of [fresh, storm]) {
    console.log(
      `${p.name}: ${p.perSecond.toFixed(0)}/s over ${p.seconds.toFixed(2)} s; ` +
        `p50 ${p.p50.toFixed(2)} ms, p99 ${p.p99.toFixed(2)} ms, max ${p.max.toFixed(2)} ms; ` +
        JSON.stringify(p.statuses),
    );
  }
  const ok = fresh.statuses.accepted === N && storm.statuses.replay === N &&
    ledger.length >= Math.min(N, 4096);
  const load = Deno.loadavg().map((l) => l.toFixed(1)).join(" ");
  console.log(
    `ledger: ${ledger.length} lines after compaction (every accepted id appended, synced) — ` +
      `${ok ? "OK" : "MISMATCH"}; load average ${load} on ${navigator.hardwareConcurrency} cores`,
  );
  console.log(
    `target ≥ 3000/s with p99 ≤ 20 ms: ${
      fresh.perSecond >= 3000 && fresh.p99 <= 20 ? "met" : "NOT met"
    } (accepted), ${storm.perSecond >= 3000 && storm.p99 <= 20 ? "met" : "NOT met"} (replay)`,
  );
  if (!ok) Deno.exitCode = 1;
} finally {
  server.kill("SIGTERM");
  await server.status;
  await Deno.remove(root, { recursive: true });
}
