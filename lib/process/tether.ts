/**
 * A tether between the service and one process tree it started (lib/process/tree.ts), so that
 * the tree dies with the service even when the service is killed with SIGKILL and so runs none
 * of its own code: a `service worker` or `service run` killed with `kill -9` must not leave its
 * agents running and writing into their worktrees, or reporting with their tokens.
 *
 * The tether is a small fixed `sh` (its own session, so a Ctrl-C or hangup of the terminal does
 * not reach it; no marker of the tree, so it is never one of the processes it ends) whose standard
 * input is a pipe only the service holds. It blocks reading that pipe — an event, not a poll:
 *
 * - {@link Tether.release}, once the tree has ended under the service's eye, writes one line and
 *   closes the pipe: the tether exits and touches nothing;
 * - when the service dies, the kernel closes its end of the pipe and the tether reads the end of
 *   its input with no line: it sends SIGTERM to the tree's process group and to every process
 *   carrying the tree's marker variable (a descendant that called `setsid`), and after a second
 *   SIGKILL to whatever of them is left (looked up again).
 *
 * Only `/proc` (Linux) finds the marked processes; elsewhere the group alone is ended.
 *
 * A tether costs a spawn and, at its release, the wait for its exit (under a load of 25 on two
 * cores, 19 ms and 80 ms): {@link tetherAfter} ties only trees that live past a short delay, so the
 * many short commands (git, chown, a runtime's `rm`) pay nothing, and an agent, a gate or a tunnel
 * is tied within a second of its start.
 */
import { spawnNewSession } from "./new_session.ts";

/** Seconds an orphaned tree has between SIGTERM and SIGKILL: no one waits for its output. */
const ORPHAN_GRACE_S = 1;

/**
 * The tether's program (`$1` the process group, `$2` the marker variable's name or empty). The
 * marked processes are those whose environment holds the exact entry `<marker>=1`.
 */
const TETHER_SCRIPT = [
  "trap '' INT HUP QUIT",
  "IFS= read -r _ && exit 0",
  'marked() { [ -n "$2" ] || return 0; grep -lsxzF -e "$2=1" /proc/[0-9]*/environ | ' +
  'while IFS=/ read -r _ _ pid _; do echo "$pid"; done; }',
  'kill -TERM -- "-$1" 2>/dev/null',
  'for p in $(marked "$@"); do kill -TERM "$p" 2>/dev/null; done',
  `sleep ${ORPHAN_GRACE_S}`,
  'kill -KILL -- "-$1" 2>/dev/null',
  'for p in $(marked "$@"); do kill -KILL "$p" 2>/dev/null; done',
  "exit 0",
].join("\n");

/** What ties one tree to the life of this process. */
export interface Tether {
  /** The tether's own pid (for tests), undefined when none could be started. */
  readonly pid: number | undefined;
  /**
   * The tree ended under the service's eye: let the tether go without touching anything, and
   * resolve once it has exited. Idempotent; never throws.
   */
  release(): Promise<void>;
}

/** The tree a tether ends when this process dies. */
export interface TetheredTree {
  /** Its process group (the spawned child's pid). */
  pgid: number;
  /** Its marker variable's name (lib/process/tree.ts), when it has one. */
  marker?: string;
}

const untethered: Tether = { pid: undefined, release: () => Promise.resolve() };

/**
 * Tie `tree` to the life of this process. Best effort: where no tether can start (Windows, no
 * `sh`), the tree is ended only by the service itself, as before.
 */
export function tether(tree: TetheredTree): Tether {
  if (Deno.build.os === "windows") return untethered;
  let child: Deno.ChildProcess;
  try {
    child = spawnNewSession(
      ["sh", "-c", TETHER_SCRIPT, "service-tether", String(tree.pgid), tree.marker ?? ""],
      {
        clearEnv: true,
        env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" },
        stdin: "piped",
        stdout: "null",
        stderr: "null",
      },
    );
  } catch {
    return untethered;
  }
  const input = child.stdin.getWriter();
  let released: Promise<void> | undefined;
  return {
    pid: child.pid,
    release() {
      return released ??= (async () => {
        await input.write(new TextEncoder().encode("released\n")).catch(() => {});
        await input.close().catch(() => {});
        await child.status.catch(() => {});
      })();
    },
  };
}

/** How long a tree runs untethered by default: a shorter one costs nothing, a longer one is tied. */
export const TETHER_AFTER_MS = 1000;

/**
 * {@link tether} `tree` once it has run `afterMs` (0: now); its release also cancels a tether not
 * made yet.
 */
export function tetherAfter(tree: TetheredTree, afterMs = TETHER_AFTER_MS): Tether {
  if (afterMs <= 0) return tether(tree);
  let tied: Tether | undefined;
  let released = false;
  const timer = setTimeout(() => {
    if (!released) tied = tether(tree);
  }, afterMs);
  Deno.unrefTimer(timer); // a pending tether never keeps the service alive
  return {
    get pid() {
      return tied?.pid;
    },
    release() {
      released = true;
      clearTimeout(timer);
      return tied?.release() ?? Promise.resolve();
    },
  };
}
