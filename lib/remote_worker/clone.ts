/**
 * `service worker --clone URL` (DESIGN.md §17): a pod starts from an empty directory, so the
 * worker makes its own checkout — a partial clone (`--filter=blob:none`: commits and trees now,
 * each file's contents when a worktree first needs them), whose remote is the one the worker
 * pushes to. A directory that is already that clone (a restarted container on the same volume) is
 * fetched and reused; any other non-empty directory is refused, never overwritten.
 */
import { git } from "../git/git.ts";
import { WorkerSetupError } from "./setup_error.ts";

/** Options of {@link prepareClone}. */
export interface CloneOptions {
  /** The repository to clone (any URL git takes: https, ssh, a path). */
  url: string;
  /** Where: absent or empty, or already a clone of `url`. */
  dir: string;
  /** The name its remote gets (`--remote`, default `origin`). */
  remote: string;
  log: (line: string) => void;
}

async function isEmptyDir(dir: string): Promise<boolean | undefined> {
  try {
    for await (const _ of Deno.readDir(dir)) return false;
    return true;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    throw e;
  }
}

/** Make `dir` a partial clone of `url` (or reuse the one there); throws when it cannot. */
export async function prepareClone(o: CloneOptions): Promise<void> {
  const empty = await isEmptyDir(o.dir);
  if (empty === false) {
    const url = await git(["remote", "get-url", o.remote], { cwd: o.dir, allowFailure: true });
    if (url.code === 0 && url.stdout.trim() === o.url) {
      o.log(`worker: ${o.dir} is already a clone of ${o.url}; fetching`);
      await git(["fetch", "--quiet", "--no-tags", o.remote], { cwd: o.dir, timeoutMs: 300_000 });
      return;
    }
    throw new WorkerSetupError(
      `--clone ${o.url}: ${o.dir} is not empty and not a clone of it`,
      "point --dir at an empty directory (an emptyDir volume), or drop --clone to use the " +
        "clone that is there",
    );
  }
  const started = performance.now();
  const r = await git(
    ["clone", "--quiet", "--filter=blob:none", "--origin", o.remote, o.url, o.dir],
    { cwd: "/", allowFailure: true, timeoutMs: 600_000 },
  );
  if (r.code !== 0) {
    const said = r.stderr.trim().split("\n").filter(Boolean).slice(-3).join(" / ");
    throw new WorkerSetupError(
      `--clone ${o.url} failed: ${said || `git exited with ${r.code}`}`,
      "check the URL and that this machine's git credentials may read it (a deploy key, a " +
        "token in a credential helper)",
    );
  }
  const s = ((performance.now() - started) / 1000).toFixed(1);
  o.log(`worker: cloned ${o.url} into ${o.dir} (partial clone, blobs on demand) in ${s} s`);
}
