/**
 * The container {@link Launcher} of lib/process: a program runs as `<runtime> run --rm …
 * <image> sh -c <entry> <argv>` (lib/container/run_args.ts, entry.ts), attached, so the
 * runtime's command is the host process whose output is read and whose exit is the program's.
 * It is ended by `<runtime> stop --time <grace>` (SIGTERM to the program, SIGKILL after the
 * grace), then its command's tree like any host process, then `<runtime> rm --force`. Its
 * standard input is a pipe the service holds: when the service dies, the entry script's
 * watchdog ends the container. Secrets never reach an argv: each variable is passed by name and
 * its value given to the runtime's command in its environment.
 */
import type { Launcher } from "../process/launcher.ts";
import { spawnNewSession } from "../process/new_session.ts";
import { endTree, inheritedTreeMarkers, newTreeMarker, outputPipes } from "../process/tree.ts";
import { entryArgv } from "./entry.ts";
import type { Relay } from "./network.ts";
import { runArgs, type RunSpec } from "./run_args.ts";
import { type ContainerRuntime, runtimeCall } from "./runtime.ts";

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

/** A {@link Launcher} that runs each program in a new container of `o.base`. */
export function containerLauncher(o: ContainerLauncherOptions): Launcher {
  const bin = o.runtime.bin;
  return {
    launch(argv, options) {
      const name = o.name();
      const { names, values, secrets } = splitEnvironment(options.env ?? {});
      const args = runArgs({
        ...o.base,
        name,
        workdir: options.cwd ?? "/",
        envNames: names,
        envValues: values,
        argv: entryArgv(o.relays, argv),
      });
      const marker = newTreeMarker();
      const child = spawnNewSession([bin, ...args], {
        clearEnv: true,
        env: { ...o.runtimeEnv, ...secrets, ...inheritedTreeMarkers(), [marker]: "1" },
        stdin: "piped",
        stdout: "piped",
        stderr: "piped",
      });
      // Held open, never written: its end is the watchdog's signal that the service is gone.
      const input = child.stdin.getWriter();
      let exited: Deno.CommandStatus | undefined;
      child.status.then((s) => exited = s, () => {});
      const tree = { pgid: child.pid, marker, pipes: outputPipes(child.pid) };
      let stopping: Promise<boolean> | undefined;
      const stop = (graceMs: number) =>
        stopping ??= (async () => {
          // The command exited with the container's own code: `--rm` has removed it.
          if (exited && exited.signal === null) return false;
          const started = performance.now();
          const graceS = Math.max(0, Math.ceil(graceMs / 1000));
          await runtimeCall(bin, ["stop", "--time", String(graceS), name], {
            env: o.runtimeEnv,
            timeoutMs: graceMs + 60_000,
          });
          // The runtime sends SIGKILL when the grace runs out.
          const killed = graceS > 0 && performance.now() - started >= graceS * 1000 - 100;
          await runtimeCall(bin, ["rm", "--force", name], { env: o.runtimeEnv, timeoutMs: 60_000 });
          return killed;
        })();
      return {
        child,
        async end(graceMs, withPipes) {
          const killedInside = await stop(graceMs);
          const killedOutside = await endTree(tree, { graceMs: 2000, withPipes });
          await input.close().catch(() => {});
          return killedInside || killedOutside;
        },
        async finish() {
          await input.close().catch(() => {});
          await o.finish?.();
        },
      };
    },
  };
}
