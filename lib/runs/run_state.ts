/**
 * The run state, `.sdd/runtime/orchestrator.json`: the latest run, the process running it,
 * the URL it serves and how it ended. `stop` signals a running one; `run` resumes a run whose
 * tasks are not all finished (same journal) after recovering its agents' work; `status` shows
 * why its tasks wait, also after it ended.
 */
import type { WorkspacePaths } from "../workspace.ts";
import { writeFileAtomic } from "../util/atomic_write.ts";

/** Contents of `.sdd/runtime/orchestrator.json`. */
export interface RunState {
  run_id: string;
  pid: number;
  plan: string;
  /** `sha256:` digest of the plan file the run was started from. */
  plan_sha256?: string;
  url: string;
  /** Epoch seconds. */
  started_at: number;
  status: "running" | "stopped" | "completed" | "failed";
  /** Why tasks of the run wait (a slot, a cooldown, the budget, a merge that would touch the user's changes …). */
  waiting?: Record<string, string>;
  /** How many of the run's tasks were unfinished when its process ended (absent while it runs). */
  unfinished?: number;
}

/**
 * What becomes of a stopped run, said once for the terminal, `service stop` and `status`: the
 * next `service run` resumes it only while it has unfinished tasks (an older state file, which
 * does not say, is taken to have some).
 */
export function stoppedOutcome(state: Pick<RunState, "unfinished">): string {
  if (state.unfinished === 0) {
    return "stopped with every task finished; the next `service run` starts a new run";
  }
  const count = state.unfinished === undefined ? "" : ` (${state.unfinished} unfinished task(s))`;
  return `stopped; \`service run\` resumes it${count}`;
}

/** `.sdd/runtime/orchestrator.json`. */
function runStatePath(paths: WorkspacePaths): string {
  return paths.runState;
}

/** The run state, or undefined when no run is in progress or resumable. */
export async function readRunState(paths: WorkspacePaths): Promise<RunState | undefined> {
  try {
    return JSON.parse(await Deno.readTextFile(runStatePath(paths)));
  } catch (e) {
    if (e instanceof Deno.errors.NotFound || e instanceof SyntaxError) return undefined;
    throw e;
  }
}

/** Write the run state atomically. */
export async function writeRunState(paths: WorkspacePaths, state: RunState): Promise<void> {
  await Deno.mkdir(paths.runtime, { recursive: true });
  await writeFileAtomic(runStatePath(paths), JSON.stringify(state, null, 2) + "\n");
}

/** A new run id, sortable by time: `run-20261121-101500-3fa2`. */
export function newRunId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  return `run-${stamp}-${crypto.randomUUID().slice(0, 4)}`;
}
