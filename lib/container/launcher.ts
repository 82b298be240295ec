/**
 * The container {@link Launcher} of lib/process: a program runs as `<runtime> run --rm …
 * <image> sh -c <entry> <argv>` (lib/container/run_args.ts, entry.ts), attached, so the
 * runtime's command is the host process whose output is read and whose exit is the program's.
 * It is ended by `<runtime> stop --time <grace>` (SIGTERM to the program, SIGKILL after the
 * grace), then its command's tree like any host process, then `<runtime> rm --force`. Its
 * standard input is a pipe the service holds: when the service dies, the entry script's
 * watchdog ends the container. Secrets never reach an argv: each variable is passed by name and
 * its value given to the runtime's command in its environment. A container can be started ahead
 * of need ({@link HoldingLauncher.hold}): the same command, whose entry script waits for `go` on
 * that input before the program runs, so the runtime's create and start overlap the service's
 * other work (the worktree's setup) instead of following it. With podman 4 and a `stateDir`, the
 * program's exit is the container's death as conmon learns it (lib/container/death_watch.ts) and
 * its output ends at a marker written after it (lib/container/output_end.ts): the task goes on
 * while `podman run` still removes the container (lib/container/early_end.ts, teardowns.ts).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Launched, Launcher, LaunchOptions } from "../process/launcher.ts";
import { spawnNewSession } from "../process/new_session.ts";
import { endTree, inheritedTreeMarkers, newTreeMarker, outputPipes } from "../process/tree.ts";
import { type ContainerEnd, containerEnd } from "./early_end.ts";
import { entryArgv, GO_LINE } from "./entry.ts";
import type { Relay } from "./network.ts";
import { runArgs, type RunSpec } from "./run_args.ts";
import { type ContainerRuntime, runtimeCall } from "./runtime.ts";
import { runtimeCwd } from "./runtime_cwd.ts";

/**
 * Variables whose names the runtime's own command also uses (its HOME is where rootless podman
 * keeps its storage): given to the container as literal values. The service sets them to
 * container paths, never to secrets.
 */
const LITERAL_ENV = new Set(["PATH", "HOME", "USER", "TMPDIR", "LANG", "XDG_RUNTIME_DIR"]);

/** What every container of one launcher shares; `run` gets the name, workdir, env and argv. */
export type ContainerBase = Omit<RunSpec, "name" | "workdir" | "envNames" | "envValues" | "argv">;

/** Options of {@link containerLauncher}. */
export interface ContainerLauncherOptions {
  runtime: ContainerRuntime;
  /** The runtime command's own environment (lib/container/runtime.ts runtimeEnvironment). */
  runtimeEnv: Record<string, string>;
  base: ContainerBase;
  /** Listeners the entry script starts (the restricted network). */
  relays: readonly Relay[];
  /** The name of the next container (unique on the host). */
  name: () => string;
  /** Runs once each launched container has ended (lib/process/launcher.ts `finish`). */
  finish?: () => Promise<void>;
  /**
   * A directory of the service's, mounted nowhere, for conmon's PID files: with podman 4 or
   * later a container's death is then learned from conmon (lib/container/death_watch.ts) and its
   * task goes on while `podman run` still removes it (lib/container/teardowns.ts).
   */
  stateDir?: string;
}

/**
 * Where the conmon of container `name` writes its PID (none left from an earlier container of
 * that name), when its death can be learned first: podman 4 or later (the `passthrough` log
 * driver) and a `stateDir`.
 */
/**
 * conmon's working directory for the container of `conmonPidfile`: conmon creates an empty `oom`
 * file there when the kernel's OOM killer ends a process of the container (runtime_cwd.ts), which
 * is how the service learns that an agent ran out of memory.
 */
function conmonWorkDir(conmonPidfile: string): string {
  const dir = `${conmonPidfile}.cwd`;
  Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
  try {
    Deno.removeSync(join(dir, "oom"));
  } catch { /* none */ }
  return dir;
}

