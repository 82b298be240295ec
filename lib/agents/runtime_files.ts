/**
 * Runtime state of live agents: PID metadata `.sdd/runtime/pids/<session>.json` and heartbeats
 * `.sdd/runtime/heartbeats/<session>.json`, each written atomically (temp file + rename) but not
 * synced (lib/util/replace_file.ts): they describe processes, which a power loss ends too, and a
 * crash of the service alone leaves them as written.
 */
import { join } from "node:path";
import { replaceFile } from "../util/replace_file.ts";

/** PID metadata of one agent session. */
export interface PidRecord {
  session_id: string;
  pid: number;
  /** Process group id (equal to pid: agents run in their own group). */
  pgid: number;
  adapter: string;
  task_id?: string;
  /** The task's role (shown by `ps`). */
  role?: string;
  run_id?: string;
  command: string[];
  log_path: string;
  /** Epoch seconds. */
  started_at: number;
  /** The agent's container, when it runs in one: the reaper removes it (DESIGN.md §14). */
  container?: { runtime: string; name: string };
}

/** Live progress of one agent session (rewritten every 15 s, spec §8). */
export interface HeartbeatRecord {
  session_id: string;
  pid: number;
  alive: boolean;
  /** Epoch seconds of the last byte the agent wrote, null before any output. */
  last_output_at: number | null;
  /** Epoch seconds of its last line that was not a reconnect notice (lib/agents/progress_watch.ts). */
  last_progress_at?: number | null;
  /** Reconnecting to its model since `since` (epoch seconds); `message` is its latest notice. */
  reconnecting?: { since: number; message: string };
  log_bytes: number;
  /** Epoch seconds of this write. */
  updated_at: number;
}

/** `.sdd/runtime/pids/<session>.json` under `runtimeDir` (`.sdd/runtime`). */
function pidFilePath(runtimeDir: string, sessionId: string): string {
  return join(runtimeDir, "pids", `${sessionId}.json`);
}

/** `.sdd/runtime/heartbeats/<session>.json` under `runtimeDir`. */
function heartbeatFilePath(runtimeDir: string, sessionId: string): string {
  return join(runtimeDir, "heartbeats", `${sessionId}.json`);
}

/** `.sdd/runtime/<session>.log` under `runtimeDir`. */
export function sessionLogPath(runtimeDir: string, sessionId: string): string {
  return join(runtimeDir, `${sessionId}.log`);
}

function writeJson(path: string, value: unknown): Promise<void> {
  try {
    replaceFile(path, JSON.stringify(value, null, 2) + "\n");
    return Promise.resolve();
  } catch (e) {
    return Promise.reject(e);
  }
}

/** Write the PID file of a session. */
export async function writePidFile(runtimeDir: string, record: PidRecord): Promise<string> {
  const path = pidFilePath(runtimeDir, record.session_id);
  await writeJson(path, record);
  return path;
}

/** Write the heartbeat file of a session. */
export async function writeHeartbeat(runtimeDir: string, record: HeartbeatRecord): Promise<string> {
  const path = heartbeatFilePath(runtimeDir, record.session_id);
  await writeJson(path, record);
  return path;
}

/** Remove a session's PID file (on `stop` or after the agent ended); missing is fine. */
export async function removePidFile(runtimeDir: string, sessionId: string): Promise<void> {
  await Deno.remove(pidFilePath(runtimeDir, sessionId)).catch((e) => {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  });
}

/** Read a session's heartbeat file; undefined when it is missing or unreadable. */
export async function readHeartbeat(
  runtimeDir: string,
  sessionId: string,
): Promise<HeartbeatRecord | undefined> {
  try {
    const raw = JSON.parse(await Deno.readTextFile(heartbeatFilePath(runtimeDir, sessionId)));
    return raw && typeof raw === "object" ? raw as HeartbeatRecord : undefined;
  } catch {
    return undefined;
  }
}
