/**
 * Issue 5 benchmark, printed as figures: `deno run -A bench/orchestrator_bench.ts [spawns]
 * [--only spawn|run|containers] [--containers-only]` (`deno task bench:orchestrator`).
 *
 * (a) Spawn overhead per agent in a repository of ~200 files, median over `spawns` (default 20):
 *     createWorktree + start `true` (until it exits), and createWorktree + the scripted Deno
 *     agent through `spawnAgent` (until spawned, and until it exits). Aim: worktree + `true`
 *     median <= 150 ms.
 * (c) Container isolation against host processes: the same run of 12 trivial tasks with
 *     max_agents 4, once with agents as host processes and once under `isolation: container`
 *     (podman or docker, on the image of tests/_container_image.ts built from this machine's own
 *     files): the median agent spawn-to-exit time, the overhead per task and the wall time of
 *     each, and what a container adds per task; and the probe `service run` makes once per run.
 *     Skipped, saying why, when no runtime answers.
 * (b) A run of 50 trivial tasks with max_agents 16 through `runPlan` (real task server on a free
 *     port, real git, the scripted agent via the generic adapter): wall time, tasks/min, the
 *     agents' own run time (`agent_exited.duration_ms` of the journal), the orchestration overhead
 *     per task and the per-task orchestration latency (a task's first to last journal row minus
 *     its agent's run time), and where that time goes (the median gap between a task's
 *     consecutive rows), the service's own CPU per task (its event loop's thread and all its
 *     threads, from /proc), and the git processes the service started per task (git's own trace;
 *     `BENCH_GIT_TRACE=FILE` writes each one's argv and run time). Fails unless every task is
 *     CLOSED.
 */
import { dirname, join } from "node:path";
import { gitText } from "../lib/git/git.ts";
import { createWorktree, worktreePath } from "../lib/worktrees/worktrees.ts";
import { spawnAgent } from "../lib/agents/process.ts";
import { runPlan } from "../lib/runner/run.ts";
import { groupCommitCounts } from "../lib/journal/journal_file.ts";
import { SERVER_APP } from "../routes/_app.ts";
import { loadTaskSpecs } from "../lib/tasks/persist.ts";
import { journalPath, workspacePaths } from "../lib/workspace.ts";
import { benchRepo, committedRepo, spawnOnce } from "./_fixture.ts";
import { IMAGE_AGENT, testImage } from "../tests/_container_image.ts";
import { probeIsolation } from "../lib/container/probe.ts";
import { containerSettings } from "../lib/container/settings.ts";
import { ServiceConfigSchema } from "../lib/config/schema.ts";
import { formatGitCount, traceGit } from "./_git_trace.ts";
import { threadCpu } from "./_thread_cpu.ts";
import { removeBenchDir } from "./_bench_dir.ts";

const SPAWNS = Number(Deno.args.find((a) => /^\d+$/.test(a)) ?? 20);
const TASKS_TOGETHER = 50;
const AGENTS_TOGETHER = 16;
/** The container comparison (c): a smaller run, both ways. */
const SMALL_TASKS = 12;
const SMALL_AGENTS = 4;
const AGENT = new URL("../agents/scripted_agent.ts", import.meta.url).pathname;
/**
 * `--setup CMD`: the container comparison's worktrees run a setup command first (in a container
 * of the image under isolation), as a project that installs its dependencies does.
 */
const SETUP = Deno.args.includes("--setup")
  ? Deno.args[Deno.args.indexOf("--setup") + 1]
  : undefined;
const DENO = Deno.execPath();

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

function stats(xs: number[]): string {
  return `median ${median(xs).toFixed(1)} ms (min ${Math.min(...xs).toFixed(1)}, max ${
    Math.max(...xs).toFixed(1)
  }, n ${xs.length})`;
}

