/**
 * How a container commits on its agent branch without being able to change anything else of the
 * repository. The repository's git directory is mounted read-only; the container writes only
 *
 * - new objects, into the session's own object directory, mounted over `objects/` (the real
 *   objects are mounted read-only elsewhere and listed in its `info/alternates`);
 * - refs and reflogs, into session copies mounted over `refs/` and `logs/` (branches, tags or a
 *   stash it makes stay there);
 * - its worktree's own git directory (`worktrees/<name>/`: HEAD, index), read-write; its
 *   `config.worktree` and the worktree's `.git` file are read-only.
 *
 * So hooks, `config` (where `core.fsmonitor` or a filter would run a command on the host), other
 * branches and the user's refs are out of its reach. When the container has ended
 * ({@link settleGitShadow}) the service brings its work back: the new objects are copied in, the
 * agent branch is moved to what the container's HEAD points at, the worktree's `.git` file is
 * written back, and files handed to the container's user are the service's again.
 */
import { join, relative, resolve } from "node:path";
import { git } from "../git/git.ts";
import { runArgv } from "../process/shell.ts";
import type { Mount } from "./run_args.ts";

/** Where the repository's real objects are mounted inside (read-only). */
const REAL_OBJECTS = "/service/git/objects";

/** What settling needs to know, kept as `meta.json` in the session's directory. */
export interface ShadowMeta {
  session_id: string;
  worktree: string;
  /** The repository's git directory (`git rev-parse --git-common-dir`). */
  common_dir: string;
  /** The worktree's own git directory (`<common>/worktrees/<name>`). */
  admin_dir: string;
  /** `refs/heads/agent/<session>`. */
  branch: string;
  /** The worktree's `.git` file as the service wrote it. */
  git_file: string;
  /** The service's ids, when files were handed to the container's user. */
  owner?: { uid: number; gid: number };
}

/** A prepared shadow: its directory, what to mount, what to settle. */
export interface GitShadow {
  dir: string;
  mounts: Mount[];
  meta: ShadowMeta;
}

/** Options of {@link prepareGitShadow}. */
export interface ShadowOptions {
  /** The session's container directory (`.sdd/runtime/containers/<session>`). */
  dir: string;
  sessionId: string;
  worktree: string;
  /** The agent branch (`agent/<session>`). */
  branch: string;
  /** Hand the worktree and the shadow to this user (the service runs as root). */
  handTo?: { uid: number; gid: number };
}

/**
 * Copy the refs under `from` as they are now. Other sessions move and delete refs meanwhile (a
 * merge deletes its agent branch; git writes through `<ref>.lock` and a rename): a ref or a
 * directory gone while it is copied is simply not there, and a lock file is never a ref.
 */
async function copyRefs(from: string, to: string): Promise<void> {
  await Deno.mkdir(to, { recursive: true });
  let entries: Deno.DirEntry[];
  try {
    entries = await Array.fromAsync(Deno.readDir(from));
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return;
    throw e;
  }
  for (const e of entries) {
    const [a, b] = [join(from, e.name), join(to, e.name)];
    if (e.isDirectory) await copyRefs(a, b);
    else if (e.isFile && !e.name.endsWith(".lock")) {
      await Deno.copyFile(a, b).catch((err) => {
        if (!(err instanceof Deno.errors.NotFound)) throw err;
      });
    }
  }
}

/** Hand `paths` and everything under them to `ids`, never through a symbolic link. */
export async function chownTree(
  paths: string[],
  ids: { uid: number; gid: number },
): Promise<void> {
  // Never through a symbolic link (-h, and -P: none is followed while recursing).
  const r = await runArgv(["chown", "-R", "-h", "-P", `${ids.uid}:${ids.gid}`, ...paths], {
    cwd: "/",
    timeoutMs: 300_000,
  });
  if (r.code !== 0) throw new Error(`chown failed: ${r.output_tail.trim()}`);
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}

