/**
 * Would podman's REST API start a container for less than its command does?
 * (`deno run -A bench/container_api.ts [N] [--parallel P] [--rounds R]`). It starts a private
 * `podman system service` on a unix socket in a temporary directory (stopped at the end; if this
 * program is killed it exits by itself after 30 s without a client, and a container it created
 * but had not started stays, labelled `io.service.bench=container-api`), then alternates rounds of N
 * trivial containers of the container test image, P at a time (default 12, 4, 3 rounds):
 *
 * - `cli`: `podman run --rm --interactive --network none <image> sh -c :`, one command each, as
 *   the container launcher starts an agent (lib/container/launcher.ts);
 * - `api`: the same container through the socket with `fetch` (Deno's `createHttpClient` over a
 *   unix socket): create (removed on exit), wait, start — no podman command per container.
 *
 * Printed per round: its wall time, each container's start-to-removal (median, min–max) and, when
 * `perf` is on PATH, the CPU of every process the round started per container (the podman
 * commands, conmon, runc, the container, podman's `container cleanup`, and the service's own
 * work in the `api` rounds). docs/performance.md quotes what it measured.
 */
import { join } from "node:path";
import { testImage } from "../tests/_container_image.ts";
import { findOnPath } from "../lib/process/new_session.ts";

const N = Number(Deno.args.find((a) => /^\d+$/.test(a)) ?? 12);
const flag = (name: string, fallback: number) =>
  Deno.args.includes(name) ? Number(Deno.args[Deno.args.indexOf(name) + 1]) || fallback : fallback;
const P = flag("--parallel", 4);
const ROUNDS = flag("--rounds", 3);
/** How long the service lives without a client (it outlives a killed benchmark by this much). */
const IDLE_S = 30;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

const tested = await testImage();
if (!tested.ok || tested.runtime !== "podman") {
  console.log(`container api: SKIPPED: ${tested.ok ? "the runtime is not podman" : tested.skip}`);
  Deno.exit(0);
}
const image = tested;
const dir = await Deno.makeTempDir({ prefix: "bench-container-api-" });
const socket = join(dir, "podman.sock");
const service = new Deno.Command(image.bin, {
  args: ["system", "service", "--time", String(IDLE_S), `unix://${socket}`],
  stdin: "null",
  stdout: "null",
  stderr: "piped",
}).spawn();
const client = Deno.createHttpClient({ proxy: { transport: "unix", path: socket } });

async function api(method: string, path: string, body?: unknown): Promise<unknown> {
  const r = await fetch(`http://podman/v4.0.0/libpod${path}`, {
    method,
    client,
    ...(body === undefined
      ? {}
      : { body: JSON.stringify(body), headers: { "content-type": "application/json" } }),
  });
  const text = await r.text();
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${text.slice(0, 300)}`);
  return r.headers.get("content-type")?.includes("json") ? JSON.parse(text) : text;
}

async function ready(): Promise<void> {
  const until = performance.now() + 15_000;
  for (;;) {
    try {
      await api("GET", "/_ping");
      return;
    } catch (e) {
      if (performance.now() > until) throw new Error(`podman system service: ${e}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

async function viaCli(): Promise<void> {
  const out = await new Deno.Command(image.bin, {
    args: ["run", "--rm", "--interactive", "--network", "none", "--pull", "never", image.ref]
      .concat(["sh", "-c", ":"]),
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!out.success) throw new Error(`podman run: ${new TextDecoder().decode(out.stderr)}`);
}

/** Containers created through the API and not yet seen to end (removed at the end if left). */
const created = new Set<string>();

async function viaApi(): Promise<void> {
  const { Id } = await api("POST", "/containers/create", {
    image: image.ref,
    command: ["sh", "-c", ":"],
    netns: { nsmode: "none" },
    remove: true,
    labels: { "io.service.bench": "container-api" },
  }) as { Id: string };
  created.add(Id);
  // Asked before the start: a container removed on exit may be gone before a later wait.
  const exited = api("POST", `/containers/${Id}/wait?condition=exited&interval=10ms`);
  await api("POST", `/containers/${Id}/start`);
  await exited;
  created.delete(Id);
}

/** CPU (ms) of `pids` and every process they start while `f` runs, when perf is there. */
async function cpuOf(pids: number[], f: () => Promise<void>): Promise<number | undefined> {
  const perf = findOnPath("perf", Deno.env.get("PATH"));
  if (!perf) {
    await f();
    return undefined;
  }
  const out = join(dir, "perf.txt");
  const stat = new Deno.Command(perf, {
    args: ["stat", "-x,", "-e", "task-clock", "-o", out, "-p", pids.join(",")],
    stdout: "null",
    stderr: "null",
  }).spawn();
  await new Promise((r) => setTimeout(r, 300)); // attached
  try {
    await f();
  } finally {
    stat.kill("SIGINT");
    await stat.status;
  }
  const line = (await Deno.readTextFile(out)).split("\n").find((l) => l.includes("task-clock"));
  return line ? Number(line.split(",")[0]) : undefined;
}

async function round(how: "cli" | "api"): Promise<string> {
  const one = how === "cli" ? viaCli : viaApi;
  const times: number[] = [];
  let next = 0;
  const t0 = performance.now();
  const cpu = await cpuOf([Deno.pid, service.pid], async () => {
    await Promise.all(Array.from({ length: P }, async () => {
      while (next++ < N) {
        const t = performance.now();
        await one();
        times.push(performance.now() - t);
      }
    }));
  });
  const wall = performance.now() - t0 - 300;
  const f = (x: number) => x.toFixed(0);
  return `${how}: wall ${f(wall)} ms; per container median ${f(median(times))} ms ` +
    `(${f(Math.min(...times))}–${f(Math.max(...times))})` +
    (cpu === undefined ? "" : `; CPU ${f(cpu / N)} ms per container`);
}

try {
  await ready();
  console.log(
    `container api: ${N} trivial containers ${P} at a time, podman ${image.ref}; load ` +
      (await Deno.readTextFile("/proc/loadavg")).split(" ").slice(0, 3).join(" "),
  );
  for (let r = 0; r < ROUNDS; r++) {
    for (const how of ["cli", "api"] as const) console.log(`  ${await round(how)}`);
  }
  console.log(`  load after: ${(await Deno.readTextFile("/proc/loadavg")).split(" ").slice(0, 3)}`);
} finally {
  // A round that failed half-way leaves containers created and never started.
  for (const id of created) await api("DELETE", `/containers/${id}?force=true`).catch(() => {});
  client.close();
  try {
    service.kill("SIGTERM");
  } catch { /* already gone */ }
  await service.status;
  await service.stderr.cancel().catch(() => {});
  await Deno.remove(dir, { recursive: true }).catch(() => {});
}
