/**
 * CPU time of this process's threads, from Linux's `/proc/self/task/<tid>/stat` (user + system,
 * in clock ticks of 10 ms): the event loop's thread (whose id is the process's) apart from all
 * the others (V8's helpers, Deno's blocking pool, workers). Unlike a profile's busy time it does
 * not count what a thread waits for (a child's start, a sync, being descheduled on a busy
 * machine), so it moves less with the load. Undefined off Linux.
 */

/** CPU milliseconds used so far: the event loop's thread and the whole process. */
export interface ThreadCpu {
  main: number;
  process: number;
}

const TICK_MS = 10; // USER_HZ is 100 on every Linux build Deno supports

/** utime + stime of a `stat` line, in ms (fields 14 and 15, after the command's parentheses). */
function cpuOf(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}

/** The CPU used so far, or undefined where /proc cannot say. */
export function threadCpu(): ThreadCpu | undefined {
  try {
    const main = cpuOf(Deno.readTextFileSync(`/proc/self/task/${Deno.pid}/stat`));
    const process = cpuOf(Deno.readTextFileSync("/proc/self/stat"));
    return { main, process };
  } catch {
    return undefined;
  }
}
