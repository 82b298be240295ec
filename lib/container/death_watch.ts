/**
 * Learning that a podman container is dead as soon as conmon knows it, not when `podman run`
 * has finished tearing it down (~100–200 ms later: `runc delete`, the storage unmounted, the
 * container removed). conmon is the parent of the container's init: it reaps the init, and the
 * kernel does not let a PID namespace's init be reaped before every other process of that
 * namespace has been killed and is gone — only then does conmon write the container's exit code
 * to `<exit dir>/<container id>` (written aside and renamed into place). So once that file
 * exists nothing of the container can write to its mounts any more. Both the directory and the
 * id are read from conmon's own command line (`--exit-dir`, `--cid`), through the PID file podman
 * is told to have it write (`--conmon-pidfile`). `podman container cleanup`, which conmon starts
 * next, deletes the file soon after: a file missed is no death learned, and the caller waits for
 * the runtime's command as before.
 */
import { basename, dirname, join } from "node:path";
import { pathExists } from "../util/path_exists.ts";

/** What conmon's command line says of where it writes a container's exit code. */
export interface ConmonFacts {
  exitDir: string;
  cid: string;
}

/**
 * `--exit-dir` and `--cid` (or `-c`) of conmon's NUL-separated command line (pure), when it is
 * the conmon told to write its PID to `pidfile` (not another process that took a dead one's PID).
 */
export function conmonFacts(cmdline: string, pidfile: string): ConmonFacts | undefined {
  const args = cmdline.split("\0");
  if (!basename(args[0] ?? "").startsWith("conmon")) return undefined;
  const value = (...names: string[]): string | undefined => {
    for (const [i, a] of args.entries()) {
      for (const n of names) {
        if (a === n) return args[i + 1];
        if (a.startsWith(`${n}=`)) return a.slice(n.length + 1);
      }
    }
    return undefined;
  };
  if (value("--conmon-pidfile") !== pidfile) return undefined;
  const exitDir = value("--exit-dir");
  const cid = value("--cid", "-c");
  if (!exitDir || !cid || !/^[0-9a-f]{12,128}$/.test(cid)) return undefined;
  return { exitDir, cid };
}

/** A decimal exit code as conmon writes it; undefined for anything else (pure). */
export function parseExitCode(text: string): number | undefined {
  const t = text.trim();
  return /^-?\d{1,4}$/.test(t) ? Number(t) : undefined;
}

/** Resolves when `path` exists (watched, not polled), or undefined when `signal` aborts first. */
async function appears(path: string, signal: AbortSignal): Promise<true | undefined> {
  const watcher = Deno.watchFs(dirname(path), { recursive: false });
  const stop = () => watcher.close();
  signal.addEventListener("abort", stop, { once: true });
  try {
    if (await pathExists(path)) return true; // after the watch began: no creation is missed
    for await (const e of watcher) {
      if (e.paths.includes(path) && await pathExists(path)) return true;
    }
    return undefined;
  } finally {
    signal.removeEventListener("abort", stop);
    try {
      watcher.close();
    } catch { /* closed */ }
  }
}

/**
 * The exit code of the container whose conmon writes its PID to `conmonPidfile`, as soon as the
 * container is dead; undefined when it cannot be learned that way (conmon's PID file or exit
 * file never seen, the exit file deleted before it was read) or `signal` aborts first.
 */
export async function watchDeath(
  conmonPidfile: string,
  signal: AbortSignal,
): Promise<number | undefined> {
  try {
    if (!await appears(conmonPidfile, signal)) return undefined;
    const pid = Number((await Deno.readTextFile(conmonPidfile)).trim());
    if (!Number.isInteger(pid) || pid <= 0) return undefined;
    const facts = conmonFacts(await Deno.readTextFile(`/proc/${pid}/cmdline`), conmonPidfile);
    if (!facts) return undefined;
    const exitFile = join(facts.exitDir, facts.cid);
    if (!await appears(exitFile, signal)) return undefined;
    return parseExitCode(await Deno.readTextFile(exitFile));
  } catch {
    return undefined; // conmon gone, the file deleted: the runtime's command says it
  }
}