async function spawnBench(): Promise<void> {
  const root = await benchRepo(200);
  try {
    const base = await gitText(["rev-parse", "main"], { cwd: root });
    const worktreeTrue: number[] = [];
    const worktreeOnly: number[] = [];
    const gitAlone: number[] = [];
    const denoSpawned: number[] = [];
    const denoExited: number[] = [];
    const prompt = '```agent-script\n["print", "hello"]\n```';
    const logDir = await Deno.makeTempDir({ prefix: "svc-bench-logs-" });
    for (let i = 0; i < SPAWNS; i++) {
      // Plain `git worktree add` of the same commit, in the same seconds: on this kind of disk
      // its cost swings tenfold with what was deleted lately, so the service's share is the
      // difference, not the figure (docs/performance.md, "The disk under the figures").
      let t = performance.now();
      const plain = join(dirname(worktreePath(root, `t${i}`)), `plain${i}`);
      await gitText(["worktree", "add", "-q", "-b", `plain${i}`, plain, base], { cwd: root });
      gitAlone.push(performance.now() - t);

      t = performance.now();
      await spawnOnce(root, `t${i}`, base);
      worktreeTrue.push(performance.now() - t);

      t = performance.now();
      const wt = await createWorktree(root, `d${i}`, base);
      worktreeOnly.push(performance.now() - t);
      const proc = spawnAgent({
        command: DENO,
        args: ["run", "-A", AGENT, prompt],
        cwd: wt.path,
        env: { PATH: Deno.env.get("PATH") ?? "", HOME: Deno.env.get("HOME") ?? "/tmp" },
        logPath: join(logDir, `d${i}.log`),
      });
      denoSpawned.push(performance.now() - t);
      const status = await proc.status;
      denoExited.push(performance.now() - t);
      if (!status.success) {
        throw new Error(`scripted agent failed: ${await Deno.readTextFile(proc.logPath)}`);
      }
    }
    await removeBenchDir(logDir);
    console.log(`(a) spawn overhead, repository of 200 files, ${SPAWNS} spawns each`);
    console.log(`    worktree + \`true\` (start to exit):              ${stats(worktreeTrue)}`);
    console.log(`    worktree alone:                                 ${stats(worktreeOnly)}`);
    console.log(`    plain \`git worktree add\`, interleaved:         ${stats(gitAlone)}`);
    const share = worktreeTrue.map((ms, i) => ms - gitAlone[i]);
    console.log(`    the service's share (each pair's difference):   ${stats(share)}`);
    console.log(`    worktree + scripted deno agent, spawned:        ${stats(denoSpawned)}`);
    console.log(`    worktree + scripted deno agent, run to exit:    ${stats(denoExited)}`);
    const m = median(worktreeTrue);
    console.log(`    aim worktree + process start <= 150 ms: ${m <= 150 ? "met" : "MISSED"}`);
  } finally {
    await removeBenchDir(root);
  }
}

function planYaml(tasks: number): string {
  const steps = Array.from({ length: tasks }, (_, i) => {
    const n = String(i).padStart(2, "0");
    return `      - id: t${n}
        title: Write f/${n}.txt
        role: backend
        goal: |
          Write f/${n}.txt and report.
          \`\`\`agent-script
          ["write", "f/${n}.txt", "${n}\\n"]
          ["report", "wrote f/${n}.txt"]
          \`\`\`
        owned_files: [f/${n}.txt]`;
  });
  return `name: bench ${tasks}\nstages:\n  - name: all\n    steps:\n${steps.join("\n")}\n`;
}

/** Gaps between each task's consecutive journal rows, by `from → to`, in the order first seen. */
function phases(
  rows: { type: string; ts: string; data?: { task_id?: unknown } }[],
  tasks: number,
) {
  const lastOf = new Map<string, { type: string; at: number }>();
  const gaps = new Map<string, number[]>();
  for (const r of rows) {
    const id = r.data?.task_id;
    if (typeof id !== "string") continue;
    const at = Date.parse(r.ts);
    const prev = lastOf.get(id);
    if (prev) {
      const step = `${prev.type} → ${r.type}`;
      gaps.set(step, [...gaps.get(step) ?? [], at - prev.at]);
    }
    lastOf.set(id, { type: r.type, at });
  }
  return [...gaps].filter(([, xs]) => xs.length >= tasks / 2);
}

/**
 * A run of 50 trivial tasks with 16 agents (b), or — `alone` — ten of them one at
 * a time (b'), where no task waits for another: what the service's own steps take per task,
 * without the queue sixteen agents on two cores make.
 */
