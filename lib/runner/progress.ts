/**
 * Live progress of a run: one line per event, and a status summary (tasks by status, running
 * agents with elapsed time and last log line, spend) every few seconds — redrawn in place on a
 * terminal, printed as plain lines elsewhere.
 */
import { logTail } from "../agents/process.ts";
import { printable, printableLines, withoutColours } from "../util/printable.ts";
import type { TaskStore } from "../tasks/store.ts";
import type { Orchestrator } from "../orchestrator/orchestrator.ts";

interface Source {
  store: TaskStore;
  runtimeDir: string;
  taskIds: string[];
  orchestrator: Orchestrator;
}

/** Summarise counts like `2 open · 1 running · 3 closed`. */
function formatCounts(counts: Record<string, number>): string {
  const order = [
    "OPEN",
    "BLOCKED",
    "CLAIMED",
    "IN_PROGRESS",
    "DONE",
    "ORPHANED",
    "CLOSED",
    "FAILED",
    "CANCELLED",
  ];
  return order.filter((s) => counts[s]).map((s) => `${counts[s]} ${s.toLowerCase()}`).join(" · ") ||
    "no tasks";
}

/**
 * The line of a log's tail that says what the agent is doing: the last one with a word in it,
 * not the `}` or `)` that closes a stack trace or a multi-line object a CLI printed; trimmed.
 */
export function progressLine(tail: readonly string[]): string {
  return (tail.findLast((l) => /[\p{L}\p{N}]{2}/u.test(l)) ?? tail.at(-1) ?? "").trim();
}

/** At most this many waiting tasks are named in a summary; the rest are counted. */
const WAITS_SHOWN = 3;

/** `  <task> waits: <why>` for the first few waiting tasks (their words escaped). */
export function waitLines(waits: Record<string, string>): string[] {
  const entries = Object.entries(waits);
  const lines = entries.slice(0, WAITS_SHOWN).map(([id, why]) =>
    `  ${printable(id)} waits: ${printable(why.slice(0, 160))}`
  );
  if (entries.length > WAITS_SHOWN) {
    lines.push(`  … and ${entries.length - WAITS_SHOWN} more waiting`);
  }
  return lines;
}

/** Writes events and periodic summaries. */
export class ProgressDisplay {
  readonly #out: (line: string) => void;
  readonly #runId: string;
  readonly #started = Date.now();
  readonly #tty = Deno.stdout.isTerminal() && !Deno.env.get("CI");
  #timer?: ReturnType<typeof setInterval>;
  #source?: () => Source;
  #lastSummary = "";

  constructor(out: (line: string) => void, runId: string) {
    this.#out = out;
    this.#runId = runId;
  }

  /**
   * One event, time-stamped relative to the start of the run. Its text may carry what an agent,
   * a tracker or a host wrote (a summary, a log tail, an error): it is escaped line by line, and
   * a line after the first is set under the time stamp behind `│`, so no text of theirs can
   * start a line of its own (a fake "every task landed") or reach the terminal as a control.
   */
  event(line: string): void {
    const [first, ...rest] = printableLines(line);
    const stamp = this.#stamp();
    const gutter = `${" ".repeat(stamp.length)} │ `;
    this.#out([`${stamp} ${first}`, ...rest.map((l) => gutter + l)].join("\n"));
  }

  /** A line the service composed and coloured itself (the verification alert), time-stamped. */
  notice(line: string): void {
    this.#out(`${this.#stamp()} ${line}`);
  }

  #stamp(): string {
    return `[${String(Math.round((Date.now() - this.#started) / 1000)).padStart(4)}s]`;
  }

  /** Start periodic summaries. */
  start(source: () => Source): void {
    this.#source = source;
    this.#timer = setInterval(() => this.#summary(), this.#tty ? 2000 : 10_000);
  }

  /** Stop periodic summaries (prints a last one, unless it would repeat the line just printed). */
  stop(): void {
    clearInterval(this.#timer);
    this.#summary(true);
  }

  async #summary(final = false): Promise<void> {
    if (!this.#source) return;
    const { store, runtimeDir, taskIds, orchestrator } = this.#source();
    const counts: Record<string, number> = {};
    for (const id of taskIds) {
      const status = store.get(id)?.status;
      if (status) counts[status] = (counts[status] ?? 0) + 1;
    }
    const lines = [
      `run ${this.#runId} · ${Math.round((Date.now() - this.#started) / 1000)}s · ${
        formatCounts(counts)
      }`,
    ];
    const live = orchestrator.liveAgents();
    // With no agent at work, the run is waiting on something: say what, or "1 done" every ten
    // seconds reads as a run that hangs (a review on the board, a cooldown, a merge).
    if (live.length === 0) lines.push(...waitLines(orchestrator.waitingReasons()));
    for (const agent of live) {
      // A remote worker's agent has no log here until it reports: say where it runs instead.
      const last = agent.worker ? `on worker ${agent.worker}` : progressLine(
        await logTail(`${runtimeDir}/${agent.sessionId}.log`, 8).catch(() => []),
      );
      // The agent's own last words: escaped, never a control sequence or a line of their own.
      lines.push(
        `  ${agent.taskId} (${agent.sessionId}) ${agent.elapsedS}s  ${
          printable(withoutColours(last).slice(0, 100))
        }`,
      );
    }
    const text = lines.join("\n");
    if (text === this.#lastSummary && (final || !this.#tty)) return;
    this.#lastSummary = text;
    this.#out(text);
  }
}
