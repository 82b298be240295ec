/**
 * Whether a process exists, without disturbing it (signal 0, as `kill -0` does). A process that
 * was killed but whose parent has not collected it yet (a zombie) still answers signal 0; it
 * runs nothing and holds nothing, so it counts as gone. Linux says so in `/proc/<pid>/stat`.
 */

/** True when a process with `pid` runs (one owned by another user counts; a zombie does not). */
export function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    Deno.kill(pid, 0 as unknown as Deno.Signal);
  } catch (e) {
    if (!(e instanceof Deno.errors.PermissionDenied)) return false;
  }
  const stat = procStat(pid);
  return stat === undefined || (stat.state !== "Z" && stat.state !== "X");
}

/**
 * True while a process is on its way out: killed (`kill -9`) or returning from `exit`, but not
 * yet gone from the process table (the kernel is still releasing its memory and files).
 */
export function processExiting(pid: number): boolean {
  const stat = procStat(pid);
  return stat !== undefined && (stat.flags & PF_EXITING) !== 0;
}

/** The kernel's "getting shut down" task flag (include/linux/sched.h). */
const PF_EXITING = 0x4;

/**
 * When a process started, in clock ticks after boot (`/proc/<pid>/stat` field 22): with its pid
 * it names one process, so a record of it is not mistaken for a later process that reused the
 * pid. Undefined where there is no procfs or the process is gone.
 */
export function processStartTicks(pid: number): number | undefined {
  return procStat(pid)?.startTicks;
}

/** What {@link procStat} reads. */
export interface ProcStat {
  /** Field 3: R, S, D, Z, X … */
  state: string;
  /** Field 9: the kernel's task flags. */
  flags: number;
  /** Field 22: start time in clock ticks after boot (undefined when the line is short). */
  startTicks?: number;
}

/**
 * `/proc/<pid>/stat` fields 3 (state), 9 (flags) and 22 (start time), or undefined where there
 * is no procfs or the process is gone. The command name (field 2) may hold spaces and
 * parentheses, so the fields are read after its last `)`.
 */
function procStat(pid: number): ProcStat | undefined {
  if (Deno.build.os !== "linux") return undefined;
  let text: string;
  try {
    text = Deno.readTextFileSync(`/proc/${pid}/stat`);
  } catch {
    return undefined;
  }
  return parseProcStat(text);
}

/** The state, flags and start time of one `/proc/<pid>/stat` line (pure). */
export function parseProcStat(text: string): ProcStat | undefined {
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  const flags = Number(fields[6]);
  if (!fields[0] || !Number.isFinite(flags)) return undefined;
  const start = Number(fields[19]);
  return { state: fields[0], flags, ...(Number.isInteger(start) ? { startTicks: start } : {}) };
}