async function runBench(alone = false): Promise<void> {
  const taskCount = alone ? 10 : TASKS_TOGETHER;
  const maxAgents = alone ? 1 : AGENTS_TOGETHER;
  const root = await committedRepo("svc-bench-run-", {
    "README.md": "# bench\n",
    "service.yaml": `cli: generic\ncli_command: ${
      JSON.stringify([DENO, "run", "-A", AGENT])
    }\nmax_agents: ${maxAgents}\nroles:\n  backend: {}\n`,
    "plan.yaml": planYaml(taskCount),
  });
  try {
    const log: string[] = [];
    const trace = await traceGit();
    const cpu0 = threadCpu();
    const t0 = performance.now();
    const result = await runPlan({
      root,
      plan: "plan.yaml",
      port: 0,
      out: (l) => log.push(l),
      app: SERVER_APP,
    });
    const wallMs = performance.now() - t0;
    const cpu1 = threadCpu();
    const gits = await trace.stop();
    const dump = Deno.env.get("BENCH_GIT_TRACE");
    if (dump) await Deno.writeTextFile(dump, gits.map((g) => JSON.stringify(g)).join("\n") + "\n");

    const { tasks } = await loadTaskSpecs(workspacePaths(root));
    const notClosed = tasks.filter((t) => t.status !== "CLOSED");
    if (result.status !== "completed" || tasks.length !== taskCount || notClosed.length > 0) {
      console.error(log.slice(-40).join("\n"));
      throw new Error(
        `run ${result.status}: ${tasks.length} tasks, not CLOSED: ${
          notClosed.map((t) => `${t.id}=${t.status}`).join(", ")
        }; problems: ${result.problems.join("; ")}`,
      );
    }
    const files = (await gitText(["ls-tree", "-r", "--name-only", "main", "f/"], { cwd: root }))
      .split("\n").filter(Boolean);
    if (files.length !== taskCount) {
      throw new Error(`main holds ${files.length} of ${taskCount} files`);
    }

    const rows = (await Deno.readTextFile(journalPath(workspacePaths(root), result.runId)))
      .split("\n").filter(Boolean).map((l) => JSON.parse(l));
    const exited = rows.filter((r) => r.type === "agent_exited");
    const agentMs = exited.map((r) => r.data.duration_ms as number);
    const sumAgent = agentMs.reduce((a, b) => a + b, 0);
    // Per task: from its claim to its last row (merged/closed) minus its agent's own run time.
    const first = new Map<string, number>();
    const last = new Map<string, number>();
    for (const r of rows) {
      const id = r.data?.task_id;
      if (typeof id !== "string") continue;
      const ts = Date.parse(r.ts);
      if (!first.has(id)) first.set(id, ts);
      last.set(id, ts);
    }
    const lifecycle = exited.map((r) =>
      last.get(r.data.task_id)! - first.get(r.data.task_id)! - r.data.duration_ms
    );
    const slots = Math.min(maxAgents, taskCount);
    console.log(
      `(${alone ? "b'" : "b"}) run of ${taskCount} trivial tasks, max_agents ${maxAgents}, ` +
        "scripted deno agent",
    );
    console.log(`    all ${taskCount} tasks CLOSED and merged (${files.length} files on main)`);
    console.log(`    wall time:               ${(wallMs / 1000).toFixed(2)} s`);
    console.log(
      `    throughput:              ${(taskCount / (wallMs / 60_000)).toFixed(1)} tasks/min`,
    );
    console.log(
      `    agents' own run time:    ${stats(agentMs)}; sum ${(sumAgent / 1000).toFixed(2)} s`,
    );
    console.log(
      `    overhead per task, wall minus agent time: (wall - sum(agent) / ${slots}) / ${taskCount} = ${
        ((wallMs - sumAgent / slots) / taskCount).toFixed(1)
      } ms`,
    );
    console.log(
      `    per-task orchestration latency (first to last journal row minus agent run): ${
        stats(lifecycle)
      }`,
    );
    if (cpu0 && cpu1) {
      console.log(
        `    service CPU per task:    event loop ${
          ((cpu1.main - cpu0.main) / taskCount).toFixed(1)
        } ms, ` +
          `all its threads ${((cpu1.process - cpu0.process) / taskCount).toFixed(1)} ms ` +
          "(not its git or agent processes)",
      );
    }
    const turns = groupCommitCounts(journalPath(workspacePaths(root), result.runId));
    console.log(
      `    agent_exited rows: ${exited.length}, journal rows: ${rows.length}, ` +
        `appended by ${turns.appends} appends in ${turns.turns} writes`,
    );
    console.log(`    ${formatGitCount(gits, taskCount, "task")}`);
    console.log("    where a task's time goes (median gap between its consecutive rows):");
    for (const [step, gaps] of phases(rows, taskCount)) {
      console.log(`      ${step.padEnd(46)} ${stats(gaps)}`);
    }
  } finally {
    await removeBenchDir(root);
  }
}

console.log(
  `orchestrator benchmark: ${Deno.build.os}, ${navigator.hardwareConcurrency} cpus, load ${
    Deno.loadavg().map((x) => x.toFixed(2)).join(" ")
  }`,
);
/** `--only spawn|run|alone|containers` runs one part (bench:summary runs them one at a time). */
const ONLY = Deno.args.includes("--containers-only")
  ? "containers"
  : Deno.args[Deno.args.indexOf("--only") + 1];
