/**
 * How a program is started and how everything it started is ended — the one seam between
 * {@link spawnProcess} and where the program runs. {@link hostLauncher} runs it as a host process
 * leading its own session and process group, found whole by lib/process/tree.ts; the container
 * launcher (lib/container/launcher.ts) starts `podman run …` and ends it with `podman stop`.
 */
import { spawnNewSession } from "./new_session.ts";
import { endTree, inheritedTreeMarkers, newTreeMarker, outputPipes, startTicks } from "./tree.ts";
import { tie } from "./tether.ts";

/** Where and with what environment a program starts. */
export interface LaunchOptions {
  /** Working directory (default: this process's). */
  cwd?: string;
  /** Variables on top of the inherited ones (the only ones with `clearEnv`). */
  env?: Record<string, string>;
  /** Start from an empty environment. */
  clearEnv?: boolean;
}

/** A started program. */
export interface Launched {
  /** The host process whose stdout and stderr are read and whose exit is the program's. */
  child: Deno.ChildProcess;
  /**
   * End everything the program started: SIGTERM, up to `graceMs` for it to go, then SIGKILL;
   * `withPipes` also ends whatever still holds its output. Resolves true when SIGKILL was needed.
   */
  end(graceMs: number, withPipes: boolean): Promise<boolean>;
  /**
   * Runs once the program and its tree have ended, before its status is known: brings back what
   * it left where the service can use it (a container's git work). Never throws.
   */
  finish?(): Promise<void>;
  /**
   * The program's exit when it is known before `child`'s (a container dead while its runtime's
   * command still tears it down): nothing of the program runs any more once it resolves.
   */
  exited?: Promise<Deno.CommandStatus>;
  /** The program's output when it ends before `child`'s pipes do (read instead of them). */
  output?: { stdout: ReadableStream<Uint8Array>; stderr: ReadableStream<Uint8Array> };
}

/** Starts programs and ends them whole. */
export interface Launcher {
  /** Start `argv` with stdin closed and stdout and stderr piped; throws when it cannot start. */
  launch(argv: readonly string[], options: LaunchOptions): Launched;
}

/**
 * A host process in its own session and process group (new_session.ts), carrying a fresh tree marker
 * variable, so that its group, a descendant that called `setsid` and a holder of its output all
 * end with it (lib/process/tree.ts), and tied to this process's tether (./tether.ts): killed with
 * SIGKILL, the service leaves none of its trees running. The tie is let go once the program has
 * exited (what it left is then {@link Launched.end}'s to end, as spawn.ts does) or the service has
 * ended it, so no tree the service saw end is ever signalled again. Windows has no groups: only
 * the program itself is killed.
 */
export const hostLauncher: Launcher = {
  launch(argv, options) {
    const marker = newTreeMarker();
    // Deno.Command, not dax: dax signals only the direct child, and the whole tree must end.
    const child = spawnNewSession(argv, {
      cwd: options.cwd,
      clearEnv: options.clearEnv,
      env: { ...options.env, ...inheritedTreeMarkers(), [marker]: "1" },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    });
    const tree = {
      pgid: child.pid,
      marker,
      pipes: outputPipes(child.pid),
      startTicks: startTicks(child.pid),
    };
    const tied = tie(tree);
    // Its exit is seen by whoever launched it or not (a caller may never call `end`): from then
    // on its group id may be freed and reused, so the tether must forget it.
    child.status.then(() => tied.release(), () => tied.release());
    return {
      child,
      end: async (graceMs, withPipes) => {
        const killed = Deno.build.os === "windows"
          ? killChild(child)
          : await endTree(tree, { graceMs, withPipes });
        tied.release(); // the tree is over: nothing is left for the tether to end
        return killed;
      },
    };
  },
};

function killChild(child: Deno.ChildProcess): boolean {
  try {
    child.kill("SIGKILL");
    return true;
  } catch {
    return false; // already gone
  }
}