/** The object directories the real one borrows from (its `info/alternates`), absolute. */
async function alternatesOf(objects: string): Promise<string[]> {
  let text: string;
  try {
    text = await Deno.readTextFile(join(objects, "info", "alternates"));
  } catch {
    return [];
  }
  return text.split("\n").map((l) => l.trim()).filter((l) => l && !l.startsWith("#"))
    .map((l) => resolve(objects, l));
}

/** Make the session's shadow of the repository's git files and say what to mount. */
export async function prepareGitShadow(o: ShadowOptions): Promise<GitShadow> {
  const gitFile = await Deno.readTextFile(join(o.worktree, ".git"));
  const admin = /^gitdir: (.+)$/m.exec(gitFile)?.[1]?.trim();
  if (!admin) throw new Error(`${o.worktree}/.git does not name the worktree's git directory`);
  const adminDir = resolve(o.worktree, admin);
  const common = await git(["rev-parse", "--git-common-dir"], { cwd: o.worktree });
  const commonDir = resolve(o.worktree, common.stdout.trim());
  const shadow = join(o.dir, "git");
  await Deno.mkdir(join(shadow, "objects", "info"), { recursive: true });
  const alternates = await alternatesOf(join(commonDir, "objects"));
  await Deno.writeTextFile(
    join(shadow, "objects", "info", "alternates"),
    [REAL_OBJECTS, ...alternates].join("\n") + "\n",
  );
  await copyRefs(join(commonDir, "refs"), join(shadow, "refs"));
  await Deno.mkdir(join(shadow, "logs"), { recursive: true });
  await Deno.mkdir(join(commonDir, "logs"), { recursive: true }); // its mount point
  const meta: ShadowMeta = {
    session_id: o.sessionId,
    worktree: o.worktree,
    common_dir: commonDir,
    admin_dir: adminDir,
    branch: `refs/heads/${o.branch}`,
    git_file: gitFile,
    ...(o.handTo ? { owner: { uid: Deno.uid() ?? 0, gid: Deno.gid() ?? 0 } } : {}),
  };
  // Written before anything is handed over: whatever happens next, settling can undo it.
  await Deno.writeTextFile(join(o.dir, "meta.json"), JSON.stringify(meta, null, 2) + "\n");
  if (o.handTo) await chownTree([o.worktree, adminDir, shadow], o.handTo);
  const configWorktree = join(adminDir, "config.worktree");
  // Parents before children: a mount inside another is made after it.
  const mounts: Mount[] = [
    { source: commonDir, readOnly: true },
    { source: join(shadow, "objects"), target: join(commonDir, "objects"), readOnly: false },
    { source: join(shadow, "refs"), target: join(commonDir, "refs"), readOnly: false },
    { source: join(shadow, "logs"), target: join(commonDir, "logs"), readOnly: false },
    { source: adminDir, readOnly: false },
    ...(await exists(configWorktree) ? [{ source: configWorktree, readOnly: true }] : []),
    { source: o.worktree, readOnly: false },
    { source: join(o.worktree, ".git"), readOnly: true },
    { source: join(commonDir, "objects"), target: REAL_OBJECTS, readOnly: true },
    ...alternates.map((a) => ({ source: a, readOnly: true })),
  ];
  return { dir: o.dir, mounts, meta };
}

/** What settling did. */
export interface SettleOutcome {
  /** Objects copied into the repository. */
  objects: number;
  /** The agent branch's new tip, when the container moved it. */
  tip?: string;
  /** Problems that left something undone (the session's directory is then kept). */
  problems: string[];
}

async function readMeta(dir: string): Promise<ShadowMeta | undefined> {
  try {
    return JSON.parse(await Deno.readTextFile(join(dir, "meta.json"))) as ShadowMeta;
  } catch {
    return undefined;
  }
}

