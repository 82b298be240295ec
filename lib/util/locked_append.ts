/**
 * The append mechanism shared by the run journal, the audit chain and the JSONL state files:
 * open (creating the file and its directory, and syncing the directory when the file is new, so
 * a crash cannot lose the file's name), take the exclusive lock across processes, let the caller
 * read the file and decide under the lock, then write every byte at the end and sync before
 * returning. A write or sync that fails (a full disk) is taken back under the same lock: the file
 * is cut back to the length it had, so it is byte for byte what it was and nothing is
 * acknowledged. Only bytes that were synced are ever reported as appended.
 */
import { dirname } from "node:path";
import { serialised } from "../async/serialised.ts";
import { storageFailure } from "../errors.ts";

/** What the caller decided under the lock: bytes to append (none: write nothing) and a result. */
export interface LockedDecision<T> {
  append?: Uint8Array;
  result: T;
  /**
   * Runs under the lock after a failed write was cut back, before the error is thrown: undo
   * what the caller did elsewhere for this append (the review action takes back its audit entry).
   */
  onWriteFailed?: () => Promise<void>;
}

/** Options of {@link appendUnderLock}. */
export interface LockedAppendOptions {
  /** Mode of a created directory (the audit directory is 0700). */
  dirMode?: number;
}

/**
 * Run `decide` holding the exclusive lock on `path` (serialised within the process too), then
 * append and sync what it returns. Nothing is written when `decide` throws; when the write or
 * the sync fails the file is cut back to its length before the append, and the error (a
 * `StorageFullError` for a full disk) is thrown.
 */
export function appendUnderLock<T>(
  path: string,
  decide: (file: Deno.FsFile) => LockedDecision<T> | Promise<LockedDecision<T>>,
  options: LockedAppendOptions = {},
): Promise<T> {
  return serialised(path, async () => {
    let created = false;
    let file: Deno.FsFile;
    try {
      // The file exists but for its first append: one open, no directory to make. In place: an
      // open of an existing file takes microseconds, and each hand-off to the thread pool and
      // back costs more than that on a busy loop (the run's loop waits for its rows).
      file = Deno.openSync(path, { read: true, write: true });
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw storageFailure(e, path);
      try {
        await Deno.mkdir(dirname(path), { recursive: true, mode: options.dirMode });
        try {
          file = await Deno.open(path, { read: true, write: true, createNew: true });
          created = true;
        } catch (e) {
          if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
          file = await Deno.open(path, { read: true, write: true });
        }
      } catch (e) {
        throw storageFailure(e, path);
      }
    }
    try {
      await file.lock(true);
      const { append, result, onWriteFailed } = await decide(file);
      if (append && append.length > 0) {
        try {
          await appendOrTakeBack(file, path, append);
        } catch (e) {
          await onWriteFailed?.().catch((undo) =>
            console.error(`after a failed append to ${path}: ${(undo as Error).message}`)
          );
          throw e;
        }
      }
      if (created) await syncDirectory(dirname(path));
      return result;
    } finally {
      file.close();
    }
  });
}

/** Append `text` (whole lines) to the state file `path` under its lock, synced before returning. */
export function appendStateLines(path: string, text: string): Promise<void> {
  const bytes = new TextEncoder().encode(text);
  return appendUnderLock(path, (file) => {
    // A line left without its newline by a crash would glue itself to this one.
    const size = file.statSync().size;
    if (size === 0) return { append: bytes, result: undefined };
    const last = new Uint8Array(1);
    file.seekSync(size - 1, Deno.SeekMode.Start);
    file.readSync(last);
    if (last[0] === 0x0a) return { append: bytes, result: undefined };
    const joined = new Uint8Array(bytes.length + 1);
    joined[0] = 0x0a;
    joined.set(bytes, 1);
    return { append: joined, result: undefined };
  });
}

/**
 * Write `bytes` at the end of `file` and sync; on failure cut the file back and rethrow. The
 * write goes to the page cache in place; only the sync leaves the event loop.
 */
async function appendOrTakeBack(file: Deno.FsFile, path: string, bytes: Uint8Array) {
  const start = file.seekSync(0, Deno.SeekMode.End);
  try {
    let written = 0;
    while (written < bytes.length) written += file.writeSync(bytes.subarray(written));
    await file.syncData();
  } catch (e) {
    try {
      await file.truncate(start);
      await file.syncData();
    } catch (undo) {
      throw new Error(
        `appending to ${path} failed (${(e as Error).message}) and cutting it back to ${start} ` +
          `bytes failed too (${(undo as Error).message}): its last line may be torn`,
      );
    }
    throw storageFailure(e, path);
  }
}

/**
 * Cut the last line off `path` under its lock when `isIt(line)` says it is the one to take back
 * (nothing appended after it). Returns whether it was cut.
 */
export function takeBackLastLine(path: string, isIt: (line: string) => boolean): Promise<boolean> {
  return appendUnderLock(path, async (file) => {
    const bytes = await readWhole(file);
    if (bytes.length === 0 || bytes[bytes.length - 1] !== 0x0a) return { result: false };
    const start = bytes.lastIndexOf(0x0a, bytes.length - 2) + 1;
    if (!isIt(new TextDecoder().decode(bytes.subarray(start, bytes.length - 1)))) {
      return { result: false };
    }
    await file.truncate(start);
    await file.syncData();
    return { result: true };
  });
}

/** Read the whole of an open file from its start. */
export async function readWhole(file: Deno.FsFile): Promise<Uint8Array> {
  await file.seek(0, Deno.SeekMode.Start);
  const size = (await file.stat()).size;
  const buffer = new Uint8Array(size);
  let offset = 0;
  while (offset < size) {
    const n = await file.read(buffer.subarray(offset));
    if (n === null) break;
    offset += n;
  }
  return buffer.subarray(0, offset);
}

/**
 * Sync directory `dir`, so that a file created or renamed in it survives a crash. Platforms that
 * cannot open a directory for syncing (Windows) skip it; the files themselves are synced.
 */
export async function syncDirectory(dir: string): Promise<void> {
  let handle: Deno.FsFile;
  try {
    // Opened in place (microseconds); only the sync leaves the event loop.
    handle = Deno.openSync(dir, { read: true });
  } catch (e) {
    if (Deno.build.os === "windows") return;
    throw e;
  }
  try {
    await handle.syncData();
  } finally {
    handle.close();
  }
}
