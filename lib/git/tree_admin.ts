/**
 * A worktree's git administrative files, as the service made them, checked and put back. git
 * keeps a linked worktree's own state in `<common>/worktrees/<name>/` — `HEAD`, `index`,
 * `commondir` (which repository it belongs to), `gitdir` (where the worktree is), its reflog and
 * per-worktree config — and the worktree's `.git` file names that directory. Whoever can write
 * them decides what the next git there reads (a `commondir` naming a git directory of its own
 * brings its config and hooks), writes (a `HEAD` or a reflog that is a link is written through)
 * and which files it takes for the worktree's (an index entry `../../x` is read from outside).
 *
 * {@link recordTreeAdmin} notes what the service wrote, before anything untrusted runs there;
 * {@link checkTreeAdmin} lists what differs now (a link anywhere, a name git does not write
 * there, a file's text); {@link restoreTreeAdmin} writes it all back and rebuilds the index from
 * the branch, reading nothing that was there as a path.
 */
import { dirname, join, resolve } from "node:path";
import { git } from "./git.ts";
import { OID, parseRefFile } from "./ref_files.ts";
import { isPlainFile, plainFileText } from "./plain_file.ts";

/** The host's record of one worktree's git administrative files. */
export interface TreeAdmin {
  /** The work tree. */
  worktree: string;
  /** The repository's git directory. */
  common_dir: string;
  /** The worktree's own git directory: `<common_dir>/worktrees/<name>`. */
  admin_dir: string;
  /** HEAD as the service set it: `ref: refs/heads/<branch>` or a commit id. */
  head: string;
  /** Files the service wrote there besides git (per-worktree config, excludes): name → text. */
  files: Record<string, string>;
}

/** Files the service itself may write into a worktree's git directory (lib/worktrees/ignores.ts). */
export const SERVICE_ADMIN_FILES: readonly string[] = ["config.worktree", "service-exclude"];

/** Files git writes there during the service's own calls; each must be a plain file. */
const GIT_FILES = new Set(["index", "COMMIT_EDITMSG", "ORIG_HEAD", "AUTO_MERGE"]);

/** What git writes into `commondir` (relative to the worktree's git directory). */
const COMMONDIR = "../..\n";

/** The `.git` file of a worktree whose git directory is `adminDir`. */
export function gitFileText(adminDir: string): string {
  return `gitdir: ${adminDir}\n`;
}

/** The exact text of each file the record fixes (HEAD, commondir, gitdir, the service's files). */
function expectedTexts(a: TreeAdmin): Map<string, string> {
  return new Map([
    ["HEAD", `${a.head}\n`],
    ["commondir", COMMONDIR],
    ["gitdir", `${join(a.worktree, ".git")}\n`],
    ...Object.entries(a.files),
  ]);
}

/** A record could not be made: the worktree is not as `git worktree add` leaves it. */
export class TreeAdminError extends Error {
  constructor(readonly worktree: string, detail: string) {
    super(
      `the git files of worktree ${worktree} are not as git made them (${detail}); remove it ` +
        `with \`git worktree remove --force ${worktree}\` and \`git worktree prune\``,
    );
    this.name = "TreeAdminError";
  }
}

/**
 * A plain file's text: undefined when it is missing, a link, not a file or has other links. Read
 * in place (lib/git/plain_file.ts): a check makes some twenty of these.
 */
function plainText(path: string): string | undefined {
  return plainFileText(path);
}

/** A real directory's entry names (not a link); undefined for anything else. */
function directoryNames(path: string): string[] | undefined {
  try {
    const st = Deno.lstatSync(path);
    if (!st.isDirectory || st.isSymlink) return undefined;
    return [...Deno.readDirSync(path)].map((e) => e.name);
  } catch {
    return undefined;
  }
}

/**
 * The record of the worktree at `worktree` of the repository whose git directory is `commonDir`,
 * as its files are now: call it before anything untrusted has run there.
 */
export async function recordTreeAdmin(worktree: string, commonDir: string): Promise<TreeAdmin> {
  const gitFile = plainText(join(worktree, ".git"));
  const named = gitFile && /^gitdir: (.+)\n?$/.exec(gitFile)?.[1];
  if (!named) throw new TreeAdminError(worktree, "its .git file does not name a git directory");
  const admin = resolve(worktree, named);
  const parent = await Deno.realPath(dirname(admin)).catch(() => dirname(admin));
  if (parent !== await Deno.realPath(join(commonDir, "worktrees")).catch(() => "")) {
    throw new TreeAdminError(worktree, `${admin} is not in ${join(commonDir, "worktrees")}`);
  }
  const head = plainText(join(admin, "HEAD"));
  const parsed = head === undefined ? undefined : parseRefFile(head);
  if (!parsed || parsed.kind === "unusable") {
    throw new TreeAdminError(worktree, "its HEAD is not a branch or a commit");
  }
  const record: TreeAdmin = {
    worktree,
    common_dir: commonDir,
    admin_dir: admin,
    head: parsed.kind === "ref" ? `ref: ${parsed.ref}` : parsed.oid,
    files: {},
  };
  for (const name of SERVICE_ADMIN_FILES) {
    const text = plainText(join(admin, name));
    if (text !== undefined) record.files[name] = text;
  }
  const problems = treeAdminProblems(record).filter((p) => !p.startsWith("index"));
  if (problems.length > 0) throw new TreeAdminError(worktree, problems.join("; "));
  return record;
}