/** Copy the objects the container wrote into the repository (packs' indexes last). */
async function copyObjects(from: string, to: string): Promise<number> {
  const files: string[] = [];
  const walk = async (dir: string) => {
    for await (const e of Deno.readDir(dir)) {
      const p = join(dir, e.name);
      if (e.isDirectory && !(dir === from && e.name === "info")) await walk(p);
      else if (e.isFile) files.push(relative(from, p));
    }
  };
  await walk(from);
  files.sort((a, b) => Number(a.endsWith(".idx")) - Number(b.endsWith(".idx")));
  let copied = 0;
  for (const rel of files) {
    const target = join(to, rel);
    if (await exists(target)) continue; // objects are immutable: one there is the same
    await Deno.mkdir(join(target, ".."), { recursive: true });
    const tmp = `${target}.service-${crypto.randomUUID().slice(0, 8)}`;
    await Deno.copyFile(join(from, rel), tmp);
    await Deno.chmod(tmp, 0o444);
    await Deno.rename(tmp, target);
    copied++;
  }
  return copied;
}

/** The commit a ref names in the shadow (a loose ref there, else the real packed-refs). */
async function shadowRef(
  meta: ShadowMeta,
  shadow: string,
  ref: string,
): Promise<string | undefined> {
  try {
    const text = (await Deno.readTextFile(join(shadow, ref))).trim();
    if (text.startsWith("ref: ")) return await shadowRef(meta, shadow, text.slice(5).trim());
    return text;
  } catch { /* not loose */ }
  try {
    const packed = await Deno.readTextFile(join(meta.common_dir, "packed-refs"));
    const line = packed.split("\n").find((l) => l.endsWith(` ${ref}`));
    return line?.split(" ")[0];
  } catch {
    return undefined;
  }
}

/**
 * Bring a container's git work back (idempotent; nothing when the session has no shadow): the
 * files handed to the container's user are the service's again, the worktree's `.git` file is
 * written back, new objects are copied in, and the agent branch moves to the commit the
 * container's HEAD names. The session's directory is removed once everything is done.
 */
export async function settleGitShadow(dir: string): Promise<SettleOutcome | undefined> {
  const meta = await readMeta(dir);
  if (!meta) return undefined;
  const shadow = join(dir, "git");
  const problems: string[] = [];
  const step = async <T>(what: string, f: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await f();
    } catch (e) {
      problems.push(`${what}: ${(e as Error).message}`);
      return undefined;
    }
  };
  if (meta.owner) {
    const owner = meta.owner;
    const paths = [meta.worktree, meta.admin_dir, dir];
    const present: string[] = [];
    for (const p of paths) if (await exists(p)) present.push(p);
    await step("give the files back to the service's user", () => chownTree(present, owner));
  }
  if (await exists(meta.worktree)) {
    await step("write the worktree's .git file back", async () => {
      const gitPath = join(meta.worktree, ".git");
      const now = await Deno.readTextFile(gitPath).catch(() => undefined);
      if (now === meta.git_file) return;
      await Deno.remove(gitPath, { recursive: true }).catch(() => {});
      await Deno.writeTextFile(gitPath, meta.git_file);
    });
  }
  let objects = 0;
  let tip: string | undefined;
  if (await exists(shadow)) {
    objects = await step(
      "copy the container's objects",
      () => copyObjects(join(shadow, "objects"), join(meta.common_dir, "objects")),
    ) ?? 0;
    tip = problems.length > 0 ? undefined : await step("move the agent branch", async () => {
      const head = (await Deno.readTextFile(join(meta.admin_dir, "HEAD"))).trim();
      const found = head.startsWith("ref: ")
        ? await shadowRef(meta, shadow, head.slice(5).trim())
        : head;
      if (!found || !/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(found)) return undefined;
      const cwd = meta.common_dir;
      const real = await git(["rev-parse", "--verify", "--quiet", meta.branch], {
        cwd,
        allowFailure: true,
      });
      if (head !== `ref: ${meta.branch}`) {
        await Deno.writeTextFile(join(meta.admin_dir, "HEAD"), `ref: ${meta.branch}\n`);
      }
      if (real.stdout.trim() === found) return undefined;
      await git(["cat-file", "-e", `${found}^{commit}`], { cwd });
      await git(["update-ref", meta.branch, found], { cwd });
      return found;
    });
  }
  if (problems.length === 0) await Deno.remove(dir, { recursive: true }).catch(() => {});
  return { objects, ...(tip ? { tip } : {}), problems };
}
