/**
 * Removing a benchmark's temporary tree — now, or, under `bench:summary`, after every figure is
 * taken. On an ext4 file system without a journal (this project's 2-core test machine) the kernel
 * steps over every inode freed in the last minutes when it allocates one, so after thousands of
 * files are deleted each file created in the same block group can cost 10–20× more for minutes
 * (docs/performance.md, "The disk under the figures"): one benchmark's clean-up would be measured
 * as the next one's slowness. `bench:summary` sets `BENCH_TRASH` to a directory of its own on the same file system;
 * a tree is then renamed into it (no inode is freed) and the summary deletes the lot at its end.
 */
import { basename, join } from "node:path";

/** Remove `path` (a benchmark's temporary tree), or set it aside when `BENCH_TRASH` is set. */
export async function removeBenchDir(path: string): Promise<void> {
  const trash = Deno.env.get("BENCH_TRASH");
  if (trash) {
    const aside = join(trash, `${basename(path)}-${crypto.randomUUID().slice(0, 8)}`);
    try {
      await Deno.rename(path, aside);
      return;
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return;
      // Another file system (EXDEV) or no such trash: removed as without the summary.
    }
  }
  await Deno.remove(path, { recursive: true }).catch((e) => {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  });
}
