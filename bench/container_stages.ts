/**
 * Where a container's spawn-to-exit goes, stage by stage (`deno run -A bench/container_stages.ts
 * [N]`): N sessions one after another (default 8), each as the orchestrator makes it — a worktree
 * sealed, the session's container prepared (git shadow, copies, relays), the scripted agent
 * spawned in it through the container launcher, reporting to a loopback server over its relay,
 * its container ended and its git work brought back. Printed: the median of each stage, with
 * the runtime's own events (create, init, start, died, cleanup, remove) placed on the same clock.
 * `--ahead MS` starts each agent's container MS ms before its spawn (what starting it while its
 * task waits in the queue would give). `--perf` (Linux `perf`, as root) also prints, per session, the processes every session started
 * by program (the runtime's commands, conmon, runc, the container's own) and their CPU by program.
 */
import { join } from "node:path";
import { committedRepo } from "./_fixture.ts";
import { gitText } from "../lib/git/git.ts";
import { createWorktree } from "../lib/worktrees/worktrees.ts";
import { sealWorktree } from "../lib/worktrees/trees.ts";
import { probeIsolation } from "../lib/container/probe.ts";
import { containerSettings } from "../lib/container/settings.ts";
import { prepareSessionContainer } from "../lib/container/session.ts";
import { spawnAgent } from "../lib/agents/process.ts";
import type { Launcher } from "../lib/process/launcher.ts";
import { spawnProcess } from "../lib/process/spawn.ts";
import { ServiceConfigSchema } from "../lib/config/schema.ts";
import { IMAGE_AGENT, testImage } from "../tests/_container_image.ts";

const N = Number(
  Deno.args.find((a, i) => /^\d+$/.test(a) && !/^--/.test(Deno.args[i - 1] ?? "")) ?? 8,
);
/** `--parallel P`: sessions P at a time (the orchestrator benchmark runs 4). */
/** `--setup S`: a worktree setup of S seconds (`sleep S` in a setup container) before the spawn. */
const SETUP_S = Deno.args.includes("--setup")
  ? Number(Deno.args[Deno.args.indexOf("--setup") + 1])
  : undefined;
/** `--held`: the agent's container is started before the setup, as a session does. */
const HELD = Deno.args.includes("--held");
/**
 * `--ahead MS`: the agent's container is started (held) MS ms before the spawn, with nothing else
 * to do meanwhile — as if it had been started while its task waited in the queue.
 */
const AHEAD_MS = Deno.args.includes("--ahead")
  ? Number(Deno.args[Deno.args.indexOf("--ahead") + 1])
  : undefined;
/** `--perf`: the sessions' processes and CPU by program, through `perf`. */
const PERF = Deno.args.includes("--perf");
const P = Deno.args.includes("--parallel")
  ? Number(Deno.args[Deno.args.indexOf("--parallel") + 1]) || 1
  : 1;

let perfLines: string[] = [];

/**
 * `perf` attached to this process and everything it starts from now on: CPU samples and every
 * program started (the `sched_process_exec` tracepoint). `report(n)` stops it and says both per
 * session, by program ("deno" is this benchmark and the agents in their containers).
 */
