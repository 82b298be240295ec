/**
 * Task spec files, recycled. A move (OPEN → CLAIMED, CLAIMED → DONE) used to create a new file
 * in the new directory and delete the old one. On a busy ext4 both are dear: a deleted file's
 * blocks are discarded and its inode freed, and a new inode is found by scanning past every
 * inode freed in the last seconds (without a journal ext4 will not reuse those), which cost
 * 0.1–0.8 ms of kernel time each on the event loop here (docs/performance.md, "Third round").
 *
 * So a superseded spec's file is renamed to a temporary name of this process in the directory
 * the task moved to (`<dir>/<id>.yaml.tmp-<pid>-<random>`, removed at start when this process is
 * gone, like any write's temporary file) and, once that rename is durable (both directories
 * synced after it), the next spec written there overwrites it instead of creating a file. Until
 * then it is never written: a crash could otherwise bring back its old name over another task's
 * bytes. The spec's on-disk contract is unchanged: a write still lands whole under its name
 * (written, synced, renamed, the directory synced) before it is acknowledged.
 */
import { basename, dirname, join } from "node:path";
import {
  syncDirectoryShared,
  tempPathFor,
  writeFileAtomic,
  writeFileAtomicThrough,
} from "../util/atomic_write.ts";

/** Files kept per directory at most; a spec superseded beyond that is deleted. */
const KEEP_PER_DIRECTORY = 128;

/** The recycled spec files of one task store. */
export class SpecFiles {
  /** Per directory: files whose old names are durably gone, ready to be written. */
  readonly #ready = new Map<string, string[]>();
  /** Per directory: files kept, ready or waiting for their renames to be durable. */
  readonly #kept = new Map<string, number>();
  /** Files waiting for their renames to be durable (closing waits for them). */
  readonly #settling = new Set<Promise<void>>();
  #closed = false;

  /** Write `bytes` to `path` atomically and durably, through a recycled file when one is ready. */
  write(path: string, bytes: string): Promise<void> {
    const dir = dirname(path);
    const temp = this.#ready.get(dir)?.pop();
    if (temp === undefined) return writeFileAtomic(path, bytes);
    this.#kept.set(dir, this.#kept.get(dir)! - 1);
    return writeFileAtomicThrough(path, bytes, temp);
  }

  /**
   * `old`, a spec superseded by one durable in `dir`, is no longer wanted: keep its file for a
   * later write in `dir` (deleted instead when enough are kept, or the store is closing).
   * False when there was no file at `old`.
   */
  retire(old: string, dir: string): boolean {
    const kept = this.#kept.get(dir) ?? 0;
    try {
      if (this.#closed || kept >= KEEP_PER_DIRECTORY) {
        Deno.removeSync(old);
        return true;
      }
      const temp = tempPathFor(join(dir, basename(old)));
      Deno.renameSync(old, temp);
      this.#kept.set(dir, kept + 1);
      const settle = this.#settle(temp, [dirname(old), dir]);
      this.#settling.add(settle);
      settle.finally(() => this.#settling.delete(settle));
      return true;
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return false;
      throw e;
    }
  }

  /** Resolves once the rename of every file retired so far is durable (or it was deleted). */
  async settled(): Promise<void> {
    await Promise.all(this.#settling);
  }

  /** Delete every kept file (the store closes; a later write creates its file). */
  async close(): Promise<void> {
    this.#closed = true;
    await this.settled();
    const files = [...this.#ready.values()].flat();
    this.#ready.clear();
    this.#kept.clear();
    await Promise.all(files.map((f) => Deno.remove(f).catch(() => {})));
  }

  /** Make `temp`'s rename durable in `dirs`, then offer it for writing (or delete it). */
  async #settle(temp: string, dirs: string[]): Promise<void> {
    const dir = dirs[dirs.length - 1];
    try {
      await Promise.all([...new Set(dirs)].map(syncDirectoryShared));
    } catch {
      // Its old name may come back after a crash: never write into it.
      this.#kept.set(dir, this.#kept.get(dir)! - 1);
      await Deno.remove(temp).catch(() => {});
      return;
    }
    if (this.#closed) {
      this.#kept.set(dir, this.#kept.get(dir)! - 1);
      await Deno.remove(temp).catch(() => {});
      return;
    }
    let ready = this.#ready.get(dir);
    if (!ready) this.#ready.set(dir, ready = []);
    ready.push(temp);
  }
}
