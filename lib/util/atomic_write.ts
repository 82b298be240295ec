/**
 * Whole-file writes that a crash or a full disk cannot tear: the bytes go to a temporary file in
 * the same directory (`<name>.tmp-<pid>-<random>`), are synced, renamed over the file, and the
 * directory is synced so the rename itself survives a crash. A failure at any step removes the
 * temporary file and leaves the old file as it was. Temporary files a killed process left behind
 * are removed at start ({@link isOrphanedTemp}, lib/state/startup_repair.ts).
 */
import { basename, dirname } from "node:path";
import { storageFailure } from "../errors.ts";
import { syncDirectory } from "./locked_append.ts";

/** Writes up to this many bytes are made in place (to the page cache: microseconds). */
const IN_PLACE_WRITE = 64 * 1024;
/** The marker between a file's name and its temporary suffix. */
const TEMP_MARK = ".tmp-";
/** `<name>.tmp-<pid>-<suffix>`: the temporary files this module writes. */
const TEMP_NAME = /\.tmp-(\d+)-[A-Za-z0-9]+$/;

/** The temporary file name for `path` written by this process. */
export function tempPathFor(path: string): string {
  return `${path}${TEMP_MARK}${Deno.pid}-${crypto.randomUUID().slice(0, 8)}`;
}

/** The writer's pid when `name` is a temporary file of {@link writeFileAtomic}, else undefined. */
export function tempWriterPid(name: string): number | undefined {
  const m = TEMP_NAME.exec(basename(name));
  return m ? Number(m[1]) : undefined;
}

/**
 * Write `bytes` to `path` atomically and durably. The directory is created first, so the first
 * write of a fresh workspace works. A full disk throws `StorageFullError` (nothing changed).
 */
export function writeFileAtomic(
  path: string,
  bytes: Uint8Array | string,
  mode?: number,
): Promise<void> {
  const tmp = tempPathFor(path);
  return place(path, bytes, { tmp, open: () => openNew(tmp, mode), recycled: false });
}

/**
 * {@link writeFileAtomic} through `temp`, an existing temporary file of this process in the
 * directory of `path` (a recycled one, ../tasks/spec_files.ts): its bytes are overwritten and
 * cut to the new length, so no inode is allocated and no block freed. Whatever `temp` held
 * must no longer be reachable under any other name (its rename durable). It is gone afterwards,
 * whether the write succeeded (renamed over `path`) or not (removed).
 */
export function writeFileAtomicThrough(
  path: string,
  bytes: Uint8Array | string,
  temp: string,
): Promise<void> {
  const open = () => Deno.openSync(temp, { write: true });
  return place(path, bytes, { tmp: temp, open, recycled: true });
}

/** Where {@link place} writes first, and how that file is opened. */
interface Placement {
  tmp: string;
  open: () => Deno.FsFile;
  /** An existing file: what it held beyond the new bytes is cut off. */
  recycled: boolean;
}

/**
 * {@link writeFileAtomic} of the concatenation of `chunks`, each written as it is made: the event
 * loop is free between chunks, so a large file (the backlog export) is never encoded in one piece.
 */
export function writeFileAtomicChunks(path: string, chunks: Iterable<Uint8Array>): Promise<void> {
  const tmp = tempPathFor(path);
  return place(path, chunks, { tmp, open: () => openNew(tmp, undefined), recycled: false });
}

async function place(
  path: string,
  bytes: Uint8Array | string | Iterable<Uint8Array>,
  { tmp, open, recycled }: Placement,
): Promise<void> {
  const body = typeof bytes === "string"
    ? [new TextEncoder().encode(bytes)]
    : bytes instanceof Uint8Array
    ? [bytes]
    : bytes;
  let placed = false;
  try {
    // Opening, writing a few kilobytes to the page cache and renaming take microseconds: done
    // in place, they spare a hand-off to the blocking thread pool each (which cost more CPU than
    // the calls themselves under a burst of task changes). Large writes and the sync wait off
    // the event loop.
    const file = open();
    try {
      let length = 0;
      for (const data of body) {
        let written = 0;
        while (written < data.length) {
          const rest = data.subarray(written);
          written += rest.length <= IN_PLACE_WRITE ? file.writeSync(rest) : await file.write(rest);
        }
        length += written;
      }
      // A recycled file may have held more: cut it (a new file is this long already).
      if (recycled) file.truncateSync(length);
      await file.syncData();
    } finally {
      file.close();
    }
    Deno.renameSync(tmp, path);
    placed = true;
    await syncDirectoryShared(dirname(path));
  } catch (e) {
    if (!placed) await Deno.remove(tmp).catch(() => {});
    throw storageFailure(e, path);
  }
}

/** Create `tmp` for writing; its directory is made on first use (a fresh workspace). */
function openNew(tmp: string, mode: number | undefined): Deno.FsFile {
  try {
    return Deno.openSync(tmp, { write: true, createNew: true, mode });
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
    Deno.mkdirSync(dirname(tmp), { recursive: true });
    return Deno.openSync(tmp, { write: true, createNew: true, mode });
  }
}

/**
 * Create `path` with `bytes`, durably and whole, unless it exists already: the bytes are synced
 * in a temporary file that is then linked into place (a link never replaces a file), so no
 * reader ever sees the file empty or partial. Returns false when another writer created it first.
 */
export async function createFileAtomic(
  path: string,
  bytes: Uint8Array | string,
  mode?: number,
): Promise<boolean> {
  const data = typeof bytes === "string" ? new TextEncoder().encode(bytes) : bytes;
  const tmp = tempPathFor(path);
  try {
    const file = await Deno.open(tmp, { write: true, createNew: true, mode });
    try {
      let written = 0;
      while (written < data.length) written += await file.write(data.subarray(written));
      await file.syncData();
    } finally {
      file.close();
    }
    try {
      await Deno.link(tmp, path);
    } catch (e) {
      if (e instanceof Deno.errors.AlreadyExists) return false;
      throw e;
    }
    await syncDirectoryShared(dirname(path));
    return true;
  } catch (e) {
    throw storageFailure(e, path);
  } finally {
    await Deno.remove(tmp).catch(() => {});
  }
}

/** Per directory: the sync in flight, and the one queued to start after it. */
const directorySyncs = new Map<string, { running: Promise<void>; next?: Promise<void> }>();

/**
 * Sync `dir` after a rename in it, sharing syncs between concurrent writers (group commit): a
 * sync that starts after the rename covers it, so a writer joins the next sync to start rather
 * than queueing one of its own (a burst of task changes costs a few directory syncs, not one each).
 */
export function syncDirectoryShared(dir: string): Promise<void> {
  const state = directorySyncs.get(dir);
  if (!state) {
    const running = syncDirectory(dir).finally(() => {
      const now = directorySyncs.get(dir);
      if (now?.running === running && !now.next) directorySyncs.delete(dir);
    });
    directorySyncs.set(dir, { running });
    return running;
  }
  // The sync in flight may have started before this rename: wait for the next one.
  state.next ??= state.running.catch(() => {}).then(() => {
    const running = syncDirectory(dir).finally(() => {
      if (directorySyncs.get(dir)?.running === running) directorySyncs.delete(dir);
    });
    directorySyncs.set(dir, { running });
    return running;
  });
  return state.next;
}
