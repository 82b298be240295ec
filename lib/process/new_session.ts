/**
 * Starting a program as the leader of a new session and process group, cheaply.
 *
 * `Deno.Command({ detached: true })` calls `setsid` between fork and exec, so it cannot use
 * `posix_spawn`: it forks the whole service, whose page tables grow with its memory. Measured
 * here, one such spawn took 1.1 ms in a 37 MB process and 28 ms in a 355 MB one, on the event
 * loop, against 0.25–0.35 ms either way for a plain spawn. So where util-linux's `setsid` exists
 * the program is started through it with a plain spawn: a child of `posix_spawn` is never a group
 * leader, so `setsid` calls setsid(2) and execs the program in place — same pid, now leading its
 * own session and group, as `detached` would make it. Elsewhere (macOS, Windows) `detached` it is.
 *
 * The program is resolved here exactly as a spawn would (a name by PATH, a path against `cwd`),
 * so a missing or non-executable one throws the same `NotFound` or `PermissionDenied` at once
 * instead of becoming `setsid`'s exit code 127.
 */
import { delimiter, isAbsolute, join } from "node:path";

/** `options` of `Deno.Command`, less `detached` (always a new session here). */
export type SessionCommandOptions = Omit<Deno.CommandOptions, "args" | "detached">;

/** The first executable regular file named `name` in `path`'s directories. */
export function findOnPath(name: string, path: string | undefined): string | undefined {
  for (const dir of (path ?? "").split(delimiter).filter(Boolean)) {
    const candidate = join(dir, name);
    if (executable(candidate) === true) return candidate;
  }
  return undefined;
}

/** True for an executable regular file, false for another existing file, undefined if absent. */
function executable(path: string): boolean | undefined {
  try {
    const s = Deno.statSync(path);
    return s.isFile && ((s.mode ?? 0o755) & 0o111) !== 0;
  } catch {
    return undefined;
  }
}

/**
 * The absolute path `program` would run as with `options` (its PATH, else this process's), or
 * the error a spawn of it would throw, worded as Deno words it.
 */
export function resolveProgram(program: string, options: SessionCommandOptions): string {
  if (!program.includes("/")) {
    const path = options.env?.PATH ?? Deno.env.get("PATH");
    const found = findOnPath(program, path);
    if (found) return found;
    throw new Deno.errors.NotFound(`Failed to spawn '${program}': entity not found`);
  }
  const cwd = options.cwd === undefined ? Deno.cwd() : String(options.cwd);
  const full = isAbsolute(program) ? program : join(cwd, program);
  const ok = executable(full);
  if (ok === undefined) {
    throw new Deno.errors.NotFound(
      `Failed to spawn '${full}': No such file or directory (os error 2)`,
    );
  }
  if (!ok) {
    throw new Deno.errors.PermissionDenied(
      `Failed to spawn '${full}': Permission denied (os error 13)`,
    );
  }
  return full;
}

/** util-linux's `setsid`, looked up once on this process's PATH (undefined: not on Linux). */
let setsidBin: string | null | undefined;

function setsid(): string | undefined {
  if (setsidBin === undefined) {
    setsidBin = Deno.build.os === "linux"
      ? findOnPath("setsid", Deno.env.get("PATH") ?? "/usr/bin:/bin") ?? null
      : null;
  }
  return setsidBin ?? undefined;
}

/**
 * Spawn `argv` leading a new session and process group (its pid is the group's id); throws as
 * `Deno.Command.spawn` does when the program cannot start.
 */
export function spawnNewSession(
  argv: readonly string[],
  options: SessionCommandOptions,
): Deno.ChildProcess {
  const bin = setsid();
  if (!bin) {
    return new Deno.Command(argv[0], { ...options, args: argv.slice(1), detached: true }).spawn();
  }
  const program = resolveProgram(argv[0], options);
  // `--`: nothing after it is read as setsid's own option (the program path is absolute anyway).
  return new Deno.Command(bin, { ...options, args: ["--", program, ...argv.slice(1)] }).spawn();
}
