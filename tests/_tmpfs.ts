/**
 * A real small filesystem that can be filled up: a tmpfs mounted for one test (root only), and a
 * filler file that takes every free page so that the next write needing space fails with ENOSPC.
 * Where mounting is impossible the tests that need it are skipped, and say so loudly.
 */
import { join } from "node:path";

/** Why full-disk tests cannot run here, or undefined when they can (probed once). */
export const TMPFS_UNAVAILABLE: string | undefined = await probe();

if (TMPFS_UNAVAILABLE) {
  console.warn(`\n!!! SKIPPING the full-disk tests: ${TMPFS_UNAVAILABLE}\n`);
}

async function probe(): Promise<string | undefined> {
  if (Deno.build.os !== "linux") return `they need Linux tmpfs, this is ${Deno.build.os}`;
  if (Deno.uid() !== 0) return "they mount a tmpfs, which needs root (run the suite as root)";
  const dir = await Deno.makeTempDir({ prefix: "tmpfs-probe-" });
  try {
    const out = await mount(dir, 64 * 1024);
    if (out) return `mount -t tmpfs failed: ${out}`;
    await umount(dir);
    return undefined;
  } finally {
    await Deno.remove(dir).catch(() => {});
  }
}

async function mount(dir: string, bytes: number): Promise<string | undefined> {
  const out = await new Deno.Command("mount", {
    args: ["-t", "tmpfs", "-o", `size=${bytes},mode=0755`, "tmpfs", dir],
    stdout: "piped",
    stderr: "piped",
  }).output();
  return out.success
    ? undefined
    : new TextDecoder().decode(out.stderr).trim() || `exit ${out.code}`;
}

async function umount(dir: string): Promise<void> {
  const out = await new Deno.Command("umount", { args: ["-l", dir], stderr: "piped" }).output();
  if (!out.success) throw new Error(`umount ${dir}: ${new TextDecoder().decode(out.stderr)}`);
}

/** A mounted tmpfs; disposing it unmounts it and removes the mount point. */
export interface SmallDisk extends AsyncDisposable {
  path: string;
  /** Take every free page with a filler file; the next write that needs a page fails. */
  fill(): Promise<void>;
  /** Remove the filler: the space is back. */
  free(): Promise<void>;
  /** Bytes the filler took at the last `fill()`. */
  filled: number;
}

/** Mount a tmpfs of `bytes` on a fresh directory. */
export async function smallDisk(bytes = 8 * 1024 * 1024): Promise<SmallDisk> {
  const path = await Deno.makeTempDir({ prefix: "full-disk-" });
  const failed = await mount(path, bytes);
  if (failed) throw new Error(`mount -t tmpfs on ${path}: ${failed}`);
  const filler = join(path, ".filler");
  const disk: SmallDisk = {
    path,
    filled: 0,
    async fill() {
      await using file = await Deno.open(filler, { write: true, create: true, append: true });
      // Big pieces first, then single pages: every page ends up taken.
      for (const size of [1024 * 1024, 64 * 1024, 4096, 512]) {
        const chunk = new Uint8Array(size);
        for (;;) {
          try {
            await file.write(chunk);
          } catch (e) {
            if ((e as { code?: string }).code !== "ENOSPC") throw e;
            break;
          }
        }
      }
      disk.filled = (await Deno.stat(filler)).size;
    },
    async free() {
      // Cut to nothing before the unlink: an unlinked file's pages stay taken while any
      // descriptor of it is open, and the filler's may close a moment after fill() returned
      // (its last write's blocking-pool thread lets go of it), which under load left the disk
      // full for the write after free().
      await Deno.truncate(filler, 0).catch(() => {});
      await Deno.remove(filler).catch(() => {});
    },
    async [Symbol.asyncDispose]() {
      await umount(path).catch((e) => console.error(e.message));
      await Deno.remove(path, { recursive: true }).catch(() => {});
    },
  };
  return disk;
}
