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
 * `/proc/<pid>/stat` fields 3 (state) and 9 (flags), or undefined where there is no procfs or
 * the process is gone. The command name (field 2) may hold spaces and parentheses, so the
 * fields are read after its last `)`.
 */
function procStat(pid: number): { state: string; flags: number } | undefined {
  if (Deno.build.os !== "linux") return undefined;
  let text: string;
  try {
    text = Deno.readTextFileSync(`/proc/${pid}/stat`);
  } catch {
    return undefined;
  }
  return parseProcStat(text);
}

/** The state and flags of one `/proc/<pid>/stat` line (pure). */
export function parseProcStat(text: string): { state: string; flags: number } | undefined {
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  const flags = Number(fields[6]);
  if (!fields[0] || !Number.isFinite(flags)) return undefined;
  return { state: fields[0], flags };
}
