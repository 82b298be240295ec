/** Human rendering of the status object for `service status` (pure). */
import type { StartFailure } from "../runs/start_failure.ts";
import { formatUsd } from "../cost/money.ts";
import { durationWords } from "../util/duration_words.ts";
import type { VerificationNudge } from "../verification/nudge_types.ts";
import { ADD_EVIDENCE } from "../verification/advice.ts";
import type { GuardedTask } from "./guarded.ts";
import { type TicketMoveFailure, ticketMoveLines } from "./ticket_moves.ts";
import { writeBackLines, type WriteBackWait } from "./tracker_write_back.ts";
import type { GitSetupChanges } from "../runs/git_setup_words.ts";
import { gitSetupWarning } from "../runs/git_setup_words.ts";
import { type OutsideCommitsStatus, outsideCommitsWarning } from "../runs/outside_commits_words.ts";
import { printable } from "../util/printable.ts";
import { type Quietness, RECONNECT_NOTICE_S, reconnectWords } from "../agents/progress_watch.ts";
import { sizeText } from "../util/size_words.ts";

/** A parked adapter as the status object holds it. */
interface Parked {
  adapter: string;
  remaining_s: number;
  until: string;
  reset_named?: boolean;
}

/** A batch request in flight as the status object holds it. */
interface InFlight {
  task_id: string;
  provider: string;
  batch_id: string;
  model: string;
  age_s: number;
}

/** Colour functions (identity when colours are off). */
export interface Palette {
  red: (s: string) => string;
  yellow: (s: string) => string;
  green: (s: string) => string;
  bold: (s: string) => string;
}

/**
 * The verification line: red ALERT when exceeded (with `advice`, lib/verification/advice.ts),
 * yellow notice when anything is unverified.
 */
export function verificationLine(
  n: VerificationNudge,
  p: Palette,
  advice: string = ADD_EVIDENCE,
): string | undefined {
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  const recent = n.recent_unverified.length ? ` Recent: ${n.recent_unverified.join(", ")}.` : "";
  if (n.threshold_exceeded) {
    return p.red(
      `ALERT: ${n.unverified_count} of ${n.total_completions} completions unverified ` +
        `(${pct(n.unverified_ratio)} > threshold ${pct(n.nudge_threshold)}).${recent} ${advice}`,
    );
  }
  if (n.unverified_count > 0) {
    return p.yellow(
      `notice: ${n.unverified_count} of ${n.total_completions} completions unverified ` +
        `(${pct(n.unverified_ratio)}; threshold ${pct(n.nudge_threshold)}).${recent}`,
    );
  }
  return undefined;
}

/**
 * What `status` says of tasks whose diff touches protected paths or leaves its owned_files (file
 * names are the agent's choice: the caller's palette escapes each line).
 */
export function guardedLines(tasks: GuardedTask[] | undefined): string[] {
  const list = (paths: string[]) =>
    paths.slice(0, 8).join(", ") +
    (paths.length > 8 ? ` and ${paths.length - 8} more` : "");
  const lines: string[] = [];
  for (const t of tasks ?? []) {
    if (t.protected_error) {
      lines.push(
        `  ${t.task_id} PROTECTED: ${t.protected_error}; it lands only on an ` +
          "operator's merge",
      );
    } else if (t.protected_paths?.length) {
      const landing = t.state === "needs_review"
        ? "it waits for an operator's merge on the board"
        : `it lands only on an operator's merge (${t.state.replace("_", " ")})`;
      lines.push(
        `  ${t.task_id} PROTECTED: its diff changes ${list(t.protected_paths)}; ${landing}`,
      );
    }
    const big = t.oversized_files;
    if (big) {
      const more = (big.files_total ?? big.files.length) - Math.min(big.files.length, 8);
      const files = big.files.slice(0, 8).map((f) => `${f.path} (${sizeText(f.bytes)})`)
        .join(", ") + (more > 0 ? ` and ${more} more` : "");
      const limit = big.limit_bytes === undefined ? "" : ` (${sizeText(big.limit_bytes)})`;
      const landing = t.state === "needs_review"
        ? "it waits for an operator's merge on the board"
        : `it lands only on an operator's merge (${t.state.replace("_", " ")})`;
      lines.push(
        `  ${t.task_id} OVERSIZED: its diff adds or grows ${files}, over ` +
          `max_landed_file_mb${limit}; ${landing}`,
      );
    }
    const owned = t.owned_files_exceeded;
    if (owned) {
      lines.push(
        `  ${t.task_id} OUTSIDE OWNED FILES: its diff changes ${list(owned.paths)} outside ` +
          `owned_files (${list(owned.owned_files)})` +
          (owned.enforced ? "; refused (enforce_owned_files)" : "; flagged"),
      );
    }
  }
  return lines;
}

