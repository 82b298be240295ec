/**
 * The whole process tree of one spawn, found without cgroups or sessions, so that nothing it
 * started outlives it — not even a descendant that called `setsid` and so left its process group:
 *
 * 1. its process group (the spawn leads one);
 * 2. every process whose environment carries the spawn's marker variable
 *    (`SERVICE_TREE_<id>=1`, inherited across fork, exec and setsid; each spawn adds its own name,
 *    so a nested spawn's processes still carry the outer markers);
 * 3. every process holding the spawn's output pipes (found through `/proc/<pid>/fd`), which
 *    catches a descendant that also cleared its environment.
 *
 * 2 and 3 read `/proc` (Linux); elsewhere only the group is signalled. A group known only by its
 * id (an agent's PID file after the orchestrator died) is a tree without marker or pipes.
 */

/** Prefix of the marker variables. */
const TREE_MARKER_PREFIX = "SERVICE_TREE_";

/** How to find one spawn's processes. */
export interface ProcessTree {
  /** The process group (the spawned child's pid). */
  pgid: number;
  /** The marker variable's name (none for a group known only by its id). */
  marker?: string;
  /** `pipe:[inode]` links of the child's output, when they could be read at spawn. */
  pipes: string[];
  /**
   * The child's start time (`/proc/<pid>/stat`, clock ticks since boot), read at spawn: every
   * process that descends from it started no earlier, so only those are looked at for the
   * marker (issue 32: reading every process's environment at each agent's end). Absent: all.
   */
  startTicks?: number;
}

/** A fresh marker variable name for one spawn. */
export function newTreeMarker(): string {
  return `${TREE_MARKER_PREFIX}${crypto.randomUUID().replaceAll("-", "")}`;
}

/** The marker variables this process itself carries (a nested spawn keeps them). */
export function inheritedTreeMarkers(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(Deno.env.toObject())) {
    if (k.startsWith(TREE_MARKER_PREFIX)) out[k] = v;
  }
  return out;
}

const hasProc = Deno.build.os === "linux";

/** The `pipe:[inode]` links of fds 1 and 2 of `pid` (empty when unreadable). */
export function outputPipes(pid: number): string[] {
  if (!hasProc) return [];
  const links: string[] = [];
  for (const fd of [1, 2]) {
    try {
      const link = Deno.readLinkSync(`/proc/${pid}/fd/${fd}`);
      if (link.startsWith("pipe:")) links.push(link);
    } catch { /* gone already, or not ours to read */ }
  }
  return links;
}

function numericEntries(dir: string): number[] {
  const pids: number[] = [];
  try {
    for (const e of Deno.readDirSync(dir)) if (/^\d+$/.test(e.name)) pids.push(Number(e.name));
  } catch { /* no /proc */ }
  return pids;
}

/** State letter, process group and start time (clock ticks since boot) of `pid`. */
function statOf(pid: number): { state: string; pgrp: number; start: number } | undefined {
  try {
    const text = Deno.readTextFileSync(`/proc/${pid}/stat`);
    // The command name (2nd field) may hold spaces and parentheses: split after the last ")".
    // Field 3 (the state) is the first after it; field 22, the start time, the 20th.
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return { state: fields[0], pgrp: Number(fields[2]), start: Number(fields[19]) };
  } catch {
    return undefined;
  }
}

/** When `pid` started (clock ticks since boot), read as it is spawned; undefined when unreadable. */
export function startTicks(pid: number): number | undefined {
  if (!hasProc) return undefined;
  const start = statOf(pid)?.start;
  return start !== undefined && Number.isSafeInteger(start) ? start : undefined;
}

/** Scans of `/proc`, and processes' environments read in them (for tests and benchmarks). */
export const treeScanCounts = { scans: 0, environments: 0 };

