/**
 * Durable appends with group commit: lines queued while a flush is in flight go out together in
 * the next write and share one `fdatasync`, so many concurrent appenders cost one disk flush per
 * batch instead of one each. An append resolves only once its bytes are on disk.
 *
 * The file is open twice. Batches are written through the first handle synchronously (a write
 * to the page cache takes microseconds), and synced through the second, off this thread: the
 * runtime runs one operation at a time per handle, so a write queued behind a sync in flight on
 * the same handle would wait for it, and every step would need this thread again before the
 * next could start. Here a batch costs one system call on this thread and one asynchronous sync,
 * whose completion resolves the batch. (`fdatasync` flushes the file, whichever handle wrote.)
 */
import { dirname } from "node:path";
import { writeFileAtomic } from "../util/atomic_write.ts";

const encoder = new TextEncoder();

interface Queued {
  bytes: Uint8Array;
  resolve: () => void;
  reject: (e: unknown) => void;
}

/** The two handles of the open file and its size (the end every append goes to). */
interface Handles {
  writer: Deno.FsFile;
  syncer: Deno.FsFile;
  size: number;
}

/** An append-only file opened once and written in synced batches. */
export class GroupAppender {
  readonly #path: string;
  #file: Handles;
  #queue: Queued[] = [];
  #flushing: Promise<void> | undefined;
  #rewrite: (() => string) | undefined;
  #closed = false;

  private constructor(path: string, file: Handles) {
    this.#path = path;
    this.#file = file;
  }

  /** Open (creating) `path` for appending. */
  static async open(path: string): Promise<GroupAppender> {
    return new GroupAppender(path, await openHandles(path));
  }

  /** Append `line` (a newline is added); resolves once it is durable. */
  append(line: string): Promise<void> {
    if (this.#closed) return Promise.reject(new Error(`${this.#path} is closed`));
    return new Promise((resolve, reject) => {
      this.#queue.push({ bytes: encoder.encode(line + "\n"), resolve, reject });
      this.#flushing ??= this.#flush();
    });
  }

  /**
   * Replace the whole file with `text()` (computed when no write is in flight, after the
   * appends already durable have been seen by their callers) at the next quiet point; appends
   * queued meanwhile follow it.
   */
  rewrite(text: () => string): void {
    this.#rewrite = text;
    this.#flushing ??= this.#flush();
  }

  /** Wait for queued appends, then close the file. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#flushing;
    closeHandles(this.#file);
  }

  /**
   * Write and sync queued lines, batch after batch, until none are left. The first batch is
   * written by the `append` that starts the flush; lines queued while its sync runs form the
   * next batch.
   */
  async #flush(): Promise<void> {
    try {
      while (this.#queue.length > 0 || this.#rewrite) {
        if (this.#rewrite) await this.#replace();
        const batch = this.#queue.splice(0);
        if (batch.length === 0) continue;
        try {
          this.#write(concat(batch.map((q) => q.bytes)));
          await this.#file.syncer.syncData();
        } catch (e) {
          for (const q of batch) q.reject(e);
          continue;
        }
        for (const q of batch) q.resolve();
      }
    } finally {
      this.#flushing = undefined;
    }
  }

  /** Write `bytes` at the end of the file; on failure, cut off whatever part of them landed. */
  #write(bytes: Uint8Array): void {
    const file = this.#file;
    let written = 0;
    try {
      while (written < bytes.length) written += file.writer.writeSync(bytes.subarray(written));
    } catch (e) {
      // A torn line would glue itself to the next append: take the batch back whole.
      if (written > 0) {
        try {
          file.writer.truncateSync(file.size);
        } catch { /* the repair on the next open moves a torn tail aside */ }
      }
      throw e;
    }
    file.size += bytes.length;
  }

  async #replace(): Promise<void> {
    const text = this.#rewrite!;
    this.#rewrite = undefined;
    // Let the callers of the appends just resolved record them before the text is taken.
    await Promise.resolve();
    try {
      await writeFileAtomic(this.#path, text());
    } catch (e) {
      console.error(`cannot compact ${this.#path}: ${(e as Error).message}`);
      return;
    }
    try {
      const old = this.#file;
      this.#file = await openHandles(this.#path);
      closeHandles(old);
    } catch (e) {
      console.error(`cannot reopen ${this.#path} after compacting: ${(e as Error).message}`);
    }
    // The rename itself must survive a crash before later appends are reported durable.
    await syncDirectory(dirname(this.#path)).catch((e) =>
      console.error(`cannot sync the directory of ${this.#path}: ${(e as Error).message}`)
    );
  }
}

async function openHandles(path: string): Promise<Handles> {
  const writer = await Deno.open(path, { append: true, create: true });
  try {
    const syncer = await Deno.open(path, { write: true });
    return { writer, syncer, size: (await writer.stat()).size };
  } catch (e) {
    writer.close();
    throw e;
  }
}

function closeHandles(file: Handles): void {
  for (const f of [file.writer, file.syncer]) {
    try {
      f.close();
    } catch { /* already closed */ }
  }
}

async function syncDirectory(path: string): Promise<void> {
  using dir = await Deno.open(path, { read: true });
  await dir.sync();
}

function concat(parts: Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0];
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