/**
 * `p` that escapes first (lib/util/printable.ts): what a status line holds may come from an
 * agent, a tracker, a host or a server (a reason, a worker's name), so each line is one escaped
 * line before it is coloured.
 */
function escaping(p: Palette): Palette & { plain: (s: string) => string } {
  return {
    red: (s) => p.red(printable(s)),
    yellow: (s) => p.yellow(printable(s)),
    green: (s) => p.green(printable(s)),
    bold: (s) => p.bold(printable(s)),
    plain: printable,
  };
}

/** All lines of the human status (each one line, whatever the status object holds). */
export function formatStatus(
  status: Record<string, unknown>,
  source: string,
  palette: Palette,
): string[] {
  const p = escaping(palette);
  return [
    p.bold(`service status`) + p.plain(` (${source})`),
    p.plain(`workspace: ${status.workspace}`),
    ...STATUS_SECTIONS.flatMap((section) => section(status, p)),
  ];
}

type Escaping = ReturnType<typeof escaping>;

/** The run as `status` reports it. */
type StatusRun = {
  run_id: string;
  status: string;
  alive: boolean;
  url: string;
  tasks?: Record<string, number>;
  waiting: Record<string, string>;
  failed?: Record<string, string>;
  cancelled?: Record<string, string>;
  orphaned?: Record<string, string>;
  note?: string;
  /** What to do about a run whose journal does not verify. */
  fix?: string;
};

/** The sections of the human status after its heading, in order. */
const STATUS_SECTIONS: ((status: Record<string, unknown>, p: Escaping) => string[])[] = [
  taskLines,
  runLines,
  (status, p) =>
    writeBackLines(status.tracker_write_back as WriteBackWait[] | undefined).map(p.yellow),
  gitSetupLines,
  outsideCommitsLines,
  startFailureLines,
  agentLines,
  workerPoolLines,
  (status, p) => [p.plain(`runs: ${status.runs ?? 0}`)],
  spendLines,
  rateLimitLines,
  batchLines,
  verificationLines,
];

/** The current run's tasks; every run's only when there is no run, or as a total beside it. */
function taskLines(status: Record<string, unknown>, p: Escaping): string[] {
  const all = status.tasks as Record<string, number> | undefined;
  const run = status.run as StatusRun | null | undefined;
  const counted = run?.tasks ?? all;
  if (!counted) return [];
  const parts = Object.entries(counted).filter(([k, v]) => k !== "total" && v > 0)
    .map(([k, v]) => `${k.toLowerCase()} ${v}`);
  const whose = run?.tasks ? ` in run ${run.run_id}` : "";
  const others = run?.tasks && all && all.total !== run.tasks.total
    ? `; ${all.total} in the workspace, every run`
    : "";
  return [p.plain(
    `tasks: ${counted.total ?? 0}${whose}${parts.length ? ` (${parts.join(", ")})` : ""}${others}`,
  )];
}

