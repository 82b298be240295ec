/**
 * An agent worktree made with one git process instead of `git worktree add`'s four (issue 32):
 * `git worktree add -b` starts `git branch`, `git symbolic-ref` (2.39) and `git reset --hard`
 * as processes of their own. Here the service writes the administrative files `git worktree add`
 * writes (gitrepository-layout(5): `<common>/worktrees/<id>/{locked,commondir,HEAD,gitdir}` and
 * the worktree's `.git` file, the same texts, real paths as git writes them), and one hardened
 * `git checkout -b <branch> <commit>` in the new tree creates the branch — refused by git when
 * it exists (a ref transaction that expects no old value: never clobbered) — and writes the
 * files and the index.
 *
 * What keeps it a worktree as git makes it:
 * - `locked` is written first, with {@link HALF_MADE_REASON} and this process's pid, start time
 *   and pid namespace, and removed last: a `git worktree prune` of any process meanwhile leaves
 *   it alone, as it leaves one `git worktree add` is making. A process killed half-way leaves
 *   that file; once its process is gone {@link sweepHalfMade} removes the tree when its checkout
 *   never finished (nothing untrusted ever ran there: the agent starts after `locked` is
 *   removed), or only unlocks it when it did.
 * - The hooks and filters of the repository never run: the checkout runs with lib/git/hardened.ts's
 *   configuration, as `git worktree add` and its children did.
 * - `gitdir` is written last of the linking files: a `git worktree list` meanwhile does not see
 *   the entry until its `commondir` and `HEAD` are there (no "failed to read commondir").
 * - Anything that is not the plain case is left to `git worktree add` (the caller's slower path,
 *   with its messages and stale-metadata pruning): the id taken or the path registered or
 *   present, a main checkout whose `config.worktree` or `info/sparse-checkout` git would copy
 *   into the new worktree, a checkout that is itself a linked worktree, a base that is not a
 *   commit id, and any failure of the checkout (what was made is removed first).
 */
import { dirname, join } from "node:path";
import { serialised } from "../async/serialised.ts";
import { git, type GitOptions, resolveCommit } from "../git/git.ts";
import { isValidId } from "../ids.ts";
import { OID } from "../git/ref_files.ts";
import { plainFileText } from "../git/plain_file.ts";
import { processAlive, processStartTicks } from "../util/process_alive.ts";
import { worktreeLockKey } from "../git/worktree_admin.ts";

/** The first words of the `locked` file of a worktree the service is making. */
export const HALF_MADE_REASON = "initializing: service";

/**
 * A `locked` file of the service's older than this, whose maker cannot be asked (another pid
 * namespace: a container's), is abandoned: a making takes milliseconds, its checkout at most
 * the git call's time limit (60 s).
 */
export const ABANDONED_MS = 10 * 60_000;

/** Who wrote a `locked` text: a pid, its start time and its pid namespace where known. */
export interface Maker {
  pid: number;
  start?: number;
  ns?: string;
}

/** This process's pid namespace (`pid:[4026531836]`), where procfs says. */
function pidNamespace(): string | undefined {
  try {
    return /^pid:\[(\d+)\]$/.exec(Deno.readLinkSync("/proc/self/ns/pid"))?.[1];
  } catch {
    return undefined;
  }
}

let self: Maker | undefined;

/** This process as a `locked` text names it (read once). */
function thisProcess(): Maker {
  if (!self) {
    const start = processStartTicks(Deno.pid);
    const ns = pidNamespace();
    self = { pid: Deno.pid, ...(start === undefined ? {} : { start }), ...(ns ? { ns } : {}) };
  }
  return self;
}

/** The `locked` text of {@link maker}. Pure. */
export function lockedText(maker: Maker): string {
  return `${HALF_MADE_REASON} pid ${maker.pid}` +
    (maker.start === undefined ? "" : ` start ${maker.start}`) +
    (maker.ns === undefined ? "" : ` ns ${maker.ns}`) + "\n";
}

/** The maker a `locked` text names (pure); undefined when the service did not write it. */
export function parseLockedText(text: string): Maker | undefined {
  const m = /^initializing: service pid (\d+)(?: start (\d+))?(?: ns (\d+))?\n?$/.exec(text);
  if (!m) return undefined;
  return {
    pid: Number(m[1]),
    ...(m[2] ? { start: Number(m[2]) } : {}),
    ...(m[3] ? { ns: m[3] } : {}),
  };
}

/**
 * True when the maker of a `locked` file written at `writtenMs` is gone: in this pid namespace,
 * no process with its pid and start time runs; elsewhere (or unknown), the file is older than
 * {@link ABANDONED_MS}.
 */
