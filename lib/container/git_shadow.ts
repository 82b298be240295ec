/**
 * How a container commits on its agent branch without being able to change anything else of the
 * repository (docs/security.md, "The git boundary"). The repository's git directory is mounted
 * read-only; the container writes only
 *
 * - new objects, into the session's own object directory, mounted over `objects/` (the real
 *   objects are mounted read-only elsewhere and listed in its `info/alternates`);
 * - refs and reflogs, into session copies mounted over `refs/` and `logs/` (branches, tags or a
 *   stash it makes stay there);
 * - a session copy of its worktree's own git directory (`worktrees/<name>/`: HEAD, index,
 *   reflog, per-worktree config), mounted over the real one, which it never writes: what the
 *   host's git reads there afterwards (commondir, gitdir, HEAD, the index) is the service's.
 *
 * The worktree's `.git` file is mounted read-only. So hooks, `config` (where `core.fsmonitor` or a
 * filter would run a command on the host), other branches, the user's refs and the files that
 * tell host git where the repository is are out of its reach. When the container has ended
 * ({@link settleGitShadow}) the service brings its work back as data: the commit its HEAD names
 * (a ref is followed only inside the session's refs, never through a link), fetched into the
 * repository from the session's objects with every object checked (`fetch.fsckObjects`, its
 * connectivity proven) — never a file of the container copied in — and the agent branch moved
 * to it; files handed to the container's user are the service's again.
 */
import { join, resolve } from "node:path";
import { git } from "../git/git.ts";
import type { HardenedValue } from "../git/hardened.ts";
import { OID, readRefFile, type RefFile, resolveRef } from "../git/ref_files.ts";
import { gitFileText, type TreeAdmin } from "../git/tree_admin.ts";
import { runArgv } from "../process/shell.ts";
import type { Mount } from "./run_args.ts";
import { pathExists } from "../util/path_exists.ts";

/** Where the repository's real objects are mounted inside (read-only). */
const REAL_OBJECTS = "/service/git/objects";