function runLines(status: Record<string, unknown>, p: Escaping): string[] {
  const run = status.run as StatusRun | null | undefined;
  if (!run) return [];
  const state = run.status === "running" && run.alive
    ? `running at ${run.url}`
    : run.note ?? run.status;
  const lines = [p.plain(`run: ${run.run_id} (${state})`)];
  if (run.status === "unverified") {
    lines[0] = p.red(`run: ${run.run_id} (${state})`);
    if (run.fix) lines.push(p.plain(`  fix: ${run.fix}`));
  }
  for (const [task, reason] of Object.entries(run.failed ?? {})) {
    lines.push(p.red(`  ${task} FAILED: ${reason}`));
  }
  for (const [task, reason] of Object.entries(run.cancelled ?? {})) {
    lines.push(p.plain(`  ${task} CANCELLED: ${reason}`));
  }
  for (const [task, reason] of Object.entries(run.orphaned ?? {})) {
    lines.push(p.yellow(`  ${task} ORPHANED: ${reason}`));
  }
  for (const [task, reason] of Object.entries(run.waiting ?? {})) {
    lines.push(p.yellow(`  ${task} ${reason.startsWith("blocked") ? "is" : "waits:"} ${reason}`));
  }
  for (const line of guardedLines(status.guarded as GuardedTask[] | undefined)) {
    lines.push(p.red(line));
  }
  const moves = status.ticket_moves as TicketMoveFailure[] | undefined;
  for (const line of ticketMoveLines(moves)) lines.push(p.yellow(line));
  return lines;
}

/** The latest run's changes to the repository's command-running git setup (lib/status/git_setup.ts). */
function gitSetupLines(status: Record<string, unknown>, p: Escaping): string[] {
  const setup = status.git_setup as GitSetupChanges | null | undefined;
  if (!setup?.changes?.length) return [];
  const lines = gitSetupWarning(setup.changes, setup.since_run_began, setup.run_id);
  return lines.map((line, i) => i === lines.length - 1 ? p.plain(line) : p.red(line));
}

/** Commits the latest run's branch gained that the service did not make (lib/status/outside_commits.ts). */
function outsideCommitsLines(status: Record<string, unknown>, p: Escaping): string[] {
  const part = status.outside_commits as OutsideCommitsStatus | null | undefined;
  if (!part) return [];
  const lines = outsideCommitsWarning(part, part.run_id);
  return lines.map((line, i) => i === lines.length - 1 ? p.plain(line) : p.red(line));
}

function startFailureLines(status: Record<string, unknown>, p: Escaping): string[] {
  const notStarted = status.start_failure as StartFailure | null | undefined;
  if (!notStarted) return [];
  return [p.red(
    `last run did not start (${notStarted.at}): ${notStarted.error}: ${notStarted.message}` +
      (notStarted.fix ? `; fix: ${notStarted.fix}` : ""),
  )];
}

function agentLines(status: Record<string, unknown>, p: Escaping): string[] {
  const agents = status.agents as unknown[] | undefined;
  const remote = status.workers as
    | { task_id: string; worker: string; session_id: string }[]
    | undefined;
  return [
    p.plain(
      `agents: ${agents?.length ?? 0} live` +
        (remote?.length ? `, ${remote.length} on remote workers` : ""),
    ),
    ...((agents ?? []) as LiveAgent[]).map((a) => liveAgentLine(a, p)),
    ...(remote ?? []).map((r) =>
      p.plain(`  ${r.task_id}: on worker ${r.worker} (session ${r.session_id})`)
    ),
  ];
}

/** A live agent as the status object has it (lib/status/parts.ts). */
interface LiveAgent extends Partial<Quietness> {
  session_id: string;
  task_id?: string | null;
  adapter?: string | null;
}

/**
 * A live agent's line: its task, adapter and how long since its last output; in yellow when it
 * has only reconnected to its model for a minute or more (its endpoint may be down).
 */
function liveAgentLine(a: LiveAgent, p: Escaping): string {
  // `p` escapes what it paints (a task id may be a ticket's).
  const who = `  ${a.task_id ?? "?"}: ${a.adapter ?? "agent"} session ${a.session_id}`;
  const output = a.last_output_age_s === undefined
    ? ""
    : a.last_output_age_s === null
    ? ", no output yet"
    : `, last output ${durationWords(a.last_output_age_s)} ago`;
  if (a.reconnecting && a.reconnecting.for_s >= RECONNECT_NOTICE_S) {
    return p.yellow(`${who}${output}; ${reconnectWords(a.reconnecting)}`);
  }
  return p.plain(`${who}${output}`);
}

