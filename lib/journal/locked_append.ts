/**
 * The append mechanism shared by the run journal and the audit chain: open (creating the file
 * and its directory, and syncing the directory when the file is new, so a crash cannot lose
 * the file's name), take the exclusive lock across processes, let the caller read the whole
 * chain and decide under the lock, then write every byte at the end and sync before returning.
 */
import { dirname } from "node:path";
import { serialised } from "../async/serialised.ts";

/** What the caller decided under the lock: bytes to append (none: write nothing) and a result. */
export interface LockedDecision<T> {
  append?: Uint8Array;
  result: T;
}

/** Options of {@link appendUnderLock}. */
export interface LockedAppendOptions {
  /** Mode of a created directory (the audit directory is 0700). */
  dirMode?: number;
}

/**
 * Run `decide` holding the exclusive lock on `path` (serialised within the process too), then
 * append and sync what it returns. Nothing is written when `decide` throws.
 */
export function appendUnderLock<T>(
  path: string,
  decide: (file: Deno.FsFile) => Promise<LockedDecision<T>>,
  options: LockedAppendOptions = {},
): Promise<T> {
  return serialised(path, async () => {
    await Deno.mkdir(dirname(path), { recursive: true, mode: options.dirMode });
    let created = false;
    let file: Deno.FsFile;
    try {
      file = await Deno.open(path, { read: true, write: true, createNew: true });
      created = true;
    } catch (e) {
      if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
      file = await Deno.open(path, { read: true, write: true });
    }
    try {
      await file.lock(true);
      const { append, result } = await decide(file);
      if (append && append.length > 0) {
        await file.seek(0, Deno.SeekMode.End);
        let written = 0;
        while (written < append.length) written += await file.write(append.subarray(written));
        await file.syncData();
      }
      if (created) await syncDirectory(dirname(path));
      return result;
    } finally {
      file.close();
    }
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

async function syncDirectory(dir: string): Promise<void> {
  try {
    const handle = await Deno.open(dir, { read: true });
    try {
      await handle.syncData();
    } finally {
      handle.close();
    }
  } catch {
    // Not every platform can open a directory for syncing; the file itself is synced.
  }
}