function conmonPidfileOf(o: ContainerLauncherOptions, name: string): string | undefined {
  const podman4 = o.runtime.name === "podman" && Number(o.runtime.version.split(".")[0]) >= 4;
  if (o.stateDir === undefined || !podman4) return undefined;
  const path = join(o.stateDir, `${name}.conmon-pid`);
  Deno.mkdirSync(o.stateDir, { recursive: true, mode: 0o700 });
  try {
    Deno.removeSync(path);
  } catch { /* none */ }
  return path;
}

/** Split a container environment into names passed on and literal values. Pure. */
export function splitEnvironment(env: Record<string, string>): {
  names: string[];
  values: Record<string, string>;
  secrets: Record<string, string>;
} {
  const names: string[] = [];
  const values: Record<string, string> = {};
  const secrets: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (LITERAL_ENV.has(k)) values[k] = v;
    else {
      names.push(k);
      secrets[k] = v;
    }
  }
  return { names, values, secrets };
}

/** A {@link Launcher} whose next container can be started ahead of need. */
export interface HoldingLauncher extends Launcher {
  /**
   * Start the container of `argv` now, held at its entry (lib/container/entry.ts) until `launch`
   * is called with the same argv, working directory and environment, which lets it go: the
   * runtime's create, start and the relays' start run while the service does other work.
   * `extraSeconds` lengthens the runtime's own time limit by the longest the hold can last (the
   * limit counts from the container's start).
   */
  hold(argv: readonly string[], options: LaunchOptions, extraSeconds?: number): void;
  /**
   * Whether the kernel's OOM killer ended a process of the last container launched, as conmon
   * recorded it by the time the container ended (podman 4 with a `stateDir`; else false).
   */
  outOfMemory(): boolean;
  /**
   * End a held container that was never let go (its input closes: it ends before its command
   * runs, and the runtime removes it) and resolve once it is gone. Nothing when none is held.
   */
  discard(): Promise<void>;
}

/** How long a discarded held container has to end by itself (its input closed) before it is stopped. */
const DISCARD_MS = 30_000;

/** A container's runtime command, started. */
interface Started extends ContainerEnd {
  name: string;
  child: Deno.ChildProcess;
  input: WritableStreamDefaultWriter<Uint8Array>;
  stop(graceMs: number): Promise<boolean>;
  tree: { pgid: number; marker: string; pipes: string[] };
  /** Whether conmon has recorded an OOM kill in the container. */
  oomKilled(): boolean;
}

/** A {@link Launcher} that runs each program in a new container of `o.base`. */
/**
 * How a container is ended: `stop` with the grace, then `rm --force`; asked again without a
 * grace while that runs (a second Ctrl-C), SIGKILL at once. Resolves true when the runtime's
 * SIGKILL ended it. Nothing is done for a container already over (`over`).
 */
function containerStop(c: {
  bin: string;
  name: string;
  runtimeEnv: Record<string, string>;
  /** Its command exited with the container's own code (`--rm` removed it), or it is dead. */
  over: () => boolean;
}): (graceMs: number) => Promise<boolean> {
  const call = (args: string[], timeoutMs: number) =>
    runtimeCall(c.bin, args, { env: c.runtimeEnv, timeoutMs });
  let stopping: Promise<boolean> | undefined;
  let forced = false;
  return (graceMs) => {
    if (stopping && graceMs === 0 && !forced && !c.over()) {
      forced = true;
      call(["kill", "--signal", "KILL", c.name], 60_000).catch(() => {});
    }
    return stopping ??= (async () => {
      if (c.over()) return false;
      const started = performance.now();
      const graceS = Math.max(0, Math.ceil(graceMs / 1000));
      await call(["stop", "--time", String(graceS), c.name], graceMs + 60_000);
      // The runtime sends SIGKILL when the grace runs out.
      const killed = graceS > 0 && performance.now() - started >= graceS * 1000 - 100;
      await call(["rm", "--force", c.name], 60_000);
      return killed;
    })();
  };
}