export function makerGone(maker: Maker, writtenMs: number, now = Date.now()): boolean {
  const here = thisProcess();
  if (maker.ns === undefined || maker.ns !== here.ns) return now - writtenMs > ABANDONED_MS;
  if (!processAlive(maker.pid)) return true;
  const start = processStartTicks(maker.pid);
  return maker.start !== undefined && start !== undefined && start !== maker.start;
}

/** What {@link addInOneProcess} did. */
export type OneProcessAdd =
  | { made: true }
  | { made: false; why: string };

/** Options of {@link addInOneProcess}. */
export interface OneProcessAddOptions {
  /** The checkout whose repository gets the worktree (its main worktree). */
  root: string;
  /** Where the worktree goes (`<root>/.sdd/worktrees/<id>`); its last part is git's id. */
  path: string;
  /** The new branch, without `refs/heads/`. */
  branch: string;
  /** The commit id it starts at. */
  base: string;
  /** Configuration of the checkout (lib/git/agent_tree.ts hardenedConfig: no filter runs). */
  config: GitOptions["config"];
  signal?: AbortSignal;
}

/** lstat, or undefined when nothing is there (any other error too: then git decides). */
function lstatOrNone(path: string): Deno.FileInfo | undefined {
  try {
    return Deno.lstatSync(path);
  } catch {
    return undefined;
  }
}

/**
 * Why this repository's worktree is left to `git worktree add`; undefined when it is the plain
 * case. `common` is the main checkout's git directory.
 */
function notPlain(common: string, id: string, gitFile: string): string | undefined {
  const st = lstatOrNone(common);
  if (!st?.isDirectory || st.isSymlink) return ".git is not a directory of the checkout";
  if (lstatOrNone(join(common, "commondir"))) return "the checkout is a linked worktree";
  // git add copies these into the new worktree (copy_filtered_worktree_config, copy_sparse_checkout).
  if (lstatOrNone(join(common, "config.worktree"))) return "the checkout has a config.worktree";
  if (lstatOrNone(join(common, "info", "sparse-checkout"))) return "the checkout is sparse";
  const worktrees = join(common, "worktrees");
  let names: string[];
  try {
    names = [...Deno.readDirSync(worktrees)].map((e) => e.name);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    return `${worktrees} cannot be read`;
  }
  for (const name of names) {
    if (name === id) return `worktree id ${id} is taken`;
    // A registration of this path under an id git numbered (`<id>1`, `<id>2`… when `<id>` was
    // taken), as git's own check would find it. Only those are read: each read is some 20 µs,
    // and a run keeps dozens of worktrees.
    if (!name.startsWith(id)) continue;
    const named = plainFileText(join(worktrees, name, "gitdir"), 4096);
    if (named !== undefined && named.trim() === gitFile) return `${gitFile} is registered`;
  }
  return undefined;
}

/** Remove `path` (a link itself, never what it names); nothing there is fine. */
function removeQuietly(path: string): void {
  try {
    Deno.removeSync(path, { recursive: true });
  } catch { /* gone already, or left for git's own checks */ }
}

/**
 * Make the worktree at `options.path` on a new branch at `options.base` with one git process;
 * `{ made: false, why }` when it is left to `git worktree add` (nothing of it is left behind).
 */
