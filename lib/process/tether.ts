/**
 * The tether between this process and the process trees it started (lib/process/tree.ts), so that
 * a tree dies with the service even when the service is killed with SIGKILL and so runs none of
 * its own code: a `service worker` or `service run` killed with `kill -9` must not leave its
 * agents running and writing into their worktrees, or reporting with their tokens.
 *
 * ONE tether per process, started with its first tree: a small fixed `sh` (its own session, so a
 * Ctrl-C or hangup of the terminal does not reach it; no tree's marker, so it is never one of the
 * processes it ends) whose standard input is a pipe only this process holds. It keeps the list of
 * the trees still running, written to it as lines — `+ <pgid> <start> <marker>` when a tree
 * starts, `- <pgid>` when its main process has exited or the service has ended it — and blocks
 * reading: an event, not a poll. When this process exits, however it exits, the kernel closes its
 * end of the pipe and the tether reads the end of its input:
 *
 * - with no tree listed (the service ended or saw the end of each one) it exits at once and
 *   touches nothing;
 * - otherwise it sends SIGTERM to each listed tree's process group and to every process carrying
 *   a listed marker variable (a descendant that called `setsid`), and after a second SIGKILL to
 *   whatever of them is left (looked up again).
 *
 * Why one and not one per tree: a tether per tree costs a spawn per tree and, at its release, the
 * wait for its exit (19 ms and 80 ms under a load of 25 on two cores), and each one a release
 * missed keeps a shell blocked on a pipe of the service. One tether costs one spawn per process,
 * a tree costs two short writes, and there is never more than one to leak: it is `unref`ed, so it
 * never keeps the service's event loop alive, and it ends when the service does.
 *
 * A group is signalled only while it is the tree's: its leader is the tree's own process (same
 * start time, read at spawn) or gone — a group outlives its leader only with members of its own,
 * and its id cannot be reused while it has any. So a tree whose end the tether had not heard of
 * yet (the service died between the reap and the `-` line) never costs another program its group.
 *
 * Only `/proc` (Linux) finds the marked processes and start times; elsewhere the group alone is
 * ended. Windows has no tether: a tree there is ended only by the service itself.
 */
import { spawnNewSession } from "./new_session.ts";

/** Seconds an orphaned tree has between SIGTERM and SIGKILL: no one waits for its output. */
const ORPHAN_GRACE_S = 1;

/**
 * The tether's program (`$1` the pid of the process it serves, shown by `ps`). Each tree is kept
 * as ` pgid:start:marker` (`-` for a start or marker not known). The marked processes are those
 * whose environment holds the exact entry `<marker>=1`.
 */
const TETHER_SCRIPT = [
  "trap '' INT HUP QUIT",
  "trees=' '",
  "while IFS=' ' read -r op pgid start marker; do",
  "  case $op in",
  '    +) trees="$trees$pgid:$start:$marker " ;;',
  '    -) case $trees in *" $pgid:"*) keep=${trees%%" $pgid:"*}; rest=${trees#*" $pgid:"}; ' +
  'trees="$keep ${rest#* }" ;; esac ;;',
  "  esac",
  "done",
  '[ "$trees" = " " ] && exit 0',
  // The group's leader is the tree's process, or gone (then the group, if any, is the tree's).
  'ours() { [ "$2" = - ] && return 0; { IFS= read -r s < "/proc/$1/stat"; } 2>/dev/null || ' +
  'return 0; t=$2; s=${s##*) }; set -- $s; [ "${20}" = "$t" ]; }',
  "marked() { [ -d /proc ] || return 0; set --; for e in $trees; do m=${e##*:}; " +
  '[ "$m" = - ] || set -- "$@" -e "$m=1"; done; [ $# -gt 0 ] || return 0; ' +
  'grep -lsxzF "$@" /proc/[0-9]*/environ | while IFS=/ read -r _ _ pid _; do echo "$pid"; done; }',
  "fire() { for e in $trees; do pgid=${e%%:*}; rest=${e#*:}; " +
  'ours "$pgid" "${rest%%:*}" && kill -s "$1" -- "-$pgid" 2>/dev/null; done; ' +
  'for p in $(marked); do kill -s "$1" "$p" 2>/dev/null; done; }',
  "fire TERM",
  `sleep ${ORPHAN_GRACE_S}`,
  "fire KILL",
  "exit 0",
].join("\n");

