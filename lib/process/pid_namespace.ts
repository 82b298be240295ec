/**
 * A host launcher whose program runs in a PID namespace of its own (Linux, util-linux
 * `unshare --pid --fork --kill-child`), so that nothing it starts can outlive it. lib/process/tree.ts
 * finds a descendant by its process group, its marker variable or its output pipes; one that
 * calls `setsid`, clears its environment (`env -i`) and closes its output leaves all three. A PID
 * namespace cannot be left: when its first process ends, or `unshare` is killed, the kernel kills
 * every process in it.
 *
 * The first process is a small fixed `sh` (never catalog text: the program and its arguments are
 * passed as `"$@"`) that runs the program as its child and returns its exit status: the first
 * process of a namespace ignores signals it has no handler for, so a program that were first
 * (`node`, `sleep`) would ignore SIGTERM and a graceful end would wait for SIGKILL. On SIGTERM,
 * SIGINT or SIGHUP it passes SIGTERM to every process of the namespace.
 *
 * Where no form of `unshare` works (not Linux, no util-linux, user namespaces disabled), the
 * probe says so and callers keep the plain host launcher.
 */
import { existsSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { hostLauncher, type Launcher } from "./launcher.ts";
import { findOnPath } from "./new_session.ts";

/** The namespace's first process: runs `"$@"`, ends the namespace's processes on a signal. */
const INIT_SCRIPT =
  "trap 'kill -TERM -1 2>/dev/null; wait; exit 143' TERM INT HUP; \"$@\" & wait $!";

/** The `unshare` forms tried, first the one that needs privileges (root), then a user namespace. */
const PREFIXES: readonly (readonly string[])[] = [
  ["unshare", "--pid", "--fork", "--kill-child", "--"],
  ["unshare", "--user", "--map-current-user", "--pid", "--fork", "--kill-child", "--"],
];

let probed: Promise<readonly string[] | undefined> | undefined;

async function works(prefix: readonly string[]): Promise<boolean> {
  try {
    const out = await new Deno.Command(prefix[0], {
      args: [...prefix.slice(1), "sh", "-c", "exit 0"],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).output();
    return out.success;
  } catch {
    return false; // no unshare
  }
}

/** The first `unshare` prefix that works here (probed once per process), or undefined. */
export function pidNamespacePrefix(): Promise<readonly string[] | undefined> {
  probed ??= (async () => {
    if (Deno.build.os !== "linux") return undefined;
    for (const prefix of PREFIXES) if (await works(prefix)) return prefix;
    return undefined;
  })();
  return probed;
}

/**
 * A launcher that starts each program as {@link hostLauncher} does, inside a new PID namespace
 * under `prefix` (from {@link pidNamespacePrefix}). A missing program throws `NotFound` at once,
 * as a plain spawn would, rather than becoming the namespace's exit code.
 */
export function pidNamespaceLauncher(prefix: readonly string[]): Launcher {
  return {
    launch(argv, options) {
      const path = options.clearEnv ? options.env?.PATH : Deno.env.get("PATH");
      const program = argv[0].includes("/")
        ? (isAbsolute(argv[0]) ? argv[0] : resolve(options.cwd ?? Deno.cwd(), argv[0]))
        : findOnPath(argv[0], path);
      if (program === undefined || !existsSync(program)) {
        throw new Deno.errors.NotFound(`${argv[0]}: not found on PATH`);
      }
      return hostLauncher.launch(
        [...prefix, "sh", "-c", INIT_SCRIPT, "sh", ...argv],
        options,
      );
    },
  };
}