/** A worker as `GET /status` lists it (`worker_pool`). */
interface PoolWorker {
  name: string;
  state: string;
  slots: number;
  free: number;
  heartbeat_age_s: number;
  cordoned?: { reason: string; by: string };
  draining?: { by: string };
  cannot_start?: { adapter: string; problem: string }[];
}

/** The remote workers: each one's state, a cordon's reason, what one cannot start. */
function workerPoolLines(status: Record<string, unknown>, p: Escaping): string[] {
  const pool = status.worker_pool as PoolWorker[] | undefined;
  if (!pool?.length) return [];
  const lines = [p.plain(
    `workers: ${
      pool.map((w) =>
        `${w.name} ${w.state} (${w.free}/${w.slots} free, seen ${w.heartbeat_age_s} s ago)`
      ).join(", ")
    }`,
  )];
  for (const w of pool) {
    if (w.cordoned) {
      lines.push(p.red(`  ${w.name} CORDONED by ${w.cordoned.by}: ${w.cordoned.reason}`));
    }
    if (w.draining) lines.push(p.yellow(`  ${w.name} draining (asked by ${w.draining.by})`));
    for (const c of w.cannot_start ?? []) {
      lines.push(p.yellow(`  ${w.name} cannot start ${c.adapter}: ${c.problem}`));
    }
  }
  return lines;
}

function spendLines(status: Record<string, unknown>, p: Escaping): string[] {
  const spend = status.spend as
    | { total_micro_usd: number; budget_micro_usd: number | null; over_budget: boolean }
    | { error: string; fix: string }
    | undefined;
  if (!spend) return [];
  if ("error" in spend) return [p.red(`spend: ${spend.error}; fix: ${spend.fix}`)];
  const budget = spend.budget_micro_usd === null
    ? "no budget"
    : `budget ${formatUsd(spend.budget_micro_usd)}`;
  const line = `spend: ${formatUsd(spend.total_micro_usd)} (${budget})`;
  return [spend.over_budget ? p.red(`${line}: budget reached, read-only mode`) : p.plain(line)];
}

function rateLimitLines(status: Record<string, unknown>, p: Escaping): string[] {
  const cooldowns = (status.rate_limits as { cooldowns?: Parked[] } | undefined)?.cooldowns ?? [];
  if (!cooldowns.length) return [];
  return [
    p.yellow(`rate limits: ${cooldowns.length} adapter(s) parked`),
    ...cooldowns.map((c) => {
      const why = c.reset_named ? "the reset time its limit names" : "rate-limit cooldown";
      return p.yellow(
        `  ${c.adapter} parked until ${c.until} (${why}; back in ${durationWords(c.remaining_s)})`,
      );
    }),
  ];
}

function batchLines(status: Record<string, unknown>, p: Escaping): string[] {
  const lines: string[] = [];
  const lane = status.batches as { in_flight?: InFlight[]; error?: string } | undefined;
  if (lane?.error) lines.push(p.red(`batches: ${lane.error}; \`service run\` moves it aside`));
  const batches = lane?.in_flight ?? [];
  if (!batches.length) return lines;
  const byBatch = new Map<string, InFlight[]>();
  for (const b of batches) byBatch.set(b.batch_id, [...(byBatch.get(b.batch_id) ?? []), b]);
  lines.push(
    p.plain(`batches: ${batches.length} request(s) in flight in ${byBatch.size} batch(es)`),
  );
  for (const [id, reqs] of byBatch) {
    lines.push(p.plain(
      `  ${id} (${reqs[0].provider}, ${reqs[0].model}): ${reqs.map((r) => r.task_id).join(", ")}` +
        ` — submitted ${durationWords(Math.max(...reqs.map((r) => r.age_s)))} ago`,
    ));
  }
  return lines;
}

function verificationLines(status: Record<string, unknown>, p: Escaping): string[] {
  const nudge = status.verification_nudge as VerificationNudge | undefined;
  if (!nudge) return [];
  const lines = [p.plain(
    `verification: ${nudge.verified_count}/${nudge.total_completions} completions verified`,
  )];
  const advice = status.verification_advice;
  const v = verificationLine(nudge, p, typeof advice === "string" ? advice : undefined);
  if (v) lines.push(v);
  return lines;
}
