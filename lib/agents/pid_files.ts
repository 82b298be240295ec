/** PID metadata of spawned agents: `.sdd/runtime/pids/<session>.json` (spec "Log and state"). */
import { join } from "node:path";
import type { WorkspacePaths } from "../workspace.ts";
import { processAlive } from "../util/process_alive.ts";

/** One PID file and whether its process still runs. */
export interface AgentProcess {
  file: string;
  session_id: string;
  pid: number | null;
  task_id: string | null;
  role: string | null;
  adapter: string | null;
  started_at: string | null;
  alive: boolean;
  /** Set when the file could not be read as PID metadata. */
  problem?: string;
}

/** `.sdd/runtime/pids`. */
export function pidDir(paths: WorkspacePaths): string {
  return paths.pids;
}

const str = (v: unknown): string | null => (typeof v === "string" ? v : null);

/** Read every PID file, sorted by session id. */
export async function readPidFiles(paths: WorkspacePaths): Promise<AgentProcess[]> {
  const dir = pidDir(paths);
  const out: AgentProcess[] = [];
  let entries: Deno.DirEntry[];
  try {
    entries = await Array.fromAsync(Deno.readDir(dir));
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return [];
    throw e;
  }
  for (const entry of entries) {
    if (!entry.isFile || !entry.name.endsWith(".json")) continue;
    const file = join(dir, entry.name);
    const session = entry.name.slice(0, -5);
    try {
      const raw = JSON.parse(await Deno.readTextFile(file));
      const pid = Number.isInteger(raw?.pid) && raw.pid > 0 ? raw.pid as number : null;
      out.push({
        file,
        session_id: str(raw?.session_id) ?? session,
        pid,
        task_id: str(raw?.task_id),
        role: str(raw?.role),
        adapter: str(raw?.adapter) ?? str(raw?.cli),
        // The orchestrator writes epoch seconds (runtime_files.ts); older files held ISO text.
        started_at: typeof raw?.started_at === "number"
          ? new Date(raw.started_at * 1000).toISOString()
          : str(raw?.started_at),
        alive: pid !== null && processAlive(pid),
        problem: pid === null ? "no valid pid" : undefined,
      });
    } catch (e) {
      out.push({
        file,
        session_id: session,
        pid: null,
        task_id: null,
        role: null,
        adapter: null,
        started_at: null,
        alive: false,
        problem: `unreadable: ${(e as Error).message}`,
      });
    }
  }
  return out.sort((a, b) => a.session_id.localeCompare(b.session_id));
}
