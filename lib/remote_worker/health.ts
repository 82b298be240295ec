/**
 * `service worker --health-port [HOST:]PORT` (DESIGN.md §17): a pod's liveness and readiness
 * probes. `/healthz` is 200 `ok` while the worker's loop turns (its claim loop, or its heartbeat
 * while agents run), 503 `stuck` when it has not for a minute; `/readyz` is 200 `ready` once it
 * registered with the orchestrator and until it drains (503 `starting`, `draining`). One word,
 * nothing else: the port carries no data.
 */

/** How long the loop may stay still before the worker is stuck (ms). */
export const WORKER_STUCK_AFTER_MS = 60_000;

/** What the probes read, written by the worker as it goes. */
export class WorkerStatus {
  registered = false;
  draining = false;
  #aliveAt = Date.now();

  /** The loop turned. */
  alive(now = Date.now()): void {
    this.#aliveAt = now;
  }

  /** When the loop last turned (ms). */
  get aliveAt(): number {
    return this.#aliveAt;
  }
}

/** The answer of `path` (pure): status and word; 404 for any other path. */
export function workerProbe(
  path: string,
  s: { registered: boolean; draining: boolean; aliveAt: number },
  now: number,
): { status: number; word: string } {
  if (path === "/healthz") {
    return now - s.aliveAt > WORKER_STUCK_AFTER_MS
      ? { status: 503, word: "stuck" }
      : { status: 200, word: "ok" };
  }
  if (path === "/readyz") {
    if (s.draining) return { status: 503, word: "draining" };
    return s.registered ? { status: 200, word: "ready" } : { status: 503, word: "starting" };
  }
  return { status: 404, word: "not found" };
}

/** `--health-port` as given: `PORT` (every interface, for the kubelet) or `HOST:PORT`. */
export function parseHealthAddress(text: string): { hostname: string; port: number } | undefined {
  const m = /^(?:(.+):)?(\d{1,5})$/.exec(text.trim());
  if (!m) return undefined;
  const port = Number(m[2]);
  if (port < 1 || port > 65535) return undefined;
  return { hostname: (m[1] ?? "0.0.0.0").replace(/^\[|\]$/g, ""), port };
}

/** Serve the probes at `addr` until `signal` aborts; resolves once listening. */
export async function serveWorkerHealth(
  addr: { hostname: string; port: number },
  status: WorkerStatus,
  signal: AbortSignal,
): Promise<Deno.HttpServer> {
  const listening = Promise.withResolvers<void>();
  const server = Deno.serve({
    hostname: addr.hostname,
    port: addr.port,
    signal,
    onListen: () => listening.resolve(),
  }, (req) => {
    const a = workerProbe(new URL(req.url).pathname, status, Date.now());
    return new Response(a.word + "\n", {
      status: a.status,
      headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" },
    });
  });
  await listening.promise;
  return server;
}
