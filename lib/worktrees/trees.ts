/**
 * How the service opens an agent's worktree for its own git (docs/security.md, "The git
 * boundary"). When a worktree is ready and before anything untrusted runs there (its setup, its
 * agent) its git files are sealed: lib/git/tree_admin.ts's record, kept at
 * `.sdd/runtime/trees/<session>.json`. Every later git call of the service there goes through
 * {@link openWorktree}: the files are checked against the record and put back when anything
 * differs, and git runs hardened with the directories the record names (lib/git/agent_tree.ts),
 * never those the worktree's files name. {@link settleWorktree} is the step after a host-process
 * agent: the commit its HEAD names becomes its branch's, and its git files and index are rebuilt.
 */
import { basename, dirname, join, resolve } from "node:path";
import { type AgentTree, openAgentTree } from "../git/agent_tree.ts";
import { git, gitText, resolveCommit } from "../git/git.ts";
import { OID, readRefFile } from "../git/ref_files.ts";
import { plainFileText } from "../git/plain_file.ts";
import {
  checkTreeAdmin,
  recordTreeAdmin,
  restoreTreeAdmin,
  SERVICE_ADMIN_FILES,
  type TreeAdmin,
  TreeAdminError,
} from "../git/tree_admin.ts";
import { writeFileAtomic } from "../util/atomic_write.ts";
import { indexUnchanged, sealIndex } from "./index_seal.ts";
import { serviceWorktreeConfig, WORKTREE_EXCLUDE_FILE } from "./worktree_config.ts";
import { workspacePaths } from "../workspace.ts";

/** `.sdd/runtime/trees/<session>.json`: the sealed record of a session's worktree. */
export function treeRecordPath(root: string, sessionId: string): string {
  return join(workspacePaths(root).runtime, "trees", `${sessionId}.json`);
}

/** The root and session of a path `<root>/.sdd/worktrees/<session>`; undefined for others. */
function agentWorktreeOf(worktree: string): { root: string; sessionId: string } | undefined {
  const dir = resolve(worktree);
  const worktrees = dirname(dir);
  if (basename(worktrees) !== "worktrees" || basename(dirname(worktrees)) !== ".sdd") return;
  return { root: dirname(dirname(worktrees)), sessionId: basename(dir) };
}

const commonDirs = new Map<string, Promise<string>>();

/** The repository's git directory (real path), asked of the checkout at `root` once. */
function commonDirOf(root: string): Promise<string> {
  let found = commonDirs.get(root);
  if (!found) {
    found = gitText(["rev-parse", "--git-common-dir"], { cwd: root })
      .then((dir) => Deno.realPath(resolve(root, dir)));
    found.catch(() => commonDirs.delete(root));
    commonDirs.set(root, found);
  }
  return found;
}

/** Record the git files of `sessionId`'s worktree as they are now, and keep the record. */
export async function sealWorktree(root: string, sessionId: string): Promise<TreeAdmin> {
  const worktree = join(workspacePaths(root).worktrees, sessionId);
  const record = await recordTreeAdmin(await Deno.realPath(worktree), await commonDirOf(root));
  const path = treeRecordPath(root, sessionId);
  await Deno.mkdir(dirname(path), { recursive: true });
  await writeFileAtomic(path, new TextEncoder().encode(JSON.stringify(record, null, 2) + "\n"));
  sealIndex(record);
  return record;
}

/** Forget the record of a worktree that is gone. */
export async function dropTreeRecord(root: string, sessionId: string): Promise<void> {
  await Deno.remove(treeRecordPath(root, sessionId)).catch(() => {});
}

/** A sealed record is well under this (paths, a HEAD line, two short files). */
const RECORD_MAX_BYTES = 1 << 20;

/** The sealed record, when there is one that fits `worktree` and `commonDir`. */
function sealedRecord(
  root: string,
  sessionId: string,
  worktree: string,
  commonDir: string,
): TreeAdmin | undefined {
  let record: TreeAdmin;
  try {
    // In place, as data: a host-process agent can put anything at that path, a FIFO too.
    const text = plainFileText(treeRecordPath(root, sessionId), RECORD_MAX_BYTES);
    if (text === undefined) return undefined;
    record = JSON.parse(text);
  } catch {
    return undefined;
  }
  const fits = record.worktree === worktree && record.common_dir === commonDir &&
    dirname(record.admin_dir) === join(commonDir, "worktrees") &&
    /^(ref: refs\/heads\/.+|[0-9a-f]{40,64})$/.test(record.head) &&
    Object.keys(record.files ?? {}).every((n) => SERVICE_ADMIN_FILES.includes(n));
  return fits ? record : undefined;
}

/**
 * A record for a worktree sealed by no one (made before records, or a start that failed before
 * its seal): the directories the service always makes, HEAD on the session's branch, and of the
 * files there only those the service could have written.
 */