/** The tree a tether ends when this process dies. */
export interface TetheredTree {
  /** Its process group (the spawned child's pid). */
  pgid: number;
  /** Its leader's start time (lib/process/tree.ts startTicks), when it could be read. */
  startTicks?: number;
  /** Its marker variable's name (lib/process/tree.ts), when it has one. */
  marker?: string;
}

/** What ties one tree to the life of this process. */
export interface Tie {
  /**
   * The tree's main process has exited, or the service has ended the tree: the tether forgets
   * it and will signal nothing of it. Idempotent; never throws.
   */
  release(): void;
}

/** The running tether and the line writer to it. */
interface TetherProcess {
  readonly child: Deno.ChildProcess;
  readonly input: WritableStreamDefaultWriter<Uint8Array>;
  alive: boolean;
}

/** Trees tied and not released, by process group: what the tether's list holds. */
const tied = new Map<number, string>();
let current: TetherProcess | undefined;
const encoder = new TextEncoder();
/** The last line written (lines are written in order): settled, all before it are in the pipe. */
let lastWrite: Promise<void> = Promise.resolve();

/**
 * Start the tether program with its standard input piped (exported for tests, which write its
 * lines themselves); throws when it cannot start.
 */
export function spawnTether(owner = Deno.pid): Deno.ChildProcess {
  return spawnNewSession(["sh", "-c", TETHER_SCRIPT, "service-tether", String(owner)], {
    clearEnv: true,
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" },
    stdin: "piped",
    stdout: "null",
    stderr: "null",
  });
}

function send(to: TetherProcess, line: string): void {
  // Queued, written in a moment (the pipe has no synchronous write here): a tree is tied once
  // its line is in the pipe, which the tether reads even after this process is gone.
  lastWrite = to.input.write(encoder.encode(line)).catch(() => {}); // gone: its trees are untied
}

/**
 * This process's tether, started when there is none (or it was killed: the trees still listed
 * are written to the new one). Undefined when none can start (no `sh`).
 */
function tetherProcess(): TetherProcess | undefined {
  if (current?.alive) return current;
  let child: Deno.ChildProcess;
  try {
    child = spawnTether();
  } catch {
    return undefined;
  }
  child.unref(); // neither it nor its pipe keeps this process alive: its exit is the signal
  const started: TetherProcess = { child, input: child.stdin.getWriter(), alive: true };
  child.status.then(() => started.alive = false, () => started.alive = false);
  current = started;
  if (tied.size > 0) send(started, [...tied.values()].join(""));
  return started;
}

/**
 * Tie `tree` to the life of this process until {@link Tie.release}. Best effort: where no tether
 * can start (Windows, no `sh`), the tree is ended only by the service itself, as before.
 */
export function tie(tree: TetheredTree): Tie {
  if (Deno.build.os === "windows") return { release() {} };
  const entry = `+ ${tree.pgid} ${tree.startTicks ?? "-"} ${tree.marker ?? "-"}\n`;
  const to = tetherProcess();
  tied.set(tree.pgid, entry);
  if (to) send(to, entry);
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      if (tied.get(tree.pgid) !== entry) return;
      tied.delete(tree.pgid);
      if (current?.alive) send(current, `- ${tree.pgid}\n`);
    },
  };
}

/** The process groups of the trees tied and not released (for tests). */
export function tiedGroups(): number[] {
  return [...tied.keys()];
}

/** Resolves once every line queued so far is in the tether's pipe (for tests). */
export function tetherWritten(): Promise<void> {
  return lastWrite;
}

/** The pid of this process's running tether (for tests), undefined when none runs. */
export function tetherPid(): number | undefined {
  return current?.alive ? current.child.pid : undefined;
}
