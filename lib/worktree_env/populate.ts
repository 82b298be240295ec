/**
 * Put what ./select.ts chose into a new tree (an agent's worktree, or the tree the gates run
 * on): copies of files, links to shared directories. Never out of bounds: a file is copied only
 * when its real path is inside the workspace (a symlink that leads out is not followed) and not
 * under `.git/` or `.sdd/`; nothing is written where the tree has something already or through
 * a directory of the tree that leads out of it.
 */
import { dirname, isAbsolute, join, relative, sep } from "node:path";

/** A path that was not copied or linked, and why. */
export interface Skipped {
  path: string;
  why: string;
}

/** What {@link populateTree} did. */
export interface Populated {
  /** Files copied, relative to the tree. */
  copied: string[];
  /** Paths linked to the checkout's, relative to the tree. */
  linked: string[];
  skipped: Skipped[];
}

/** What to put in the tree, relative to the workspace root. */
export interface TreeSources {
  copy: readonly string[];
  link: readonly string[];
}

/** True when `path` is `dir` or inside it (both real paths). */
function inside(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel !== ".." && !rel.startsWith(".." + sep) && !isAbsolute(rel);
}

/** True when `real` lies in the workspace's `.git/` or `.sdd/`. */
function inGitOrState(realRoot: string, real: string): boolean {
  return [".git", ".sdd"].some((d) => inside(join(realRoot, d), real));
}

const exists = (path: string) => Deno.lstat(path).then(() => true, () => false);

/**
 * The directory `dest` goes in, created inside `realTree`; undefined when it is (or passes
 * through) a link out of the tree.
 */
async function parentInside(realTree: string, dest: string): Promise<string | undefined> {
  const parent = dirname(dest);
  try {
    await Deno.mkdir(parent, { recursive: true });
    const real = await Deno.realPath(parent);
    return inside(realTree, real) ? real : undefined;
  } catch {
    return undefined;
  }
}

/** Why nothing may be put at `dest` in the tree, or undefined when it may (its directory made). */
async function notPlaceable(realTree: string, dest: string): Promise<string | undefined> {
  if (await exists(dest)) return "the worktree has it already";
  if (!await parentInside(realTree, dest)) return "its directory in the worktree leads out of it";
  return undefined;
}

/** Copy and link `sources` from the workspace at `root` into the tree at `tree`. */
export async function populateTree(
  root: string,
  tree: string,
  sources: TreeSources,
): Promise<Populated> {
  const realRoot = await Deno.realPath(root);
  const realTree = await Deno.realPath(tree);
  const out: Populated = { copied: [], linked: [], skipped: [] };
  const skip = (path: string, why: string) => out.skipped.push({ path, why });
  for (const path of sources.copy) {
    const real = await Deno.realPath(join(root, path)).catch(() => undefined);
    if (real === undefined) {
      skip(path, "gone from the checkout");
      continue;
    }
    if (!inside(realRoot, real)) {
      skip(path, "a symlink that leads out of the workspace (not followed)");
      continue;
    }
    if (inGitOrState(realRoot, real)) {
      skip(path, "leads into .git/ or .sdd/ (never copied)");
      continue;
    }
    if (!(await Deno.stat(real)).isFile) {
      skip(path, "not a regular file");
      continue;
    }
    const dest = join(tree, path);
    const taken = await notPlaceable(realTree, dest);
    if (taken) {
      skip(path, taken);
      continue;
    }
    await Deno.copyFile(real, dest);
    out.copied.push(path);
  }
  for (const path of sources.link) {
    const source = join(realRoot, path);
    const dest = join(tree, path);
    const taken = await exists(source)
      ? await notPlaceable(realTree, dest)
      : "gone from the checkout";
    if (taken) {
      skip(path, taken);
      continue;
    }
    await Deno.symlink(source, dest);
    out.linked.push(path);
  }
  return out;
}
