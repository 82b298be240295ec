/**
 * Agent worktrees (DESIGN.md §7): `.sdd/worktrees/<session_id>` on branch `agent/<session_id>`,
 * cut from the target branch's commit, plus the commit of whatever an agent left uncommitted.
 */
import { gitWorktree } from "../git/worktree_admin.ts";
import { join } from "node:path";
import { commitIdentity, GitError, type GitResult, resolveCommit } from "../git/git.ts";
import { type AgentTree, hardenedConfig } from "../git/agent_tree.ts";
import { openWorktree, treeRecordPath } from "./trees.ts";
import { addInOneProcess, sweepHalfMade } from "./one_process_add.ts";
import { dirtyHistory, keepOutOfIndex, rewriteAsOne } from "./keep_out.ts";
import { readRefFile, resolveRef } from "../git/ref_files.ts";
import { isValidId } from "../ids.ts";
import { workspacePaths } from "../workspace.ts";
import { ensureServiceExcluded, SKILL_PREFIX } from "./exclude.ts";

/** Paths a branch's commits since a base hold that never enter a commit (lib/worktrees/keep_out.ts). */
export { dirtyHistory };

/** A worktree could not be created; `fix` is the command that clears the cause. */
export class WorktreeError extends Error {
  constructor(readonly path: string, readonly stderr: string, readonly fix: string) {
    super(`cannot create worktree ${path}: ${stderr.trim()}. Fix: ${fix}`);
    this.name = "WorktreeError";
  }
}

/** A created agent worktree. */
export interface Worktree {
  path: string;
  branch: string;
  base: string;
  /** True when stale worktree metadata had to be pruned first. */
  pruned: boolean;
}

/** Options of {@link createWorktree}. */
export interface CreateWorktreeOptions {
  /** Prefix of injected skill files to exclude (default `service-`). */
  skillPrefix?: string;
  signal?: AbortSignal;
}

/** `agent/<session_id>`. */
export function agentBranch(sessionId: string): string {
  return `agent/${sessionId}`;
}

/** `<root>/.sdd/worktrees/<session_id>`. */
export function worktreePath(root: string, sessionId: string): string {
  return join(workspacePaths(root).worktrees, sessionId);
}

/** Throw unless `sessionId` can safely name a directory and a branch. */
export function requireSessionId(sessionId: string): string {
  if (!isValidId(sessionId) || sessionId.endsWith(".lock") || sessionId.endsWith(".")) {
    throw new RangeError(
      `session id ${JSON.stringify(sessionId)} must be letters, digits, '.', '_', '-' ` +
        "(no '..', not ending in '.' or '.lock')",
    );
  }
  return sessionId;
}

const STALE = /already registered|already exists|is a missing but locked worktree/;

const swept = new Map<string, Promise<unknown>>();

/**
 * Once per process and repository, before its first worktree: what a killed service process
 * left half-made (lib/worktrees/one_process_add.ts) is finished or removed.
 */
function sweepOnce(root: string, signal?: AbortSignal): Promise<unknown> {
  let done = swept.get(root);
  if (!done) {
    done = sweepHalfMade(root, {
      worktrees: workspacePaths(root).worktrees,
      sealed: (id) => {
        try {
          Deno.lstatSync(treeRecordPath(root, id));
          return true;
        } catch {
          return false;
        }
      },
      signal,
    }).catch(() => undefined); // what cannot be swept now stays for `git worktree` to report
    swept.set(root, done);
  }
  return done;
}

/**
 * Create `.sdd/worktrees/<session>` on a new branch `agent/<session>` at `baseCommit`: in the
 * plain case with one git process (lib/worktrees/one_process_add.ts), else with `git worktree
 * add`. Stale metadata (a registered worktree whose directory is gone) is pruned and the add
 * retried once; a leftover branch is reused only when it still points at `baseCommit` (it holds
 * no work). Anything else is a {@link WorktreeError} naming the fix.
 */
