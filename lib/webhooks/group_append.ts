/**
 * Durable appends with group commit: lines queued while a write or sync is in flight go out
 * together in the next write and share one `fdatasync`, so many concurrent appenders cost one
 * disk flush per batch instead of one each. An append resolves only once its bytes are on disk.
 */
import { writeFileAtomic } from "../workspace.ts";

const encoder = new TextEncoder();

interface Queued {
  bytes: Uint8Array;
  resolve: () => void;
  reject: (e: unknown) => void;
}

/** An append-only file opened once and written in synced batches. */
export class GroupAppender {
  readonly #path: string;
  #file: Deno.FsFile;
  #queue: Queued[] = [];
  #flushing: Promise<void> | undefined;
  #rewrite: (() => string) | undefined;
  #closed = false;

  private constructor(path: string, file: Deno.FsFile) {
    this.#path = path;
    this.#file = file;
  }

  /** Open (creating) `path` for appending. */
  static async open(path: string): Promise<GroupAppender> {
    return new GroupAppender(path, await openAppend(path));
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
   * Replace the whole file with `text()` (computed when no write is in flight) at the next
   * quiet point; appends queued meanwhile follow it.
   */
  rewrite(text: () => string): void {
    this.#rewrite = text;
    this.#flushing ??= this.#flush();
  }

  /** Wait for queued appends, then close the file. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#flushing;
    this.#file.close();
  }

  /**
   * Write queued lines in batches. Syncs are pipelined: the next batch is written while the
   * previous one's `fdatasync` runs (at most two in flight), and each batch resolves when its
   * own sync (issued after its write) completes.
   */
  async #flush(): Promise<void> {
    let older: Promise<void> | undefined;
    let newer: Promise<void> | undefined;
    try {
      while (this.#queue.length > 0 || this.#rewrite || newer) {
        if (this.#rewrite) {
          await older;
          await newer;
          older = newer = undefined;
          await this.#replace();
        }
        const batch = this.#queue.splice(0);
        if (batch.length === 0) {
          // Nothing new: wait for the syncs in flight, then look again.
          await older;
          await newer;
          older = newer = undefined;
          continue;
        }
        try {
          await writeAll(this.#file, concat(batch.map((q) => q.bytes)));
        } catch (e) {
          for (const q of batch) q.reject(e);
          continue;
        }
        await older; // at most two syncs in flight
        older = newer;
        newer = this.#file.syncData().then(
          () => batch.forEach((q) => q.resolve()),
          (e) => batch.forEach((q) => q.reject(e)),
        );
      }
    } finally {
      this.#flushing = undefined;
    }
  }

  async #replace(): Promise<void> {
    const text = this.#rewrite!;
    this.#rewrite = undefined;
    try {
      await writeFileAtomic(this.#path, text());
      this.#file.close();
      this.#file = await openAppend(this.#path);
    } catch (e) {
      console.error(`cannot compact ${this.#path}: ${(e as Error).message}`);
    }
  }
}

function openAppend(path: string): Promise<Deno.FsFile> {
  return Deno.open(path, { append: true, create: true });
}

async function writeAll(file: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  let written = 0;
  while (written < bytes.length) written += await file.write(bytes.subarray(written));
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
