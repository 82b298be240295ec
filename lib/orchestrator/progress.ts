/**
 * Live progress of a run: one line per event, and a status summary (tasks by status, running
 * agents with elapsed time and last log line, spend) every few seconds — redrawn in place on a
 * terminal, printed as plain lines elsewhere.
 */
import { logTail } from "../agents/process.ts";
import type { TaskStore } from "../tasks/store.ts";
import type { Orchestrator } from "./orchestrator.ts";

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

  /** One event line, time-stamped relative to the start of the run. */
  event(line: string): void {
    const t = Math.round((Date.now() - this.#started) / 1000);
    this.#out(`[${String(t).padStart(4)}s] ${line}`);
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
    for (const agent of orchestrator.liveAgents()) {
      // A remote worker's agent has no log here until it reports: say where it runs instead.
      const last = agent.worker ? `on worker ${agent.worker}` : (await logTail(
        `${runtimeDir}/${agent.sessionId}.log`,
        1,
      ).catch(() => [""]))[0] ?? "";
      lines.push(
        `  ${agent.taskId} (${agent.sessionId}) ${agent.elapsedS}s  ${last.slice(0, 100)}`,
      );
    }
    const text = lines.join("\n");
    if (text === this.#lastSummary && (final || !this.#tty)) return;
    this.#lastSummary = text;
    this.#out(text);
  }
}
