/**
 * The private directory of a server's Unix socket, in the system's temporary directory (a
 * socket path must stay under ~100 bytes, which a workspace path may not). Its name carries the
 * owner's pid: a server killed with SIGKILL cannot remove its directory, so the next one to
 * start removes those whose owner is gone.
 */
import { tmpdir } from "node:os";
import { join } from "node:path";
import { processAlive } from "../util/process_alive.ts";

const PREFIX = "service-http-";

/** The pid a socket directory's name says owns it (undefined for other names). */
export function socketDirOwner(name: string): number | undefined {
  const m = /^service-http-(\d+)-[A-Za-z0-9]+$/.exec(name);
  return m ? Number(m[1]) : undefined;
}

/** Make this process's socket directory (mode 0700), after removing those of dead owners. */
export async function makeSocketDir(parent = tmpdir()): Promise<string> {
  await sweepSocketDirs(parent);
  const dir = await Deno.makeTempDir({ prefix: `${PREFIX}${Deno.pid}-`, dir: parent });
  await Deno.chmod(dir, 0o700);
  return dir;
}

/** Remove the socket directories in `parent` whose owner process is gone; their names. */
export async function sweepSocketDirs(parent = tmpdir()): Promise<string[]> {
  const removed: string[] = [];
  try {
    for await (const entry of Deno.readDir(parent)) {
      const owner = entry.isDirectory ? socketDirOwner(entry.name) : undefined;
      if (owner === undefined || processAlive(owner)) continue;
      // Only ours: owned by this user (another user's are not ours to judge, nor removable).
      const path = join(parent, entry.name);
      const info = await Deno.lstat(path).catch(() => undefined);
      if (!info || info.uid !== Deno.uid()) continue;
      await Deno.remove(path, { recursive: true }).then(() => removed.push(entry.name), () => {});
    }
  } catch {
    // An unreadable temporary directory: nothing to sweep, and making ours will say why.
  }
  return removed;
}