async function derivedRecord(
  worktree: string,
  commonDir: string,
  sessionId: string | undefined,
): Promise<TreeAdmin> {
  let admin = join(commonDir, "worktrees", basename(worktree));
  const named = /^gitdir: (.+)\n?$/.exec(
    await Deno.readTextFile(join(worktree, ".git")).catch(() => ""),
  )?.[1];
  if (named && dirname(resolve(worktree, named)) === join(commonDir, "worktrees")) {
    admin = resolve(worktree, named); // git chose another name (that one was taken)
  }
  let head: string;
  if (sessionId !== undefined) head = `ref: refs/heads/agent/${sessionId}`;
  else {
    const now = await readRefFile(join(admin, "HEAD"));
    if (now.kind === "unusable") throw new TreeAdminError(worktree, `HEAD: ${now.why}`);
    head = now.kind === "ref" ? `ref: ${now.ref}` : now.oid;
  }
  const files: Record<string, string> = {};
  const exclude = join(admin, WORKTREE_EXCLUDE_FILE);
  const st = await Deno.lstat(exclude).catch(() => undefined);
  if (st?.isFile && !st.isSymlink) {
    files["service-exclude"] = await Deno.readTextFile(exclude);
    files["config.worktree"] = serviceWorktreeConfig(admin);
  }
  return { worktree, common_dir: commonDir, admin_dir: admin, head, files };
}

/** The repository of a worktree outside `.sdd/worktrees/` (a test's), from its own files. */
async function commonDirFromFiles(worktree: string): Promise<string> {
  const named = /^gitdir: (.+)\n?$/.exec(await Deno.readTextFile(join(worktree, ".git")))?.[1];
  if (!named) throw new TreeAdminError(worktree, "its .git file does not name a git directory");
  return await Deno.realPath(resolve(resolve(worktree, named), "../.."));
}

/** The record of the worktree at `worktree`: the sealed one, else a derived one. */
export async function treeRecordOf(worktree: string): Promise<TreeAdmin> {
  const dir = Deno.realPathSync(worktree);
  const agent = agentWorktreeOf(dir);
  if (!agent) return await derivedRecord(dir, await commonDirFromFiles(dir), undefined);
  const commonDir = await commonDirOf(agent.root);
  return sealedRecord(agent.root, agent.sessionId, dir, commonDir) ??
    await derivedRecord(
      dir,
      commonDir,
      agent.sessionId.startsWith("_") ? undefined : agent.sessionId,
    );
}

/** Options of {@link openWorktree}. */
export interface OpenWorktreeOptions {
  signal?: AbortSignal;
  /**
   * Put back what differs from the record (default). `false`: refuse instead (an agent may
   * still be running there, and its files are not the service's to rewrite yet).
   */
  repair?: boolean;
  /** Told what was put back. */
  warn?: (line: string) => void;
}

/**
 * The service's git in the worktree at `worktree`: its git files checked against the record (put
 * back, the index rebuilt, when anything differs), then hardened git with the record's
 * directories.
 */
export async function openWorktree(
  worktree: string,
  options: OpenWorktreeOptions = {},
): Promise<AgentTree> {
  const record = await treeRecordOf(worktree);
  const problems = await checkTreeAdmin(record);
  if (problems.length > 0) {
    if (options.repair === false) throw new TreeAdminError(worktree, problems.join("; "));
    await restoreTreeAdmin(record, { signal: options.signal });
    options.warn?.(`${worktree}: its git files were put back (${problems.join("; ")})`);
  }
  return await openAgentTree(record, { signal: options.signal });
}

/** What {@link settleWorktree} did. */
export interface SettledTree {
  /** What differed from the record and was put back. */
  repaired: string[];
  /** The branch's new tip, when HEAD named another commit. */
  tip?: string;
}

/**
 * After a host-process agent (or anything untrusted run as one) in `sessionId`'s worktree: the
 * commit its HEAD names — read as data, a ref resolved by git, never a link followed — becomes
 * its branch's, then the git files are put back and the index rebuilt from the branch, unless it
 * is byte for byte the one sealed and the branch still names the commit it was built from
 * (lib/worktrees/index_seal.ts: rebuilding would write the same entries, without their stat
 * information).
 */
export async function settleWorktree(
  root: string,
  sessionId: string,
  options: { signal?: AbortSignal } = {},
): Promise<SettledTree> {
  const record = await treeRecordOf(join(workspacePaths(root).worktrees, sessionId));
  const head = await readRefFile(join(record.admin_dir, "HEAD"));
  const tip = await adoptHead(root, record, head, options.signal);
  const index = indexUnchanged(record) ? "keep" : "rebuild";
  const repaired = await restoreTreeAdmin(record, { index, signal: options.signal });
  return tip ? { repaired, tip } : { repaired };
}

/** Move the record's branch to the commit `head` names (asked in the checkout at `root`). */
async function adoptHead(
  root: string,
  record: TreeAdmin,
  head: Awaited<ReturnType<typeof readRefFile>>,
  signal?: AbortSignal,
): Promise<string | undefined> {
  if (!record.head.startsWith("ref: ") || head.kind === "unusable") return undefined;
  const branch = record.head.slice("ref: ".length);
  if (head.kind === "ref" && head.ref === branch) return undefined; // it names the branch itself
  const o = { cwd: root, signal };
  const named = head.kind === "commit"
    ? await resolveCommit(head.oid, o)
    : await resolveCommit(head.ref, o);
  const now = await resolveCommit(branch, o);
  if (!named || !OID.test(named) || named === now) return undefined;
  await git(["update-ref", "-m", "service: the agent's HEAD", branch, named, now ?? ""], o);
  return named;
}
