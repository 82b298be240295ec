/**
 * `deno task bench:summary [--update] [--skip containers,…]`: the quick versions of the
 * benchmarks, each in its own process with a time bound (about three minutes in all), and one
 * table of every figure beside its goal and beside the value last recorded in
 * docs/performance.md (the JSON block between its `bench:summary` markers). `--update` writes the
 * figures measured now into that block. A figure never fails anything: machines are noisy, so
 * the exit code is 0 whatever the figures, and a benchmark that fails or overruns shows `n/a`
 * with the reason. The goals, what bounds each and how to reproduce it: docs/performance.md.
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { hostLauncher } from "../lib/process/launcher.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { update: { type: "boolean", default: false }, skip: { type: "string", default: "" } },
});
const here = new URL(".", import.meta.url).pathname;
const DOC = join(here, "../docs/performance.md");
/** The whole summary's bound, in seconds: a benchmark that would start past it is left out. */
const TOTAL_S = 240;
const BEGIN = "<!-- bench:summary recorded: begin -->";
const END = "<!-- bench:summary recorded: end -->";

/** One figure: how it is read from a benchmark's output, and its goal. */
interface Figure {
  key: string;
  label: string;
  unit: string;
  /** `min`: at least `goal`; `max`: at most `goal`. */
  aim: "min" | "max";
  /** Absent for a figure printed to read another by (it has no goal of its own). */
  goal?: number;
}

/** A quick benchmark: its command, bound, and the figures its output gives. */
interface Bench {
  name: string;
  args: string[];
  timeoutS: number;
  figures: Figure[];
  read: (out: string) => Record<string, number | undefined>;
}

const num = (re: RegExp, out: string): number | undefined => {
  const m = re.exec(out);
  return m ? Number(m[1]) : undefined;
};