async function startPerf() {
  const dir = await Deno.makeTempDir({ prefix: "bench-stages-perf-" });
  const record = (file: string, events: string[]) =>
    new Deno.Command("perf", {
      args: ["record", "-q", ...events, "-o", join(dir, file), "-p", String(Deno.pid)],
      stdout: "null",
      stderr: "null",
    }).spawn();
  const cpu = record("cpu.data", ["-e", "task-clock", "-F", "999"]);
  const execs = record("exec.data", ["-e", "sched:sched_process_exec"]);
  await new Promise((r) => setTimeout(r, 500)); // attached
  const text = async (args: string[]) =>
    new TextDecoder().decode(
      (await new Deno.Command("perf", { args, stderr: "null" }).output()).stdout,
    );
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    for (const p of [cpu, execs]) {
      try {
        p.kill("SIGINT");
      } catch { /* gone */ }
      await p.status;
    }
  };
  return {
    async report(n: number): Promise<string[]> {
      await stop();
      const byComm = new Map<string, number>();
      const cpuText = await text([
        "report",
        "-i",
        join(dir, "cpu.data"),
        "--stdio",
        "--sort",
        "comm",
        "-F",
        "period,comm",
      ]);
      for (const line of cpuText.split("\n")) {
        const m = /^\s*(\d+)\s+(.+?)\s*$/.exec(line);
        if (m) byComm.set(m[2], (byComm.get(m[2]) ?? 0) + Number(m[1]) / 1e6);
      }
      const started = new Map<string, number>();
      const execText = await text(["script", "-i", join(dir, "exec.data"), "-F", "trace"]);
      for (const m of execText.matchAll(/filename=(\S+)/g)) {
        // runc starts its init from a copy of itself (`/proc/self/fd/N`): named by its path.
        const name = /\/\d+$/.test(m[1]) ? m[1] : m[1].split("/").pop()!;
        started.set(name, (started.get(name) ?? 0) + 1);
      }
      await Deno.remove(dir, { recursive: true }).catch(() => {});
      const total = [...byComm.values()].reduce((a, b) => a + b, 0);
      const top = (m: Map<string, number>, f: (x: number) => string) =>
        [...m].sort((a, b) => b[1] - a[1]).filter(([, v]) => v / n >= 0.05)
          .map(([k, v]) => `${k} ${f(v / n)}`).join(", ");
      return [
        `  per session, CPU ${(total / n).toFixed(0)} ms: ` + top(byComm, (x) => x.toFixed(1)),
        "  per session, programs started: " + top(started, (x) => x.toFixed(1)),
      ];
    },
    async stop() {
      await stop();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

const image = await testImage();
if (!image.ok) {
  console.log(`container stages: SKIPPED: ${image.skip}`);
  Deno.exit(0);
}
const config = ServiceConfigSchema.parse({
  cli: "generic",
  roles: { backend: {} },
  isolation: "container",
  container: { image: image.ref },
});
let t = performance.now();
const iso = await probeIsolation({
  settings: containerSettings(config),
  env: Deno.env.toObject(),
  binary: "deno",
});
console.log(`probe: ${(performance.now() - t).toFixed(0)} ms`);

/** Wall-clock ms (epoch) of the service's report of each session. */
const reported = new Map<string, number>();
const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
  const task = new URL(req.url).pathname.split("/")[2];
  reported.set(task, Date.now());
  return Response.json({ ok: true });
});
const serverUrl = `http://127.0.0.1:${server.addr.port}`;

