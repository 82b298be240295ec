/**
 * `deno task bench:board` — the board at scale, measured the way a user waits for it (issue 9):
 * an independent writer (bench/write_workspace.py, CPython, none of the service's code) writes a
 * workspace with one 100 000-row journal (~40 MB, 20 000 tasks) beside 200 small finished runs;
 * the real server starts in its own process; every figure is to the last byte received over HTTP.
 *
 *   deno task bench:board [--rows N] [--tasks N] [--small N]
 *
 * `BENCH_DENO_FLAGS` (space-separated) are given to the server's `deno run`, to profile it
 * (`--cpu-prof --cpu-prof-dir=DIR`) or try V8 settings (`--v8-flags=--max-semi-space-size=4`).
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { removeBenchDir } from "./_bench_dir.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    rows: { type: "string", default: "100000" },
    tasks: { type: "string", default: "20000" },
    small: { type: "string", default: "200" },
  },
});
const here = new URL(".", import.meta.url).pathname;
const root = await Deno.makeTempDir({ prefix: "bench-board-" });
const journal = join(root, ".sdd/runs/big/journal.jsonl");

try {
  let t = performance.now();
  await mustRun("python3", [
    join(here, "write_workspace.py"),
    root,
    values.rows,
    values.tasks,
    values.small,
  ]);
  const size = (await Deno.stat(journal)).size;
  console.log(
    `workspace: ${values.rows}-row journal (${
      (size / 1e6).toFixed(1)
    } MB, ${values.tasks} tasks) ` +
      `+ ${values.small} small runs, written by CPython in ${ms(performance.now() - t)}`,
  );

  const server = await startServer(root);
  try {
    const big = `${server.url}/review-board/runs/big`;
    const idleRss = await rssBytes(server.pid);
    t = performance.now();
    const first = await timedGet(big);
    const receipt = JSON.parse(new TextDecoder().decode(first.body));
    console.log(
      `first GET /review-board/runs/big (fresh server): ${ms(first.ms)} ` +
        `(${(first.body.length / 1e6).toFixed(1)} MB, verified ${receipt.journal_verified}); ` +
        `server RSS ${mb(idleRss)} before, ${mb(await rssBytes(server.pid))} after`,
    );
    // What the server holds once it is idle again: after its answer it fingerprints the journal
    // and hands back the heap the fold grew (docs/board.md).
    const idleAfter = await untilIdle(server.pid);
    console.log(
      `server RSS once idle after the first answer (${ms(idleAfter)} later): ` +
        mb(await rssBytes(server.pid)),
    );
    const repeats: number[] = [];
    for (let i = 0; i < 10; i++) repeats.push((await timedGet(big)).ms);
    console.log(`repeat GET: median ${ms(median(repeats))}, worst ${ms(Math.max(...repeats))}`);
    const etag = first.etag!;
    const conditional = await timedGet(big, { "If-None-Match": etag });
    console.log(`conditional GET (If-None-Match): ${conditional.status} in ${ms(conditional.ms)}`);

    const listFirst = await timedGet(`${server.url}/review-board/runs`);
    const lists: number[] = [];
    for (let i = 0; i < 5; i++) lists.push((await timedGet(`${server.url}/review-board/runs`)).ms);
    console.log(
      `GET /review-board/runs (${values.small} + 1 runs): first ${ms(listFirst.ms)}, ` +
        `then median ${ms(median(lists))} of 5`,
    );
    console.log(`server RSS after all of it: ${mb(await rssBytes(server.pid))}`);

    const py: number[] = [];
    let pyReceipt: Record<string, unknown> = {};
    for (let i = 0; i < 3; i++) {
      t = performance.now();
      pyReceipt = JSON.parse(await mustRun("python3", [join(here, "../scripts/fold.py"), journal]));
      py.push(performance.now() - t);
    }
    console.log(
      `CPython verify+fold (scripts/fold.py, whole process): median ${ms(median(py))}; ` +
        `${(median(py) / first.ms).toFixed(1)}x the server's first answer`,
    );
    const same = pyReceipt.projection_hash === receipt.projection_hash &&
      pyReceipt.journal_head === receipt.journal_head;
    console.log(`same projection_hash and journal_head as CPython: ${same}`);
    if (!same) Deno.exitCode = 1;
  } finally {
    await server.stop();
  }
} finally {
  await removeBenchDir(root);
}

function ms(n: number): string {
  return `${n.toFixed(0)} ms`;
}

function mb(bytes: number): string {
  return `${(bytes / 1e6).toFixed(0)} MB`;
}

function median(values: number[]): number {
  return [...values].sort((a, b) => a - b)[values.length >> 1];
}

async function mustRun(cmd: string, args: string[]): Promise<string> {
  const out = await new Deno.Command(cmd, { args, stderr: "inherit" }).output();
  if (!out.success) throw new Error(`${cmd} ${args.join(" ")} failed`);
  return new TextDecoder().decode(out.stdout);
}

async function timedGet(url: string, headers: Record<string, string> = {}) {
  const t = performance.now();
  const res = await fetch(url, { headers });
  const body = new Uint8Array(await res.arrayBuffer());
  return { ms: performance.now() - t, status: res.status, body, etag: res.headers.get("etag") };
}

/** CPU ticks (user + system) `pid` has used. */
async function cpuTicks(pid: number): Promise<number> {
  const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(fields[11]) + Number(fields[12]);
}

/** Milliseconds until `pid` used no CPU for 500 ms running (at most 10 s). */
async function untilIdle(pid: number): Promise<number> {
  const t0 = performance.now();
  let last = await cpuTicks(pid);
  let quietSince = performance.now();
  while (performance.now() - t0 < 10_000) {
    await new Promise((r) => setTimeout(r, 100));
    const now = await cpuTicks(pid);
    if (now !== last) [last, quietSince] = [now, performance.now()];
    else if (performance.now() - quietSince >= 500) return quietSince - t0;
  }
  return performance.now() - t0;
}

async function rssBytes(pid: number): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

/** `service serve` in its own process on a free port; resolves once it listens. */
async function startServer(root: string) {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      ...(Deno.env.get("BENCH_DENO_FLAGS")?.split(" ").filter(Boolean) ?? []),
      join(here, "../cli.ts"),
      "serve",
      "--root",
      root,
      "--port",
      "0",
    ],
    stdout: "piped",
    stderr: "inherit",
    env: { RUST_BACKTRACE: "0", NO_COLOR: "1" },
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  while (!/listening on (\S+)/.test(seen)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`server ended before listening: ${seen}`);
    seen += value;
  }
  const url = /listening on (\S+)/.exec(seen)![1];
  return {
    url,
    pid: child.pid,
    async stop() {
      child.kill("SIGTERM");
      reader.releaseLock();
      await child.stdout.cancel().catch(() => {});
      await child.status;
    },
  };
}