if (Deno.args.includes("--only") && !["spawn", "run", "alone", "containers"].includes(ONLY)) {
  throw new Error(`--only takes spawn, run, alone or containers, not ${JSON.stringify(ONLY)}`);
}
const part = (name: string) => !Deno.args.includes("--only") && !ONLY || ONLY === name;
if (part("spawn")) await spawnBench();
if (part("run")) await runBench();
if (part("alone")) await runBench(true);
if (part("containers")) await containerBench();

/** What one run of {@link smallRun} measured. */
interface SmallRun {
  wallMs: number;
  agentMs: number[];
  overheadMs: number;
}

async function smallRun(isolation: string): Promise<SmallRun> {
  const steps = Array.from(
    { length: SMALL_TASKS },
    (_, i) =>
      `      - id: c${i}\n        role: backend\n        goal: |\n          Write c/${i}.txt.\n` +
      "          ```agent-script\n" +
      `          ["write", "c/${i}.txt", "${i}\\n"]\n          ["report", "wrote c/${i}.txt"]\n` +
      `          \`\`\`\n        owned_files: [c/${i}.txt]`,
  );
  const agent = isolation === "" ? JSON.stringify([DENO, "run", "-A", AGENT]) : JSON.stringify([
    "deno",
    "run",
    "-A",
    IMAGE_AGENT,
  ]);
  const root = await committedRepo("svc-bench-iso-", {
    "README.md": "# bench\n",
    "service.yaml": `cli: generic\ncli_command: ${agent}\nmax_agents: ${SMALL_AGENTS}\n` +
      `roles:\n  backend: {}\n${isolation}` +
      (SETUP ? `worktree:\n  setup: [${JSON.stringify(SETUP)}]\n` : ""),
    "plan.yaml": `name: iso\nstages:\n  - name: all\n    steps:\n${steps.join("\n")}\n`,
  });
  try {
    const log: string[] = [];
    const t0 = performance.now();
    const result = await runPlan({ root, port: 0, out: (l) => log.push(l), app: SERVER_APP });
    const wallMs = performance.now() - t0;
    if (result.status !== "completed") {
      console.error(log.slice(-30).join("\n"));
      throw new Error(`run ${result.status}: ${result.problems.join("; ")}`);
    }
    const rows = (await Deno.readTextFile(journalPath(workspacePaths(root), result.runId)))
      .split("\n").filter(Boolean).map((l) => JSON.parse(l));
    const agentMs = rows.filter((r) => r.type === "agent_exited").map((r) =>
      r.data.duration_ms as number
    );
    const sum = agentMs.reduce((a, b) => a + b, 0);
    return { wallMs, agentMs, overheadMs: (wallMs - sum / SMALL_AGENTS) / SMALL_TASKS };
  } finally {
    await removeBenchDir(root).catch(() => {});
  }
}

async function containerBench(): Promise<void> {
  const image = await testImage();
  if (!image.ok) {
    console.log(`(c) container vs host: SKIPPED: ${image.skip}`);
    return;
  }
  const config = ServiceConfigSchema.parse({
    cli: "generic",
    roles: { backend: {} },
    isolation: "container",
    container: { image: image.ref },
  });
  const probes: number[] = [];
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    await probeIsolation({
      settings: containerSettings(config),
      env: Deno.env.toObject(),
      binary: "deno",
    });
    probes.push(performance.now() - t);
  }
  const host = await smallRun("");
  const boxed = await smallRun(`isolation: container\ncontainer:\n  image: ${image.ref}\n`);
  const m = (r: SmallRun) => median(r.agentMs);
  console.log(
    `(c) container vs host: ${SMALL_TASKS} trivial tasks, max_agents ${SMALL_AGENTS}, scripted ` +
      `deno agent; ${image.runtime}, image ${image.ref}${SETUP ? `; worktree setup ${SETUP}` : ""}`,
  );
  console.log(`    probe before run_started (runtime, image, trial container): ${stats(probes)}`);
  for (const [name, r] of [["host processes", host], ["containers", boxed]] as const) {
    console.log(
      `    ${name.padEnd(15)} agent spawn to exit ${stats(r.agentMs)}; overhead per task ` +
        `${r.overheadMs.toFixed(1)} ms; wall ${(r.wallMs / 1000).toFixed(2)} s`,
    );
  }
  console.log(
    `    a container adds ${(m(boxed) - m(host)).toFixed(1)} ms to an agent's spawn-to-exit ` +
      `(median) and ${(boxed.overheadMs - host.overheadMs).toFixed(1)} ms of overhead per task`,
  );
}