export async function createWorktree(
  root: string,
  sessionId: string,
  baseCommit: string,
  options: CreateWorktreeOptions = {},
): Promise<Worktree> {
  requireSessionId(sessionId);
  await ensureServiceExcluded(root, options.skillPrefix ?? SKILL_PREFIX);
  const path = worktreePath(root, sessionId);
  const branch = agentBranch(sessionId);
  const o = options.signal ? { signal: options.signal } : {};
  // The checkout writes files of the target's tree, agents' work among them: no filter runs.
  const config = () => hardenedConfig(root, { signal: options.signal }); // right before each call
  await sweepOnce(root, options.signal);
  const quick = await addInOneProcess({ root, path, branch, base: baseCommit, config, ...o });
  if (quick.made) return { path, branch, base: baseCommit, pruned: false };
  const worktree = (args: string[]) =>
    gitWorktree(root, args, { signal: options.signal, config, allowFailure: true });
  const add = () => worktree(["add", "-q", "-b", branch, "--", path, baseCommit]);

  let result: GitResult = await add();
  if (result.code === 0) return { path, branch, base: baseCommit, pruned: false };
  if (!STALE.test(result.stderr)) throw new WorktreeError(path, result.stderr, fixFor(path));
  await worktree(["prune"]);
  result = await add();
  if (result.code !== 0 && /a branch named .* already exists/.test(result.stderr)) {
    const tip = await resolveCommit(`refs/heads/${branch}`, { cwd: root });
    const base = await resolveCommit(baseCommit, { cwd: root });
    if (tip === undefined || tip !== base) {
      throw new WorktreeError(
        path,
        result.stderr,
        `branch ${branch} already exists with commits of its own; reap the old session ` +
          `(its work is kept at refs/service/rescue/${sessionId}) or use a new session id`,
      );
    }
    result = await worktree(["add", "-q", "--", path, branch]);
  }
  if (result.code === 0) return { path, branch, base: baseCommit, pruned: true };
  throw new WorktreeError(path, result.stderr, fixFor(path));
}

function fixFor(path: string): string {
  return `\`git worktree prune\`, or \`git worktree remove ${path} --force\` ` +
    "(if the directory is not a registered worktree, move it aside)";
}

/** The tip of a worktree's branch after {@link commitPartialWork}. */
export interface PartialWork {
  tip: string;
  /** True when uncommitted work was found and committed. */
  committed: boolean;
  /** Ignored or copied files kept out of the commits (with `base`; lib/worktrees/keep_out.ts). */
  leftOut: string[];
  /** How many of the agent's own commits were rewritten into one because they held such files. */
  rewritten: number;
}

/** Options of {@link commitPartialWork}. */
export interface CommitOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
  /**
   * The repository the worktree belongs to: who commits is asked of it once, not of every
   * worktree (they share its configuration). Default: the worktree itself.
   */
  root?: string;
  /** The worktree already opened for git (lib/worktrees/trees.ts); default: opened here. */
  tree?: AgentTree;
  /** Told what of the worktree's git files had to be put back. */
  warn?: (line: string) => void;
  /**
   * The commit the work was cut from: ignored and copied files added since are kept out of the
   * commit, and agent commits that hold any are rewritten into one (lib/worktrees/keep_out.ts).
   */
  base?: string;
}

/** `options.tree`, or the worktree opened for the service's git (lib/worktrees/trees.ts). */
function treeFor(worktree: string, options: CommitOptions = {}): Promise<AgentTree> {
  return options.tree
    ? Promise.resolve(options.tree)
    : openWorktree(worktree, { signal: options.signal, warn: options.warn });
}

/**
 * The commit `worktree` has checked out when nothing in it is uncommitted (no change staged or
 * not, no untracked file `git add -A` would take), in one `git status`; undefined otherwise.
 */