export function containerLauncher(o: ContainerLauncherOptions): HoldingLauncher {
  const bin = o.runtime.bin;
  const start = (
    argv: readonly string[],
    options: LaunchOptions,
    held: { extraSeconds: number } | undefined,
  ): Started => {
    const name = o.name();
    const conmonPidfile = conmonPidfileOf(o, name);
    const workDir = conmonPidfile && conmonWorkDir(conmonPidfile);
    const { names, values, secrets } = splitEnvironment(options.env ?? {});
    const maxSeconds = o.base.maxSeconds === undefined
      ? undefined
      : o.base.maxSeconds + (held?.extraSeconds ?? 0);
    const args = runArgs({
      ...o.base,
      ...(maxSeconds === undefined ? {} : { maxSeconds }),
      name,
      workdir: options.cwd ?? "/",
      envNames: names,
      envValues: values,
      argv: entryArgv(o.relays, argv, held !== undefined),
      ...(conmonPidfile ? { conmonPidfile } : {}),
    });
    const marker = newTreeMarker();
    const child = spawnNewSession([bin, ...args], {
      // Not the checkout: conmon leaves `oom` in its working directory (runtime_cwd.ts).
      cwd: workDir ?? runtimeCwd(),
      clearEnv: true,
      env: { ...o.runtimeEnv, ...secrets, ...inheritedTreeMarkers(), [marker]: "1" },
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    });
    // Held open, never written but for `go`: its end is the watchdog's signal that the service
    // is gone.
    const input = child.stdin.getWriter();
    let exited: Deno.CommandStatus | undefined;
    child.status.then((s) => exited = s, () => {});
    const end = containerEnd(child, conmonPidfile);
    const stop = containerStop({
      bin,
      name,
      runtimeEnv: o.runtimeEnv,
      over: () => (exited !== undefined && exited.signal === null) || end.dead(),
    });
    const tree = { pgid: child.pid, marker, pipes: outputPipes(child.pid) };
    const oomKilled = () => workDir !== undefined && existsSync(join(workDir, "oom"));
    return { name, child, ...end, input, stop, tree, oomKilled };
  };
  let outOfMemory = false;
  const launched = (s: Started): Launched => ({
    child: s.child,
    // Read when it ends: the session's files, conmon's directory with them, go after it.
    exited: s.exited.then((status) => {
      outOfMemory = s.oomKilled();
      return status;
    }),
    output: s.output,
    async end(graceMs, withPipes) {
      const killedInside = await s.stop(graceMs);
      // A dead container's command is left to remove it (lib/container/teardowns.ts).
      const killedOutside = s.dead() ? false : await endTree(s.tree, { graceMs: 2000, withPipes });
      await s.input.close().catch(() => {});
      return killedInside || killedOutside;
    },
    async finish() {
      await s.input.close().catch(() => {});
      await o.finish?.();
    },
  });
  let held: { key: string; started: Started } | undefined;
  const keyOf = (argv: readonly string[], options: LaunchOptions) =>
    JSON.stringify([argv, options.cwd ?? "/", options.env ?? {}]);
  return {
    outOfMemory: () => outOfMemory,
    hold(argv, options, extraSeconds = 0) {
      if (held) throw new Error(`a container is already held (${held.started.name})`);
      held = { key: keyOf(argv, options), started: start(argv, options, { extraSeconds }) };
    },
    launch(argv, options) {
      if (!held) return launched(start(argv, options, undefined));
      const { key, started } = held;
      if (key !== keyOf(argv, options)) {
        throw new Error(
          `container ${started.name} was started for another command or environment than the ` +
            "one launched; it is discarded with the session",
        );
      }
      held = undefined;
      // A container that already ended (the runtime refused it) says why through its status.
      started.input.write(new TextEncoder().encode(GO_LINE)).catch(() => {});
      return launched(started);
    },
    async discard() {
      const s = held?.started;
      if (!s) return;
      await s.input.close().catch(() => {});
      let timeout: ReturnType<typeof setTimeout> | undefined;
      const gone = await Promise.race([
        s.child.status.then(() => true, () => true),
        new Promise<false>((r) => timeout = setTimeout(() => r(false), DISCARD_MS)),
      ]);
      clearTimeout(timeout);
      if (!gone) {
        await s.stop(0);
        await endTree(s.tree, { graceMs: 2000, withPipes: true });
      }
      await s.output.stdout.cancel().catch(() => {});
      await s.output.stderr.cancel().catch(() => {});
      held = undefined;
    },
  };
}
