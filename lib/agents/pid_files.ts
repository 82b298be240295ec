/**
 * The one reader of agents' PID files, `.sdd/runtime/pids/<session>.json` (spec "Log and state"),
 * written by ./runtime_files.ts. `service run`, `service stop`, `doctor`, `ps`, `agents` and
 * `/status` all read them here, so they agree on which agents live and which files are stale.
 */
import { join } from "node:path";
import type { WorkspacePaths } from "../workspace.ts";
import { processAlive } from "../util/process_alive.ts";
import { endTree, treeRunning } from "../process/tree.ts";
import { type RecordedContainer, removeContainer, settleSession } from "../container/reap.ts";

/** One PID file and whether its agent still runs. */
export interface AgentProcess {
  file: string;
  session_id: string;
  pid: number | null;
  /** Process group of the agent's tree (agents lead their own group), null when unknown. */
  pgid: number | null;
  task_id: string | null;
  role: string | null;
  adapter: string | null;
  run_id: string | null;
  /** ISO time the agent started, or null when unknown. */
  started_at: string | null;
  /** The session's log, when the file names one. */
  log_path: string | null;
  /** The agent's container, when it ran in one. */
  container?: RecordedContainer;
  /** True while the agent's process, or any process of its group, exists. */
  alive: boolean;
  /** Set when the file could not be read as PID metadata. */
  problem?: string;
}

const str = (v: unknown): string | null => (typeof v === "string" ? v : null);
// Group 1 (init) or 0 would signal far more than one agent's tree: never trusted.
const processId = (v: unknown): number | null =>
  Number.isInteger(v) && (v as number) > 1 ? v as number : null;

/** The entry of one PID file's text. Pure but for the liveness probe. */
export function pidFileEntry(file: string, session: string, text: string): AgentProcess {
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(text);
    if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
      throw new Error("not a JSON object");
    }
  } catch (e) {
    return {
      file,
      session_id: session,
      pid: null,
      pgid: null,
      task_id: null,
      role: null,
      adapter: null,
      run_id: null,
      started_at: null,
      log_path: null,
      alive: false,
      problem: `unreadable: ${(e as Error).message}`,
    };
  }
  const pid = processId(raw.pid);
  const pgid = processId(raw.pgid);
  const c = raw.container as Record<string, unknown> | undefined;
  const container = c && typeof c.runtime === "string" && typeof c.name === "string"
    ? { runtime: c.runtime, name: c.name }
    : undefined;
  return {
    file,
    session_id: str(raw.session_id) ?? session,
    pid,
    pgid,
    task_id: str(raw.task_id),
    role: str(raw.role),
    adapter: str(raw.adapter) ?? str(raw.cli),
    run_id: str(raw.run_id),
    // The orchestrator writes epoch seconds (runtime_files.ts); older files held ISO text.
    started_at: typeof raw.started_at === "number"
      ? new Date(raw.started_at * 1000).toISOString()
      : str(raw.started_at),
    log_path: str(raw.log_path),
    ...(container ? { container } : {}),
    alive: (pgid !== null && treeRunning({ pgid, pipes: [] })) ||
      (pid !== null && processAlive(pid)),
    problem: pid === null ? "no valid pid" : undefined,
  };
}

/** Read every PID file, sorted by session id; a missing directory is no agents. */
export async function readPidFiles(paths: WorkspacePaths): Promise<AgentProcess[]> {
  const out: AgentProcess[] = [];
  let entries: Deno.DirEntry[];
  try {
    entries = await Array.fromAsync(Deno.readDir(paths.pids));
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return [];
    // A file where the directory belongs holds no agent: reported, and removed by the reaper.
    if (e instanceof Deno.errors.NotADirectory) {
      return [pidFileEntry(paths.pids, "pids", "not a directory")];
    }
    throw e;
  }
  for (const entry of entries) {
    if (!entry.isFile || !entry.name.endsWith(".json")) continue;
    const file = join(paths.pids, entry.name);
    let text: string;
    try {
      text = await Deno.readTextFile(file);
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) continue; // removed while listing
      throw e;
    }
    out.push(pidFileEntry(file, entry.name.slice(0, -5), text));
  }
  return out.sort((a, b) => a.session_id.localeCompare(b.session_id));
}

/**
 * End what is left of agents whose orchestrator is gone and remove every PID file: a live group
 * gets SIGTERM, then SIGKILL after `graceMs`; an agent's container is stopped and removed, and
 * its git work brought back (lib/container/reap.ts). `onSurvivor` is told before each group is
 * signalled. Returns the entries handled. Only call it when no orchestrator runs.
 */
export async function reapPidFiles(
  paths: WorkspacePaths,
  graceMs: number,
  onSurvivor: (agent: AgentProcess) => void = () => {},
): Promise<AgentProcess[]> {
  const agents = await readPidFiles(paths);
  for (const agent of agents) {
    const group = agent.pgid === null ? undefined : { pgid: agent.pgid, pipes: [] };
    if (group && treeRunning(group)) {
      onSurvivor(agent);
      await endTree(group, { graceMs });
    }
    if (agent.container) {
      await removeContainer(agent.container, graceMs);
      await settleSession(paths.runtime, agent.session_id).catch(() => {});
    }
    await Deno.remove(agent.file).catch((e) => {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    });
  }
  return agents;
}

/** Sessions whose agent (a PID file's process group) still runs; none when unreadable. */
export async function liveAgentSessions(paths: WorkspacePaths): Promise<Set<string>> {
  const agents = await readPidFiles(paths).catch(() => []);
  return new Set(agents.filter((a) => a.alive).map((a) => a.session_id));
}