export async function cleanHead(
  worktree: string,
  options: CommitOptions = {},
): Promise<string | undefined> {
  const tree = await treeFor(worktree, options);
  const status = await tree.git(
    ["status", "--porcelain=v2", "--branch", "-z", "--untracked-files=all"],
    { signal: options.signal, timeoutMs: options.timeoutMs },
  );
  let head: string | undefined;
  for (const entry of status.stdout.split("\0")) {
    if (entry === "") continue;
    if (!entry.startsWith("# ")) return undefined; // a change
    if (entry.startsWith("# branch.oid ")) head = entry.slice("# branch.oid ".length);
  }
  return head && /^[0-9a-f]{40,64}$/.test(head) ? head : undefined;
}

/**
 * Stage everything in `worktree` (`git add -A`, which honours the excludes) and commit it when
 * anything is staged, with the hardened git of lib/git/agent_tree.ts (no hook, no signing, no
 * filter: this commit preserves the bytes the agent left, it does not publish them). Returns
 * the branch tip.
 */
export async function commitPartialWork(
  worktree: string,
  message: string,
  options: CommitOptions = {},
): Promise<PartialWork> {
  const tree = await treeFor(worktree, options);
  const o = { signal: options.signal, timeoutMs: options.timeoutMs };
  await tree.git(["add", "-A"], o);
  const base = options.base;
  // Filtered before committing: what an agent forced in (`git add -f`) is never committed.
  const leftOut = new Set(base ? await keepOutOfIndex(tree, base, o) : []);
  // The agent made no commit of its own (HEAD is still the base): none can hold such a file.
  const dirty = base && await headFromFiles(tree) !== base ? await dirtyHistory(tree, base, o) : [];
  const agentCommits = dirty.length > 0
    ? Number(await tree.text(["rev-list", "--count", `${base}..HEAD`], o))
    : 0;
  // Committing is the question "is anything staged?": only a commit that fails asks it again.
  const commit = ["commit", "-q", "--no-verify", "-m", message];
  const made = await tree.git(commit, {
    ...o,
    env: await commitIdentity(options.root ?? tree.dirs.common_dir),
    allowFailure: true,
  });
  const committed = made.code === 0;
  if (!committed) {
    const staged = await tree.git(["diff", "--cached", "--quiet"], { ...o, allowFailure: true });
    if (staged.code === 1) throw new GitError(commit, worktree, made.code, made.stderr);
    if (staged.code !== 0) {
      throw new GitError(["diff", "--cached", "--quiet"], worktree, staged.code, staged.stderr);
    }
  }
  let tip = await headFromFiles(tree) ?? (await tree.git(["rev-parse", "HEAD"], o)).stdout.trim();
  let rewritten = 0;
  if (base && dirty.length > 0) {
    // The agent's own commits hold them: one commit of the clean tree replaces them all.
    rewritten = agentCommits;
    for (const p of dirty) leftOut.add(p);
    tip = await rewriteAsOne(tree, base, {
      ...o,
      message: `${message}\n\nThe service rewrote the agent's ${rewritten} commit(s) into this ` +
        `one: they held files that never enter a commit (ignored or copied): ${
          [...leftOut].sort().join(", ")
        }`,
      identityRoot: options.root,
    });
  }
  return { tip, committed, leftOut: [...leftOut].sort(), rewritten };
}

/**
 * The commit the tree's HEAD names, read from the files git wrote (HEAD, then a branch's loose
 * ref in the common directory; never a link): undefined when it takes git to say — a packed ref,
 * a symbolic ref further on, or a ref outside `refs/heads/` (`refs/worktree/…`, `refs/bisect/…`
 * live in the worktree's own directory) — which is then asked.
 */
async function headFromFiles(tree: AgentTree): Promise<string | undefined> {
  const head = await readRefFile(join(tree.dirs.admin_dir, "HEAD"));
  if (head.kind === "commit") return head.oid;
  if (head.kind === "unusable" || !head.ref.startsWith("refs/heads/")) return undefined;
  const ref = await resolveRef(tree.dirs.common_dir, head.ref, { followSymbolic: false });
  return ref.kind === "commit" ? ref.oid : undefined;
}
