/** What `stat` says about a file, to tell whether it may have changed since it was read. */

/** Device, inode, size and both modification times of a file. */
export interface FileIdentity {
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
}

/**
 * The identity of the file at `path`, or undefined when it cannot be stat'ed. The stat is made
 * in place: it takes microseconds, less than handing it to the blocking thread pool and back
 * (the runs list stats every run's journal twice per request).
 */
// deno-lint-ignore require-await
export async function fileIdentity(path: string): Promise<FileIdentity | undefined> {
  try {
    return identityOf(Deno.statSync(path));
  } catch {
    return undefined;
  }
}

/** The identity `stat` (of a path or an open file) gave, or undefined when it has none. */
export function identityOf(info: Deno.FileInfo): FileIdentity | undefined {
  if (!info.isFile || info.ctime === null || info.mtime === null) return undefined;
  return {
    dev: info.dev,
    ino: info.ino ?? -1,
    size: info.size,
    mtimeMs: info.mtime.getTime(),
    ctimeMs: info.ctime.getTime(),
  };
}

/** True when both identities describe the same, unchanged file. */
export function sameIdentity(a: FileIdentity, b: FileIdentity): boolean {
  return a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs &&
    a.ctimeMs === b.ctimeMs && a.ino !== -1;
}

/**
 * Changes settle this long before a stat may stand in for reading the bytes: a file whose
 * last change (ctime) was already older than this when it was stat'ed and then read cannot
 * change again without a newer ctime, which no process can set back.
 */
export const SETTLED_MS = 1000;

/** True when the file's last change is older than `SETTLED_MS` before `statAt` (epoch ms). */
export function settledBefore(identity: FileIdentity, statAt: number): boolean {
  return identity.ctimeMs < statAt - SETTLED_MS;
}