const BENCHES: Bench[] = [
  {
    name: "webhooks",
    args: ["bench/webhooks_bench.ts", "--deliveries", "5000", "--issues", "1000", "--claims", "5"],
    timeoutS: 90,
    figures: [
      fig("issue_events_per_s", "issue events, each creating a task", "/s", "min", 2000),
      fig("issue_events_p99_ms", "  p99", "ms", "max", 25),
      fig("intake_per_s", "webhook intake, durable ledger", "/s", "min", 3000),
      fig("intake_p99_ms", "  p99", "ms", "max", 20),
      fig("webhook_to_claim_ms", "signed webhook → task claimed, median", "ms", "max", 20),
    ],
    read: (out) => ({
      issue_events_per_s: num(/issue events \(each[^:]*: (\d+)\/s/, out),
      issue_events_p99_ms: num(/issue events \(each.*?p99 ([\d.]+) ms/, out),
      intake_per_s: num(/signed deliveries \(accepted[^:]*: (\d+)\/s/, out),
      intake_p99_ms: num(/signed deliveries \(accepted.*?p99 ([\d.]+) ms/, out),
      webhook_to_claim_ms: num(/webhook → task claimed: +median ([\d.]+) ms/, out),
    }),
  },
  {
    name: "claims",
    args: ["bench/claim_throughput.ts"],
    timeoutS: 90,
    figures: [
      fig("claims_per_s", "task claims, 32 clients", "/s", "min", 2500),
      fig("claims_p99_ms", "  p99", "ms", "max", 20),
    ],
    read: (out) => ({
      claims_per_s: num(/"claims_per_second": (\d+)/, out),
      claims_p99_ms: num(/"p99_ms": ([\d.]+)/, out),
    }),
  },
  {
    name: "board",
    args: ["bench/board_at_scale.ts"],
    timeoutS: 120,
    figures: [
      fig(
        "rss_after_projection_mb",
        "server RSS after a 100 k-row first projection",
        "MB",
        "max",
        120,
      ),
      fig("rss_settled_mb", "  the same, once the server is idle again", "MB", "max", 120),
      fig("first_projection_ms", "first projection, 100 k rows / 40 MB", "ms", "max", 200),
      fig("cpython_ratio", "  vs a CPython verify+fold", "×", "min", 5),
      fig("runs_list_ms", "runs list, 201 runs, median", "ms", "max", 10),
    ],
    read: (out) => ({
      rss_after_projection_mb: num(/first GET .*? server RSS \d+ MB before, (\d+) MB after/, out),
      rss_settled_mb: num(/server RSS once idle after the first answer \(.*?\): (\d+) MB/, out),
      first_projection_ms: num(
        /first GET \/review-board\/runs\/big \(fresh server\): (\d+) ms/,
        out,
      ),
      cpython_ratio: num(/; ([\d.]+)x the server's first answer/, out),
      runs_list_ms: num(/GET \/review-board\/runs .*then median (\d+) ms/, out),
    }),
  },
  {
    name: "spawn",
    args: ["bench/orchestrator_bench.ts", "10", "--only", "spawn"],
    timeoutS: 60,
    figures: [
      fig("worktree_start_ms", "worktree + process start, median", "ms", "max", 15),
      fig("worktree_git_ms", "  plain `git worktree add`, same seconds", "ms", "max"),
    ],
    read: (out) => ({
      worktree_start_ms: num(/worktree \+ `true` \(start to exit\): +median ([\d.]+) ms/, out),
      worktree_git_ms: num(/plain `git worktree add`, interleaved: +median ([\d.]+) ms/, out),
    }),
  },
  {
    name: "orchestrator",
    args: ["bench/orchestrator_bench.ts", "--only", "run"],
    timeoutS: 90,
    figures: [
      fig("overhead_per_task_ms", "overhead per task, 50 tasks × 16 agents", "ms", "max", 50),
      fig("task_latency_ms", "per-task orchestration latency, median", "ms", "max", 100),
    ],
    read: (out) => ({
      overhead_per_task_ms: num(/overhead per task, wall minus agent time: .*= ([\d.]+) ms/, out),
      task_latency_ms: num(/per-task orchestration latency .*?: median ([\d.]+) ms/, out),
    }),
  },
  {
    name: "alone",
    args: ["bench/orchestrator_bench.ts", "--only", "alone"],
    timeoutS: 60,
    figures: [fig("task_latency_alone_ms", "  one task at a time (no queue)", "ms", "max")],
    read: (out) => ({
      task_latency_alone_ms: num(/per-task orchestration latency .*?: median ([\d.]+) ms/, out),
    }),
  },
  {
    name: "containers",
    args: ["bench/orchestrator_bench.ts", "--only", "containers"],
    timeoutS: 120,
    figures: [
      fig("container_added_ms", "a container's added spawn-to-exit, median", "ms", "max", 250),
      fig("container_probe_ms", "  the run's probe, median", "ms", "max", 500),
    ],
    read: (out) => ({
      container_added_ms: num(/a container adds ([\d.]+) ms to an agent's spawn-to-exit/, out),
      container_probe_ms: num(/probe before run_started [^:]*: median ([\d.]+) ms/, out),
    }),
  },
];

function fig(key: string, label: string, unit: string, aim: "min" | "max", goal?: number): Figure {
  return { key, label, unit, aim, goal };
}

/** The recorded block of docs/performance.md: its figures and when they were taken. */
interface Recorded {
  recorded_at?: string;
  conditions?: string;
  figures: Record<string, number>;
}

/** The recorded block, or empty figures when the page or the block is missing or unreadable. */
function readRecorded(doc: string): Recorded {
  const start = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (start < 0 || end < start) return { figures: {} };
  const block = doc.slice(start + BEGIN.length, end).replace(/```json|```/g, "").trim();
  try {
    const parsed = JSON.parse(block) as Recorded;
    return { ...parsed, figures: parsed.figures ?? {} };
  } catch {
    return { figures: {} };
  }
}

/** `doc` with its recorded block replaced by `recorded`. */
function writeRecorded(doc: string, recorded: Recorded): string {
  const start = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (start < 0 || end < start) {
    throw new Error(`docs/performance.md has no ${BEGIN} … ${END} block to update`);
  }
  // Laid out as `deno fmt` leaves it, so an update keeps `deno fmt --check` passing.
  const body = "```json\n" + JSON.stringify(recorded, null, 2) + "\n```";
  return doc.slice(0, start + BEGIN.length) + "\n\n" + body + "\n\n" + doc.slice(end);
}

/**
 * Run one benchmark in its own process tree within `boundS` seconds (a tree that overruns is
 * ended whole, the servers it started included); its output, or why there is none.
 */
async function runBench(
  bench: Bench,
  boundS: number,
): Promise<{ out: string; problem?: string; s: number }> {
  const t0 = performance.now();
  const { child, end } = hostLauncher.launch([Deno.execPath(), "run", "-A", ...bench.args], {
    cwd: join(here, ".."),
    env: { NO_COLOR: "1", RUST_BACKTRACE: "0", BENCH_TRASH: TRASH },
  });
  let overran = false;
  const timer = setTimeout(() => {
    overran = true;
    end(5_000, false).catch(() => {});
  }, boundS * 1000);
  const [status, out, err] = await Promise.all([
    child.status,
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
  ]);
  clearTimeout(timer);
  const s = (performance.now() - t0) / 1000;
  if (overran) return { out, s, problem: `over its ${boundS.toFixed(0)} s bound` };
  if (!status.success) {
    const last = (err.trim() || out.trim()).split("\n").pop()?.slice(0, 120) ?? "";
    return { out, s, problem: `exit ${status.code}: ${last}` };
  }
  return { out, s };
}

function format(v: number | undefined, unit: string): string {
  if (v === undefined) return "n/a";
  const digits = unit === "×" || v < 10 ? 1 : 0;
  return `${v.toFixed(digits)}${unit === "/s" ? "/s" : unit === "×" ? "×" : ` ${unit}`}`;
}

function goalText(f: Figure): string {
  if (f.goal === undefined) return "—";
  return `${f.aim === "min" ? "≥" : "≤"} ${format(f.goal, f.unit)}`;
}

/**
 * Every benchmark's temporary tree is set aside here and deleted only after the last figure
 * (bench/_bench_dir.ts says why: on a journal-less ext4 one benchmark's deletions would slow the
 * next one's file creation for minutes).
 */
const TRASH = await Deno.makeTempDir({ prefix: "bench-summary-trash-" });
/** The physical floors, measured before the benchmarks and again after them. */
const FLOORS: Bench = {
  name: "floors",
  args: ["bench/floors.ts"],
  timeoutS: 60,
  figures: [],
  read: () => ({}),
};

/** The floors' line, or why there is none. */
async function floorsLine(boundS: number): Promise<string> {
  const { out, problem } = await runBench(FLOORS, boundS);
  return problem ? `floors: n/a (${problem})` : out.trim();
}

const skip = new Set(values.skip.split(",").map((s) => s.trim()).filter(Boolean));
const doc = await Deno.readTextFile(DOC).catch(() => "");
const recorded = readRecorded(doc);
const load = () => Deno.loadavg().map((l) => l.toFixed(1)).join(" ");
const loadBefore = load();
const now: Record<string, number> = {};
const problems: string[] = [];
const t0 = performance.now();
const floorsBefore = await floorsLine(60);
for (const bench of BENCHES) {
  if (skip.has(bench.name)) {
    problems.push(`${bench.name}: skipped (--skip)`);
    continue;
  }
  const left = TOTAL_S - (performance.now() - t0) / 1000;
  if (left < 20) {
    problems.push(`${bench.name}: not run (the summary's ${TOTAL_S} s are spent)`);
    continue;
  }
  const { out, problem, s } = await runBench(bench, Math.min(bench.timeoutS, left));
  if (problem) problems.push(`${bench.name}: ${problem}`);
  const read = bench.read(out);
  for (const f of bench.figures) {
    const v = read[f.key];
    if (v !== undefined && Number.isFinite(v)) now[f.key] = v;
  }
  console.error(
    `bench:summary: ${bench.name} took ${s.toFixed(0)} s${problem ? ` (${problem})` : ""}`,
  );
}
const conditions =
  `${navigator.hardwareConcurrency} cores, load average ${loadBefore} before and ${load()} after, ` +
  `${((performance.now() - t0) / 1000).toFixed(0)} s in all`;

const rows = BENCHES.flatMap((b) => b.figures).map((f) => {
  const v = now[f.key];
  const goal = f.goal;
  const met = v === undefined || goal === undefined
    ? ""
    : (f.aim === "min" ? v >= goal : v <= goal)
    ? "✔"
    : "✘";
  return [
    f.label,
    `${format(v, f.unit)} ${met}`.trim(),
    goalText(f),
    format(recorded.figures[f.key], f.unit),
  ];
});
const head = [
  "figure",
  "now",
  "goal",
  `last recorded${recorded.recorded_at ? ` (${recorded.recorded_at.slice(0, 10)})` : ""}`,
];
const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i])).join(" | ");
console.log(`bench:summary — quick benchmarks, ${conditions}`);
console.log(line(head));
console.log(widths.map((w) => "-".repeat(w)).join("-|-"));
for (const r of rows) console.log(line(r));
for (const p of problems) console.log(`note: ${p}`);
console.log(floorsBefore.replace(/^floors/, "floors before the benchmarks"));
const floorsLeft = TOTAL_S - (performance.now() - t0) / 1000;
if (floorsLeft >= 20) {
  console.log(
    (await floorsLine(Math.min(60, floorsLeft))).replace(
      /^floors/,
      "floors after them",
    ),
  );
}
const removal = performance.now();
await Deno.remove(TRASH, { recursive: true }).catch(() => {});
console.error(
  `bench:summary: the benchmarks' temporary trees removed in ${
    ((performance.now() - removal) / 1000).toFixed(1)
  } s`,
);
console.log("A figure never fails CI (machines are noisy); what bounds each: docs/performance.md.");

if (values.update) {
  const ran = BENCHES.filter((b) => b.figures.some((f) => now[f.key] !== undefined));
  const next: Recorded = {
    recorded_at: new Date().toISOString(),
    // Figures not measured now keep their earlier values: say which ones these conditions cover.
    conditions: `${conditions}; measured: ${ran.map((b) => b.name).join(", ") || "none"}`,
    figures: { ...recorded.figures, ...now },
  };
  await Deno.writeTextFile(DOC, writeRecorded(doc, next));
  console.log(`docs/performance.md: recorded ${Object.keys(now).length} figures`);
}
