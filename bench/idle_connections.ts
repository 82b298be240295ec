/**
 * Idle connections against a fresh `service serve` (issue 10): open N TCP connections that send
 * nothing, then measure what the server holds, its RSS and `/status` latency while they sit
 * there. Run: `deno run -A bench/idle_connections.ts [N=10000] [max_connections]` (the server
 * and this process need `ulimit -n` above N; both are raised to the hard limit here when allowed).
 */
import { join } from "node:path";

const N = Number(Deno.args[0] ?? 10_000);
const MAX = Deno.args[1];
const CLI = new URL("../cli.ts", import.meta.url).pathname;

const root = await Deno.makeTempDir({ prefix: "service-idle-bench-" });
await Deno.writeTextFile(
  join(root, "service.yaml"),
  "cli: claude\nroles: [backend]\nserver:\n  header_timeout_s: 600\n  idle_timeout_s: 600\n" +
    (MAX ? `  max_connections: ${MAX}\n` : ""),
);
const proc = new Deno.Command("sh", {
  args: [
    "-c",
    'ulimit -n "$(ulimit -Hn)"; exec "$0" run -A "$1" --root "$2" serve --port 0',
    Deno.execPath(),
    CLI,
    root,
  ],
  env: { NO_COLOR: "1", RUST_BACKTRACE: "0" },
  stdout: "piped",
  stderr: "null",
}).spawn();
const reader = proc.stdout.pipeThrough(new TextDecoderStream()).getReader();
let out = "";
while (!/listening on http:\/\/[^:]+:(\d+)/.test(out)) out += (await reader.read()).value ?? "";
const port = Number(/listening on http:\/\/[^:]+:(\d+)/.exec(out)![1]);
reader.releaseLock();
proc.stdout.cancel().catch(() => {});

function rssMiB(pid: number): number {
  const text = Deno.readTextFileSync(`/proc/${pid}/status`);
  return Number(/VmRSS:\s+(\d+)/.exec(text)![1]) / 1024;
}

async function statusLatency(samples = 50): Promise<{ p50: number; p95: number; ok: number }> {
  const times: number[] = [];
  let ok = 0;
  for (let i = 0; i < samples; i++) {
    const t = performance.now();
    const res = await fetch(`http://127.0.0.1:${port}/status`).catch(() => undefined);
    if (res?.ok) ok++;
    await res?.body?.cancel();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return { p50: times[samples >> 1], p95: times[Math.floor(samples * 0.95)], ok };
}

const serverPid = proc.pid; // sh exec'd into deno: same pid
const before = { rss: rssMiB(serverPid), status: await statusLatency() };
const conns: Deno.Conn[] = [];
let failed = 0;
const t0 = performance.now();
for (let i = 0; i < N; i++) {
  try {
    conns.push(await Deno.connect({ hostname: "127.0.0.1", port }));
  } catch {
    failed++;
  }
}
const openMs = performance.now() - t0;
await new Promise((r) => setTimeout(r, 2000));
// Held = connections the server has not closed (a read would see EOF at once).
let held = 0;
await Promise.all(conns.map(async (c) => {
  const buf = new Uint8Array(512);
  const r = await Promise.race([
    c.read(buf).catch(() => null),
    new Promise<"open">((res) => setTimeout(() => res("open"), 300)),
  ]);
  if (r === "open") held++;
}));
const during = { rss: rssMiB(serverPid), status: await statusLatency() };
const result = {
  connections_opened: conns.length,
  connect_failures: failed,
  open_ms: Math.round(openMs),
  held_by_server: held,
  rss_mib_before: Math.round(before.rss),
  rss_mib_during: Math.round(during.rss),
  status_ms_before: { p50: +before.status.p50.toFixed(2), p95: +before.status.p95.toFixed(2) },
  status_ms_during: {
    p50: +during.status.p50.toFixed(2),
    p95: +during.status.p95.toFixed(2),
    ok: `${during.status.ok}/50`,
  },
};
console.log(JSON.stringify(result, null, 2));
for (const c of conns) {
  try {
    c.close();
  } catch { /* closed */ }
}
proc.kill("SIGTERM");
await proc.status;
await Deno.remove(root, { recursive: true }).catch(() => {});