// The runtime's own events, on the wall clock.
const events = new Deno.Command(iso.runtime.bin, {
  args: ["events", "--format", "{{.Time}}|{{.Status}}|{{.Name}}"],
  stdout: "piped",
  stderr: "null",
}).spawn();
const seen: { at: number; status: string; name: string }[] = [];
(async () => {
  const dec = new TextDecoderStream();
  let buf = "";
  for await (const chunk of events.stdout.pipeThrough(dec)) {
    buf += chunk;
    let i;
    while ((i = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      const [time, status, name] = line.split("|");
      // "2026-11-28 15:20:01.123456789 +0000 UTC"
      const m = /^(\S+) (\d+:\d+:\d+)(\.\d+)? ([+-]\d{4})/.exec(time);
      if (!m) continue;
      const frac = (m[3] ?? ".0").slice(0, 4);
      const iso8601 = `${m[1]}T${m[2]}${frac}${m[4].slice(0, 3)}:${m[4].slice(3)}`;
      seen.push({ at: Date.parse(iso8601), status, name });
    }
  }
})();
await new Promise((r) => setTimeout(r, 500));

/** The wall clock at boot (the container reads the same kernel's uptime, to 10 ms). */
const bootEpoch = Date.now() -
  Number((await Deno.readTextFile("/proc/uptime")).split(" ")[0]) * 1000;

const root = await committedRepo("svc-stages-", {
  "README.md": "# stages\n",
  ...Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`src/f${i}.ts`, `export {};\n`])),
});
const base = await gitText(["rev-parse", "main"], { cwd: root });
const runtimeDir = join(root, ".sdd", "runtime");
const rows: Record<string, number>[] = [];
const perf = PERF ? await startPerf() : undefined;
try {
  const one = async (i: number) => {
    const sid = `s${i}`;
    const wt = await createWorktree(root, sid, base);
    const admin = await sealWorktree(root, sid);
    t = performance.now();
    const box = await prepareSessionContainer({
      iso,
      root,
      runtimeDir,
      runId: "r1",
      sessionId: sid,
      admin,
      branch: wt.branch,
      serverUrl,
      env: { SERVICE_SERVER_URL: serverUrl, SERVICE_TASK_ID: sid, LANG: "C.UTF-8" },
      processEnv: Deno.env.toObject(),
      warn: (l) => console.error(l),
    });
    const prepared = performance.now() - t;
    const marks: Record<string, number> = {};
    const launcher: Launcher = {
      launch(argv, options) {
        const l = box.agent.launch(argv, options);
        l.child.status.then(() => marks.runtimeExited = performance.now());
        return {
          ...l,
          finish: async () => {
            marks.finishStart = performance.now();
            await l.finish?.();
            marks.finishEnd = performance.now();
          },
        };
      },
    };
    const prompt = '```agent-script\n["write", "out.txt", "x\\n"]\n["report", "done"]\n```';
    const inside: Record<string, number> = {};
    const args = [
      "-c",
      'read u _ </proc/uptime; echo "T entry $u"; deno run -A "$1" "$2"; c=$?; ' +
      'read u _ </proc/uptime; echo "T agent $u"; exit $c',
      "x",
      IMAGE_AGENT,
      prompt,
    ];
    const s0 = performance.now();
    if (HELD || AHEAD_MS !== undefined) {
      const extraS = (SETUP_S ?? 0) + Math.ceil((AHEAD_MS ?? 0) / 1000);
      box.agent.hold(["sh", ...args], { cwd: wt.path, env: box.env }, extraS);
    }
    if (AHEAD_MS !== undefined) await new Promise((r) => setTimeout(r, AHEAD_MS));
    if (SETUP_S !== undefined) {
      const setup = spawnProcess(["sleep", String(SETUP_S)], {
        cwd: wt.path,
        env: box.setupEnv({ LANG: "C.UTF-8" }),
        clearEnv: true,
        launcher: box.setup,
        logPath: join(root, `${sid}-setup.log`),
      });
      if (!(await setup.status).success) throw new Error("setup failed");
    }
    const setupMs = performance.now() - s0;
    const spawnedWall = Date.now();
    const t0 = performance.now();
    const proc = spawnAgent({
      command: "sh",
      args,
      cwd: wt.path,
      env: box.env,
      logPath: join(root, `${sid}.log`),
      launcher,
      onLine: (line) => {
        const m = /^T (\w+) ([\d.]+)$/.exec(line.trim());
        if (m) inside[m[1]] = bootEpoch + Number(m[2]) * 1000;
      },
    });
    const status = await proc.status;
    const done = performance.now();
    if (!status.success) throw new Error(await Deno.readTextFile(proc.logPath));
    await new Promise((r) => setTimeout(r, 300)); // the last events
    const wall = (ms: number) => ms - spawnedWall; // wall-clock ms after the spawn
    const ev = (s: string) => {
      const e = seen.find((x) => x.name === box.name && x.status === s && x.at >= spawnedWall - 5);
      return e ? wall(e.at) : NaN;
    };
    rows.push({
      prepare: prepared,
      create: ev("create"),
      init: ev("init"),
      start: ev("start"),
      entry: wall(inside.entry),
      report: wall(reported.get(sid) ?? NaN),
      agentExit: wall(inside.agent),
      died: ev("died"),
      cleanup: ev("cleanup"),
      remove: ev("remove"),
      runtimeExited: marks.runtimeExited - t0,
      finishStart: marks.finishStart - t0,
      total: done - t0,
      setup: setupMs,
      setupToExit: done - s0,
    });
  };
  for (let i = 0; i < N; i += P) {
    await Promise.all(Array.from({ length: Math.min(P, N - i) }, (_, j) => one(i + j)));
  }
  if (perf) perfLines = await perf.report(N);
} finally {
  await perf?.stop();
  events.kill();
  await server.shutdown();
  await Deno.remove(root, { recursive: true }).catch(() => {});
}
for (const line of perfLines) console.log(line);
const keys = Object.keys(rows[0]);
console.log(
  `container stages: ${N} sessions, ${P} at a time${
    SETUP_S === undefined ? "" : `, setup ${SETUP_S} s`
  }${HELD ? ", held" : ""}${
    AHEAD_MS === undefined ? "" : `, started ${AHEAD_MS} ms ahead`
  }, ${iso.runtime.name} ${iso.runtime.version}; ` +
    `ms after the spawn (prepare: before it), median (min–max); load ${
      Deno.loadavg().map((x) => x.toFixed(2)).join(" ")
    }`,
);
for (const k of keys) {
  const xs = rows.map((r) => r[k]).filter((x) => !Number.isNaN(x));
  if (xs.length === 0) {
    console.log(`  ${k.padEnd(14)} n/a`);
    continue;
  }
  console.log(
    `  ${k.padEnd(14)} ${median(xs).toFixed(0).padStart(5)}  (${Math.min(...xs).toFixed(0)}–${
      Math.max(...xs).toFixed(0)
    })`,
  );
}
