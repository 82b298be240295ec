/**
 * The service's only traffic with a git remote, in one place that the pull-request landing and
 * remote workers share (DESIGN.md §12, §16): fetch the base branch into its remote-tracking ref,
 * read a branch's tip on the remote, push an agent branch with a lease, delete it after merging.
 *
 * Only `agent/…` branches are ever pushed or deleted: a push to any other branch is refused here,
 * before git runs, so the service can never push to a base branch (a host's branch protection
 * refuses it too; this guard does not rely on it). Pushes are leased on the tip the service last
 * saw (`--force-with-lease=<ref>:<expected>`): work a person pushed meanwhile is never overwritten.
 */
import type { HardenedValue } from "../git/hardened.ts";
import { git, GitError, resolveCommit } from "../git/git.ts";

/** Where the remote is. */
export interface RemoteOptions {
  /** The repository (its common git directory is used from any of its worktrees). */
  root: string;
  /** The remote's name, e.g. `origin`. */
  remote: string;
  signal?: AbortSignal;
  /** Time limit of one git call (default 120 s: a push of a big branch takes a while). */
  timeoutMs?: number;
}

/** A git remote operation failed; `retryable` when it may work later (network, host down). */
export class RemoteError extends Error {
  readonly code = "remote";
  constructor(message: string, readonly retryable: boolean, readonly fix: string) {
    super(message);
    this.name = "RemoteError";
  }
}

/** Branches the service may push: its agents' (`agent/<session>`). */
const PUSHABLE = /^agent\/[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** git's words that mean the remote could not be reached (not a refusal). */
const UNREACHABLE =
  /could not read from remote|unable to access|could not resolve host|connection (refused|timed out|reset)|early eof|the remote end hung up|timed out|temporarily unavailable|\b50[0-4]\b/i;

/** `refs/remotes/<remote>/<branch>`: where the base is fetched to. */
export function trackingRef(remote: string, branch: string): string {
  return `refs/remotes/${remote}/${branch}`;
}

function requirePushable(branch: string): void {
  if (!PUSHABLE.test(branch)) {
    throw new RemoteError(
      `refusing to push ${branch}: the service pushes only its agents' agent/<session> branches`,
      false,
      "work reaches a base branch only through a pull request",
    );
  }
}

/**
 * An agent branch fetched from the remote is an agent's work (a remote worker's, or one pushed by
 * anyone who may push there): every object it brings is checked as it arrives, as a container's
 * commits are (lib/container/git_shadow.ts).
 */
const AGENT_FETCH: readonly HardenedValue[] = [{
  key: "fetch.fsckObjects",
  value: "true",
  why: "an agent branch's objects are checked as they arrive (a tree naming .git or ../)",
}];

async function run(
  o: RemoteOptions,
  args: string[],
  what: string,
  config: readonly HardenedValue[] = [],
) {
  try {
    const r = await git(args, {
      cwd: o.root,
      signal: o.signal,
      timeoutMs: o.timeoutMs ?? 120_000,
      config,
      allowFailure: true,
    });
    if (r.code === 0) return r;
    // `push --porcelain` says why a ref was refused on stdout (`!\t<ref>\t[rejected] (stale info)`).
    const refused = r.stdout.split("\n").filter((l) => l.startsWith("!"))
      .map((l) => l.split("\t").slice(1).join(" "));
    const said = [...refused, ...r.stderr.trim().split("\n").filter(Boolean).slice(-3)]
      .join(" / ");
    throw new RemoteError(
      `${what} failed: ${said || `git exited with ${r.code}`}`,
      UNREACHABLE.test(r.stderr),
      UNREACHABLE.test(r.stderr)
        ? `check that ${o.remote} is reachable; the service tries again`
        : `check \`git remote get-url ${o.remote}\` and that your git credentials may push there`,
    );
  } catch (e) {
    if (e instanceof RemoteError) throw e;
    const timedOut = e instanceof GitError && e.timedOut;
    throw new RemoteError(
      `${what} failed: ${(e as Error).message}`,
      timedOut,
      `check that ${o.remote} is reachable`,
    );
  }
}

/** The URL of the remote, or undefined when no such remote is configured. */
export async function remoteUrl(o: RemoteOptions): Promise<string | undefined> {
  const r = await git(["remote", "get-url", o.remote], { cwd: o.root, allowFailure: true });
  return r.code === 0 ? r.stdout.trim() : undefined;
}

/** Fetch `branch` of the remote into its remote-tracking ref; its tip. */
export async function fetchBranch(o: RemoteOptions, branch: string): Promise<string> {
  const ref = trackingRef(o.remote, branch);
  await run(
    o,
    [
      "fetch",
      "--quiet",
      "--no-tags",
      "--no-write-fetch-head",
      o.remote,
      `+refs/heads/${branch}:${ref}`,
    ],
    `git fetch ${o.remote} ${branch}`,
    branch.startsWith("agent/") ? AGENT_FETCH : [],
  );
  const tip = await resolveCommit(ref, { cwd: o.root });
  if (!tip) throw new RemoteError(`${ref} names no commit after fetching`, false, "");
  return tip;
}

/** The tip of `branch` on the remote, or undefined when it has no such branch. */
export async function remoteTip(o: RemoteOptions, branch: string): Promise<string | undefined> {
  const r = await run(
    o,
    ["ls-remote", "--heads", o.remote, `refs/heads/${branch}`],
    `git ls-remote ${o.remote} ${branch}`,
  );
  const line = r.stdout.split("\n").find((l) => l.endsWith(`\trefs/heads/${branch}`));
  return line ? line.split("\t")[0] : undefined;
}

/** What {@link pushBranch} did. */
export type PushOutcome =
  | { pushed: true }
  /** The remote branch is not at `expected` any more (someone pushed): nothing was overwritten. */
  | { pushed: false; stale: true; detail: string };

/**
 * Push `sha` to `branch` (an `agent/…` branch) on the remote, leased on `expected` (its tip as the
 * service last saw it; undefined: the branch must not exist yet).
 */
export async function pushBranch(
  o: RemoteOptions,
  branch: string,
  sha: string,
  expected: string | undefined,
): Promise<PushOutcome> {
  requirePushable(branch);
  const ref = `refs/heads/${branch}`;
  try {
    await run(o, [
      "push",
      "--porcelain",
      "--no-verify",
      `--force-with-lease=${ref}:${expected ?? ""}`,
      o.remote,
      `${sha}:${ref}`,
    ], `git push ${o.remote} ${branch}`);
    return { pushed: true };
  } catch (e) {
    if (e instanceof RemoteError && /stale info|\(fetch first\)|rejected/.test(e.message)) {
      return { pushed: false, stale: true, detail: e.message };
    }
    throw e;
  }
}

/** Delete `branch` (an `agent/…` branch) on the remote when it is still at `expected`. */
export async function deleteBranch(o: RemoteOptions, branch: string, expected: string) {
  requirePushable(branch);
  const ref = `refs/heads/${branch}`;
  await run(
    o,
    [
      "push",
      "--porcelain",
      "--no-verify",
      `--force-with-lease=${ref}:${expected}`,
      o.remote,
      `:${ref}`,
    ],
    `git push ${o.remote} --delete ${branch}`,
  );
}