/** What settling needs to know, kept as `meta.json` in the session's directory. */
export interface ShadowMeta {
  session_id: string;
  worktree: string;
  /** The repository's git directory. */
  common_dir: string;
  /** The worktree's own git directory (`<common>/worktrees/<name>`). */
  admin_dir: string;
  /** `refs/heads/agent/<session>`. */
  branch: string;
  /** The worktree's `.git` file as the service wrote it. */
  git_file: string;
  /** The service's ids, when files were handed to the container's user. */
  owner?: { uid: number; gid: number };
  /**
   * The container wrote `<dir>/admin`, a copy of the worktree's git directory (absent in
   * sessions an older service prepared, whose container wrote the real one).
   */
  admin_copy?: true;
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
  /** The worktree's git files as the service sealed them (lib/worktrees/trees.ts). */
  admin: TreeAdmin;
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

/** Copy the plain files at the top of the worktree's git directory (its HEAD, index, config). */
async function copyAdminDir(from: string, to: string): Promise<void> {
  await Deno.mkdir(to, { recursive: true });
  for await (const e of Deno.readDir(from)) {
    if (e.isFile && !e.name.endsWith(".lock")) {
      await Deno.copyFile(join(from, e.name), join(to, e.name));
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

/**
 * The worktree's git directory for the container: a session copy of it, mounted over the real
 * one (see the module's comment).
 */
export async function adminDirCopy(admin: string, to: string): Promise<Mount> {
  await copyAdminDir(admin, to);
  return { source: to, target: admin, readOnly: false };
}

/** Make the session's shadow of the repository's git files and say what to mount. */
export async function prepareGitShadow(o: ShadowOptions): Promise<GitShadow> {
  const { worktree, common_dir: commonDir, admin_dir: adminDir } = o.admin;
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
  const adminCopy = await adminDirCopy(adminDir, join(o.dir, "admin"));
  const meta: ShadowMeta = {
    session_id: o.sessionId,
    worktree,
    common_dir: commonDir,
    admin_dir: adminDir,
    branch: `refs/heads/${o.branch}`,
    git_file: gitFileText(adminDir),
    ...(o.handTo ? { owner: { uid: Deno.uid() ?? 0, gid: Deno.gid() ?? 0 } } : {}),
    admin_copy: true,
  };
  // Written before anything is handed over: whatever happens next, settling can undo it.
  await Deno.writeTextFile(join(o.dir, "meta.json"), JSON.stringify(meta, null, 2) + "\n");
  if (o.handTo) await chownTree([worktree, shadow, adminCopy.source], o.handTo);
  // Parents before children: a mount inside another is made after it.
  const mounts: Mount[] = [
    { source: commonDir, readOnly: true },
    { source: join(shadow, "objects"), target: join(commonDir, "objects"), readOnly: false },
    { source: join(shadow, "refs"), target: join(commonDir, "refs"), readOnly: false },
    { source: join(shadow, "logs"), target: join(commonDir, "logs"), readOnly: false },
    adminCopy,
    { source: worktree, readOnly: false },
    { source: join(worktree, ".git"), readOnly: true },
    { source: join(commonDir, "objects"), target: REAL_OBJECTS, readOnly: true },
    ...alternates.map((a) => ({ source: a, readOnly: true })),
  ];
  return { dir: o.dir, mounts, meta };
}

/** What settling did. */
export interface SettleOutcome {
  /** The agent branch's new tip, when the container moved it. */
  tip?: string;
  /** Problems that left something undone (the session's directory is then kept). */
  problems: string[];
  /** What the container left that was not taken, and why (nothing was left undone for it). */
  notes: string[];
}

async function readMeta(dir: string): Promise<ShadowMeta | undefined> {
  try {
    return JSON.parse(await Deno.readTextFile(join(dir, "meta.json"))) as ShadowMeta;
  } catch {
    return undefined;
  }
}

/** Write `text` to a new file at `path`: whatever was there is removed, never written through. */
async function writeNew(path: string, text: string): Promise<void> {
  await Deno.remove(path, { recursive: true }).catch(() => {});
  await Deno.writeTextFile(path, text, { createNew: true });
}

/**
 * The commit the container's HEAD names: read as data from its copy of the worktree's git
 * directory, a ref followed only inside the session's refs (then the real `packed-refs`, read
 * only). A HEAD that cannot be read so is not followed: the session's copy of the agent branch
 * is taken instead, and `notes` says why.
 */
async function containerHead(
  meta: ShadowMeta,
  dir: string,
  notes: string[],
): Promise<string | undefined> {
  const shadow = join(dir, "git");
  const admin = meta.admin_copy ? join(dir, "admin") : meta.admin_dir;
  const packedRefs = await Deno.readTextFile(join(meta.common_dir, "packed-refs"))
    .catch(() => undefined);
  const resolveIn = (ref: string): Promise<RefFile> => resolveRef(shadow, ref, { packedRefs });
  let found = await readRefFile(join(admin, "HEAD"));
  if (found.kind === "ref") found = await resolveIn(found.ref);
  if (found.kind === "unusable") {
    notes.push(`its HEAD was not followed (${found.why}); its ${meta.branch} was taken instead`);
    found = await resolveIn(meta.branch);
  }
  return found.kind === "commit" ? found.oid : undefined;
}

/**
 * Remove from `dir` (the session's object directory) everything but directories and plain
 * files: a link there would have git read objects from wherever it points.
 */
async function keepPlainFiles(dir: string): Promise<void> {
  for await (const e of Deno.readDir(dir)) {
    const path = join(dir, e.name);
    if (e.isDirectory && !e.isSymlink) await keepPlainFiles(path);
    else if (!e.isFile || e.isSymlink) await Deno.remove(path, { recursive: true });
  }
}

/** Configuration of the fetch that brings a container's commits in. */
const IMPORT_CONFIG: readonly HardenedValue[] = [
  {
    key: "fetch.fsckObjects",
    value: "true",
    why: "every object is checked (a tree naming .git or ../, a malformed commit) as it arrives",
  },
  {
    key: "protocol.file.allow",
    value: "always",
    why: "the session's objects are fetched from a local directory the service made",
  },
];

/**
 * Bring the commit `tip` and what it needs from the session's objects into the repository, as
 * git brings in any other repository's objects: from a repository the service makes in the
 * session's directory (its only link to the container's files is its alternates line naming the
 * session's object directory, whose own `info/` the service rewrites first), through `git fetch`
 * with every object checked and the connectivity of `tip` proven. No file of the container is
 * copied into the repository.
 */
async function fetchContainerWork(
  meta: ShadowMeta,
  dir: string,
  tip: string,
  since: string | undefined,
): Promise<void> {
  const objects = join(dir, "git", "objects");
  await keepPlainFiles(objects);
  await Deno.remove(join(objects, "info"), { recursive: true }).catch(() => {});
  await Deno.mkdir(join(objects, "info"));
  const real = join(meta.common_dir, "objects");
  await Deno.writeTextFile(
    join(objects, "info", "alternates"),
    [real, ...await alternatesOf(real)].join("\n") + "\n",
  );
  const from = join(dir, "import");
  await Deno.remove(from, { recursive: true }).catch(() => {});
  await Deno.mkdir(join(from, "objects", "info"), { recursive: true });
  await Deno.mkdir(join(from, "refs", "heads"), { recursive: true });
  await Deno.writeTextFile(join(from, "objects", "info", "alternates"), objects + "\n");
  await Deno.writeTextFile(join(from, "refs", "heads", "work"), tip + "\n");
  await Deno.writeTextFile(join(from, "HEAD"), "ref: refs/heads/work\n");
  await Deno.writeTextFile(
    join(from, "config"),
    "[core]\n\trepositoryformatversion = 0\n\tbare = true\n",
  );
  try {
    await git([
      "fetch",
      "--quiet",
      "--no-tags",
      "--no-write-fetch-head",
      "--no-recurse-submodules",
      "--no-auto-gc",
      ...(since ? [`--negotiation-tip=${since}`] : []),
      from,
      "refs/heads/work",
    ], { cwd: meta.common_dir, config: IMPORT_CONFIG, timeoutMs: 300_000 });
  } finally {
    await Deno.remove(from, { recursive: true }).catch(() => {});
  }
}

/**
 * Where the repository's `branch` is now, read from its ref files (the repository's own, which
 * no container writes) without a git process; git is asked only when they cannot be read so.
 * Undefined when the branch is gone.
 */
async function branchTip(commonDir: string, branch: string): Promise<string | undefined> {
  const packedRefs = await Deno.readTextFile(join(commonDir, "packed-refs"))
    .catch(() => undefined);
  const found = await resolveRef(commonDir, branch, { packedRefs });
  if (found.kind === "commit") return found.oid;
  if (found.kind === "unusable" && found.why === `${branch} is not there`) return undefined;
  const real = await git(["rev-parse", "--verify", "--quiet", branch], {
    cwd: commonDir,
    allowFailure: true,
  });
  return real.code === 0 ? real.stdout.trim() : undefined;
}

/**
 * Bring a container's git work back (idempotent; nothing when the session has no shadow): the
 * files handed to the container's user are the service's again, the worktree's `.git` file is
 * written back if it differs, the commit the container's HEAD names is fetched in from the
 * session's objects, every object checked, and the agent branch moves to it. The worktree's real
 * git directory was never the container's to write (an older service's session, whose was,
 * gets HEAD written back and its index dropped). The session's directory is removed once
 * everything is done.
 */
export async function settleGitShadow(dir: string): Promise<SettleOutcome | undefined> {
  const meta = await readMeta(dir);
  if (!meta) return undefined;
  const shadow = join(dir, "git");
  const problems: string[] = [];
  const notes: string[] = [];
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
    const paths = [meta.worktree, dir, ...(meta.admin_copy ? [] : [meta.admin_dir])];
    const present: string[] = [];
    for (const p of paths) if (await pathExists(p)) present.push(p);
    await step("give the files back to the service's user", () => chownTree(present, owner));
  }
  if (await pathExists(meta.worktree)) {
    await step("write the worktree's .git file back", async () => {
      const gitPath = join(meta.worktree, ".git");
      const st = await Deno.lstat(gitPath).catch(() => undefined);
      const plain = st?.isFile && !st.isSymlink;
      if (plain && await Deno.readTextFile(gitPath) === meta.git_file) return;
      await writeNew(gitPath, meta.git_file);
    });
  }
  if (!meta.admin_copy && await pathExists(meta.admin_dir)) {
    await step("put the worktree's git directory back", async () => {
      // The container wrote the real one: HEAD back on the branch, its index not trusted.
      await writeNew(join(meta.admin_dir, "HEAD"), `ref: ${meta.branch}\n`);
      await Deno.remove(join(meta.admin_dir, "index")).catch(() => {});
    });
  }
  let tip: string | undefined;
  if (problems.length === 0 && await pathExists(shadow)) {
    tip = await step("bring the container's commits back", async () => {
      const found = await containerHead(meta, dir, notes);
      if (!found || !OID.test(found)) return undefined;
      const cwd = meta.common_dir;
      const now = await branchTip(cwd, meta.branch);
      if (now === found) return undefined;
      await fetchContainerWork(meta, dir, found, now);
      await git(["cat-file", "-e", `${found}^{commit}`], { cwd });
      await git([
        "update-ref",
        "-m",
        "service: the container's work",
        meta.branch,
        found,
        now ?? "",
      ], {
        cwd,
      });
      return found;
    });
  }
  if (problems.length === 0) await Deno.remove(dir, { recursive: true }).catch(() => {});
  return { ...(tip ? { tip } : {}), problems, notes };
}