function carriesMarker(pid: number, needle: Uint8Array): boolean {
  treeScanCounts.environments++;
  let env: Uint8Array;
  try {
    env = Deno.readFileSync(`/proc/${pid}/environ`);
  } catch {
    return false;
  }
  outer: for (let i = 0; i + needle.length <= env.length; i++) {
    if (i > 0 && env[i - 1] !== 0) continue; // variables start after a NUL
    for (let j = 0; j < needle.length; j++) if (env[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}

function holdsPipe(pid: number, pipes: ReadonlySet<string>): boolean {
  try {
    for (const e of Deno.readDirSync(`/proc/${pid}/fd`)) {
      try {
        if (pipes.has(Deno.readLinkSync(`/proc/${pid}/fd/${e.name}`))) return true;
      } catch { /* closed meanwhile */ }
    }
  } catch { /* gone, or not ours */ }
  return false;
}

/**
 * The live (not zombie) processes of `tree` other than this one; `withPipes` also looks for
 * holders of its output pipes (slower: it reads every process's fd table).
 */
function treeMembers(tree: ProcessTree, withPipes = false): number[] {
  if (!hasProc) return [];
  const needle = tree.marker === undefined
    ? undefined
    : new TextEncoder().encode(`${tree.marker}=`);
  treeScanCounts.scans++;
  const pipes = new Set(tree.pipes);
  // A process started before the spawn cannot descend from it: it cannot carry the marker.
  const since = tree.startTicks ?? -Infinity;
  const out: number[] = [];
  for (const pid of numericEntries("/proc")) {
    if (pid === Deno.pid) continue;
    const stat = statOf(pid);
    if (!stat || stat.state === "Z" || stat.state === "X") continue;
    const mayCarry = needle !== undefined && !(stat.start < since);
    if (
      stat.pgrp === tree.pgid || (mayCarry && carriesMarker(pid, needle)) ||
      (withPipes && pipes.size > 0 && holdsPipe(pid, pipes))
    ) out.push(pid);
  }
  return out;
}

function signal(pid: number, sig: Deno.Signal): boolean {
  try {
    Deno.kill(pid, sig);
    return true;
  } catch {
    return false; // already gone, or not ours
  }
}

/** Whether anything of the tree still runs (without /proc: whether its group still exists). */
export function treeRunning(tree: ProcessTree, withPipes = false): boolean {
  // Signal 0 only asks whether the group exists, as `kill -0` does: a group that is gone needs
  // no scan of /proc. With /proc the rest is judged by live members: an orphan the init process
  // never reaps stays a zombie in the group, and would make every end wait the whole grace.
  const groupExists = signal(-tree.pgid, 0 as unknown as Deno.Signal);
  if (!hasProc) return groupExists;
  if (!groupExists && tree.marker === undefined && !withPipes) return false;
  return treeMembers(tree, withPipes).length > 0;
}

/** Signal the group and every member found. */
function signalTree(tree: ProcessTree, sig: Deno.Signal, withPipes = false): void {
  if (Deno.build.os === "windows") return;
  signal(-tree.pgid, sig);
  for (const pid of treeMembers(tree, withPipes)) signal(pid, sig);
}

/** Options of {@link endTree}. */
export interface EndTreeOptions {
  /** Time between SIGTERM and SIGKILL. */
  graceMs: number;
  /** Also end the holders of the output pipes. */
  withPipes?: boolean;
}

/**
 * End the whole tree: SIGTERM to every member, up to `graceMs` for them to go, then SIGKILL to
 * whatever is left (looked up again: a member may have started others meanwhile). Resolves true
 * when SIGKILL was needed.
 */
export async function endTree(tree: ProcessTree, options: EndTreeOptions): Promise<boolean> {
  if (Deno.build.os === "windows") return false;
  const withPipes = options.withPipes ?? false;
  if (!treeRunning(tree, withPipes)) return false;
  signalTree(tree, "SIGTERM", withPipes);
  const deadline = performance.now() + options.graceMs;
  while (performance.now() < deadline) {
    await new Promise((r) =>
      setTimeout(r, Math.min(50, Math.max(1, deadline - performance.now())))
    );
    if (!treeRunning(tree, withPipes)) return false;
  }
  let killed = false;
  for (let round = 0; round < 3 && treeRunning(tree, withPipes); round++) {
    signalTree(tree, "SIGKILL", withPipes);
    killed = true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return killed;
}