export async function addInOneProcess(options: OneProcessAddOptions): Promise<OneProcessAdd> {
  const { branch, base } = options;
  if (!OID.test(base)) return { made: false, why: "the base is not a commit id" };
  let root: string;
  let parent: string;
  try {
    root = Deno.realPathSync(options.root);
    Deno.mkdirSync(dirname(options.path), { recursive: true });
    parent = Deno.realPathSync(dirname(options.path));
  } catch (e) {
    return { made: false, why: (e as Error).message };
  }
  const id = options.path.slice(dirname(options.path).length + 1);
  const common = join(root, ".git");
  const admin = join(common, "worktrees", id);
  const tree = join(parent, id);
  const made = await serialised(worktreeLockKey(options.root), () => {
    const why = notPlain(common, id, join(tree, ".git"));
    if (why) return Promise.resolve(why);
    try {
      Deno.mkdirSync(join(common, "worktrees"), { recursive: true });
      Deno.mkdirSync(admin); // the id: taken by anyone else meanwhile, this fails
    } catch (e) {
      return Promise.resolve(`${admin}: ${(e as Error).message}`);
    }
    try {
      Deno.writeTextFileSync(join(admin, "locked"), lockedText(thisProcess()));
      Deno.mkdirSync(tree);
    } catch (e) {
      removeQuietly(admin);
      return Promise.resolve(`${tree}: ${(e as Error).message}`);
    }
    try {
      Deno.writeTextFileSync(join(admin, "commondir"), "../..\n");
      Deno.writeTextFileSync(join(admin, "HEAD"), `ref: refs/heads/${branch}\n`);
      Deno.writeTextFileSync(join(tree, ".git"), `gitdir: ${admin}\n`, { createNew: true });
      Deno.writeTextFileSync(join(admin, "gitdir"), `${join(tree, ".git")}\n`);
    } catch (e) {
      removeQuietly(tree);
      removeQuietly(admin);
      return Promise.resolve(`${admin}: ${(e as Error).message}`);
    }
    return Promise.resolve(undefined);
  });
  if (made !== undefined) return { made: false, why: made };
  // Outside the repository's queue: `locked` keeps every prune away, and 16 checkouts share the
  // two cores instead of waiting for each other.
  const checkout = await git(["checkout", "-q", "-b", branch, base], {
    cwd: tree,
    env: { GIT_DIR: admin, GIT_COMMON_DIR: common, GIT_WORK_TREE: tree },
    config: options.config,
    signal: options.signal,
    allowFailure: true,
  }).catch((e: Error) => ({ code: -1, stderr: e.message }));
  if (checkout.code !== 0) {
    // Nothing untrusted ran there: what was made goes, and git's own add says what is wrong.
    await serialised(worktreeLockKey(options.root), () => {
      removeQuietly(tree);
      removeQuietly(admin);
      return Promise.resolve();
    });
    return { made: false, why: `git checkout: ${checkout.stderr.trim()}` };
  }
  try {
    Deno.removeSync(join(admin, "locked"));
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  return { made: true };
}

/** What {@link sweepHalfMade} did, by git's ids of the trees. */
export interface SweptTrees {
  /** Trees removed: their checkout never finished (no branch), nothing ever ran there. */
  removed: string[];
  /** Trees unlocked: their checkout finished, only the end of the making was missed. */
  unlocked: string[];
}

/** Options of {@link sweepHalfMade}. */
export interface SweepOptions {
  /** The directory of the service's worktrees (`<root>/.sdd/worktrees`). */
  worktrees: string;
  /** True when the session named `id` has a sealed record (its tree was handed on): kept. */
  sealed: (id: string) => boolean;
  signal?: AbortSignal;
}

/**
 * Finish what a killed service process left of {@link addInOneProcess} in `root`'s repository:
 * entries whose `locked` file is the service's and names a process that is gone. When the
 * checkout finished (its branch exists) only `locked` goes: it is a worktree like any other the
 * run left, for recovery and reaping. When it never did (no branch: no agent could have started
 * there), the tree under `worktrees` and its git directory are removed — unless a sealed record
 * says the service handed it on. Another live process's trees are left alone.
 */
export async function sweepHalfMade(root: string, options: SweepOptions): Promise<SweptTrees> {
  const swept: SweptTrees = { removed: [], unlocked: [] };
  let dir: string;
  let names: string[];
  try {
    dir = join(Deno.realPathSync(root), ".git", "worktrees");
    names = [...Deno.readDirSync(dir)].filter((e) => e.isDirectory).map((e) => e.name);
  } catch {
    return swept;
  }
  for (const name of names) {
    const lockedPath = join(dir, name, "locked");
    const locked = plainFileText(lockedPath, 4096);
    const maker = locked === undefined ? undefined : parseLockedText(locked);
    if (!maker || !isValidId(name)) continue;
    const written = lstatOrNone(lockedPath)?.mtime?.getTime() ?? Date.now();
    if (!makerGone(maker, written)) continue;
    const branch = await resolveCommit(`refs/heads/agent/${name}`, {
      cwd: root,
      signal: options.signal,
    });
    await serialised(worktreeLockKey(root), () => {
      if (branch !== undefined || options.sealed(name)) {
        removeQuietly(join(dir, name, "locked"));
        swept.unlocked.push(name);
        return Promise.resolve();
      }
      const tree = join(options.worktrees, name);
      const st = lstatOrNone(tree);
      // Only the tree that names this git directory, or one the kill left empty.
      if (st?.isDirectory && !st.isSymlink) {
        const gitFile = plainFileText(join(tree, ".git"), 4096);
        const empty = [...Deno.readDirSync(tree)].length === 0;
        if (empty || gitFile === `gitdir: ${join(dir, name)}\n`) removeQuietly(tree);
      }
      removeQuietly(join(dir, name));
      swept.removed.push(name);
      return Promise.resolve();
    });
  }
  return swept;
}