/**
 * What differs between the worktree's git files and the record: each problem in a few words
 * (empty when they are as the service left them). Nothing is followed or changed.
 */
export function checkTreeAdmin(a: TreeAdmin): Promise<string[]> {
  return Promise.resolve(treeAdminProblems(a));
}

/**
 * {@link checkTreeAdmin}, in place on the event loop: the files are a few hundred bytes in the
 * page cache, and the index and reflog are only looked at, never read.
 */
export function treeAdminProblems(a: TreeAdmin): string[] {
  const problems: string[] = [];
  if (plainText(join(a.worktree, ".git")) !== gitFileText(a.admin_dir)) {
    problems.push(".git file changed");
  }
  const names = directoryNames(a.admin_dir);
  if (!names) return [...problems, "git directory is not a directory"];
  const expected = expectedTexts(a);
  for (const name of names) {
    const path = join(a.admin_dir, name);
    const want = expected.get(name);
    if (want !== undefined) {
      if (plainText(path) !== want) problems.push(`${name} changed`);
    } else if (GIT_FILES.has(name)) {
      if (!isPlainFile(path)) problems.push(`${name} is not a plain file`);
    } else if (name === "logs") {
      if (!plainLogs(path)) problems.push("logs holds more than a plain HEAD reflog");
    } else problems.push(`${name} is not written by git or the service`);
  }
  for (const name of expected.keys()) {
    if (!names.includes(name)) problems.push(`${name} is missing`);
  }
  return problems;
}

/** True when `dir` is a real directory holding at most a plain `HEAD`. */
function plainLogs(dir: string): boolean {
  const names = directoryNames(dir);
  return names !== undefined &&
    names.every((name) => name === "HEAD" && isPlainFile(join(dir, name)));
}

/** Remove `path` whatever it is; a link is removed, never what it points at. */
async function removeEntry(path: string): Promise<void> {
  await Deno.remove(path, { recursive: true }).catch((e) => {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  });
}

/** Write `text` to a new file at `path` (whatever was there removed first, never followed). */
async function writeNew(path: string, text: string): Promise<void> {
  await removeEntry(path);
  await Deno.writeTextFile(path, text, { createNew: true });
}

/** Options of {@link restoreTreeAdmin}. */
export interface RestoreOptions {
  /**
   * Keep the index when it is a plain file (`keep`: it was never out of the service's hands), or
   * rebuild it from the branch (`rebuild`: untrusted code could write it). Default `rebuild`.
   */
  index?: "keep" | "rebuild";
  signal?: AbortSignal;
}

/**
 * Put the worktree's git files back as the record says: the `.git` file, HEAD, commondir, gitdir
 * and the service's files rewritten, everything else there removed (links removed, never
 * followed), and the index rebuilt from what HEAD names (the files in the worktree are kept; the
 * next `git add -A` reads them again). Returns what was repaired.
 */
export async function restoreTreeAdmin(
  a: TreeAdmin,
  options: RestoreOptions = {},
): Promise<string[]> {
  const repaired = treeAdminProblems(a);
  let names = directoryNames(a.admin_dir);
  if (!names) {
    await removeEntry(a.admin_dir);
    await Deno.mkdir(a.admin_dir, { recursive: true });
    names = [];
  }
  const expected = expectedTexts(a);
  const keepIndex = options.index === "keep" && isPlainFile(join(a.admin_dir, "index"));
  for (const name of names) {
    if (name === "index" && keepIndex) continue;
    const path = join(a.admin_dir, name);
    if (expected.has(name) && plainText(path) === expected.get(name)) continue;
    await removeEntry(path);
  }
  for (const [name, text] of expected) {
    if (plainText(join(a.admin_dir, name)) !== text) {
      await writeNew(join(a.admin_dir, name), text);
    }
  }
  if (plainText(join(a.worktree, ".git")) !== gitFileText(a.admin_dir)) {
    await writeNew(join(a.worktree, ".git"), gitFileText(a.admin_dir));
  }
  if (!keepIndex) {
    const head = OID.test(a.head) ? a.head : a.head.slice("ref: ".length);
    const o = {
      cwd: a.worktree,
      env: { GIT_DIR: a.admin_dir, GIT_COMMON_DIR: a.common_dir, GIT_WORK_TREE: a.worktree },
      signal: options.signal,
    };
    const tree = await git([
      "rev-parse",
      "--verify",
      "--quiet",
      "--end-of-options",
      `${head}^{tree}`,
    ], {
      ...o,
      allowFailure: true,
    });
    // A branch that is gone (deleted by the agent): an empty index, and `git add -A` takes all.
    await git(["read-tree", ...(tree.code === 0 ? [tree.stdout.trim()] : ["--empty"])], o);
  }
  return repaired;
}
