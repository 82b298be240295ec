/**
 * Test helper: finding what a test started by a unique argument of its command line, through
 * `/proc` (Linux). Process ids a test reads from its program's output are no use when the program
 * runs in a PID namespace of its own (lib/process/pid_namespace.ts): they are the namespace's.
 */

/** A `sleep` duration no other process uses. */
export function uniqueSleep(): string {
  return `600.${crypto.getRandomValues(new Uint32Array(1))[0]}`;
}

/** The host pids of live (not zombie) processes whose command line holds `arg`. */
export function processesWith(arg: string): number[] {
  const pids: number[] = [];
  for (const e of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      const argv = Deno.readTextFileSync(`/proc/${e.name}/cmdline`).split("\0");
      const stat = Deno.readTextFileSync(`/proc/${e.name}/stat`);
      const state = stat.slice(stat.lastIndexOf(")") + 2)[0];
      if (argv.includes(arg) && state !== "Z") pids.push(Number(e.name));
    } catch { /* gone meanwhile */ }
  }
  return pids;
}

/** SIGKILL what a failed test left (the test started it; found by its unique argument). */
export function killProcessesWith(arg: string): void {
  for (const pid of processesWith(arg)) {
    try {
      Deno.kill(pid, "SIGKILL");
    } catch { /* gone meanwhile */ }
  }
}

/** The live tethers (lib/process/tether.ts) serving the process `owner`: their argv names it. */
export function tethersOf(owner: number): number[] {
  return processesWith("service-tether").filter((pid) => {
    try {
      const argv = Deno.readTextFileSync(`/proc/${pid}/cmdline`).split("\0");
      return argv[argv.indexOf("service-tether") + 1] === String(owner);
    } catch {
      return false; // gone meanwhile
    }
  });
}

/** Make a named pipe at `path` (a test's event: its writers and readers wait on each other). */
export async function mkfifo(path: string): Promise<void> {
  const out = await new Deno.Command("mkfifo", { args: [path] }).output();
  if (out.code !== 0) throw new Error(`mkfifo ${path}: exit ${out.code}`);
}

/** Whether `promise` settles within `ms` (its timer cleared either way). */
export async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise.then(() => true, () => true),
      new Promise<false>((r) => timer = setTimeout(() => r(false), ms)),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
