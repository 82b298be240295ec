/**
 * The service's traffic with a git remote, as git mechanism only: fetch a branch into its
 * remote-tracking ref or a ref into the same local ref, read a branch's tip on the remote, push
 * a commit to a ref under a lease, delete a ref under a lease. Which refs may be pushed is the
 * callers' policy (lib/landing/push.ts pushes only `agent/<session>` branches, lib/workers/
 * remote_refs.ts only `refs/service/base/<run>`); nothing here decides it.
 *
 * A lease names what the remote ref must be for the push to go ahead (`--force-with-lease`):
 * work someone else pushed meanwhile is never overwritten. A failure is a {@link RemoteError}
 * saying whether it may work later (the remote could not be reached) and what to check.
 */
import { git, GitError, resolveCommit } from "./git.ts";
import type { HardenedValue } from "./hardened.ts";
import { serialised } from "../async/serialised.ts";

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

/**
 * What the remote ref must be for a push to go ahead: the tip the caller last saw, `null` for
 * "it must not exist yet", or `"any"` to move it whatever it is (a ref only the service writes).
 */
export type Lease = string | null | "any";

/** One push: `sha` to `ref` (a full ref name) under `lease`. */
export interface RefPush {
  ref: string;
  sha: string;
  lease: Lease;
}

/** What {@link pushRef} did. */
export type PushOutcome =
  | { pushed: true }
  /** The remote ref is not what the lease named (someone pushed): nothing was overwritten. */
  | { pushed: false; stale: true; detail: string };

/** Options of {@link fetchBranch}. */
export interface FetchOptions {
  /**
   * Check every object as it arrives (`fetch.fsckObjects`): the branch is someone else's work, an
   * agent's (a tree naming `.git` or `../` is refused), as a container's commits are checked
   * (lib/container/git_shadow.ts). Default false: a base branch is the user's own.
   */
  checkObjects?: boolean;
}

const CHECK_OBJECTS: readonly HardenedValue[] = [{
  key: "fetch.fsckObjects",
  value: "true",
  why: "an agent branch's objects are checked as they arrive (a tree naming .git or ../)",
}];

/** git's words that mean the remote could not be reached (not a refusal). */
const UNREACHABLE =
  /could not read from remote|unable to access|could not resolve host|connection (refused|timed out|reset)|early eof|the remote end hung up|timed out|temporarily unavailable|\b50[0-4]\b/i;

/** `refs/remotes/<remote>/<branch>`: where a fetched branch is kept. */
export function trackingRef(remote: string, branch: string): string {
  return `refs/remotes/${remote}/${branch}`;
}

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
    const unreachable = UNREACHABLE.test(r.stderr);
    throw new RemoteError(
      `${what} failed: ${said || `git exited with ${r.code}`}`,
      unreachable,
      unreachable
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
export async function fetchBranch(
  o: RemoteOptions,
  branch: string,
  options: FetchOptions = {},
): Promise<string> {
  const ref = trackingRef(o.remote, branch);
  await fetchInto(
    o,
    `refs/heads/${branch}`,
    ref,
    `git fetch ${o.remote} ${branch}`,
    options.checkObjects ? CHECK_OBJECTS : [],
  );
  const tip = await resolveCommit(ref, { cwd: o.root });
  if (!tip) throw new RemoteError(`${ref} names no commit after fetching`, false, "");
  return tip;
}

/** Fetch `ref` (a full ref name) of the remote into the same local ref. */
export async function fetchRef(o: RemoteOptions, ref: string): Promise<void> {
  await fetchInto(o, ref, ref, `git fetch ${o.remote} ${ref}`);
}

/**
 * One fetch into `to` of a repository at a time in this process: two fetches that update the same
 * local ref at once (a worker's slots starting agents together, each fetching the run's base
 * after it moved) make the later one fail with `cannot lock ref …: is at X but expected Y`.
 */
async function fetchInto(
  o: RemoteOptions,
  from: string,
  to: string,
  what: string,
  config: readonly HardenedValue[] = [],
) {
  await serialised(`git-fetch:${o.root}:${to}`, () =>
    run(
      o,
      ["fetch", "--quiet", "--no-tags", "--no-write-fetch-head", o.remote, `+${from}:${to}`],
      what,
      config,
    ));
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

function leaseArg(ref: string, lease: Lease): string {
  return lease === "any" ? "--force" : `--force-with-lease=${ref}:${lease ?? ""}`;
}

/** Push `push.sha` to `push.ref` on the remote under `push.lease` (hooks are not run). */
export async function pushRef(o: RemoteOptions, push: RefPush): Promise<PushOutcome> {
  try {
    await run(
      o,
      [
        "push",
        "--porcelain",
        "--no-verify",
        leaseArg(push.ref, push.lease),
        o.remote,
        `${push.sha}:${push.ref}`,
      ],
      `git push ${o.remote} ${push.ref.replace(/^refs\/heads\//, "")}`,
    );
    return { pushed: true };
  } catch (e) {
    if (
      push.lease !== "any" && e instanceof RemoteError &&
      /stale info|\(fetch first\)|rejected/.test(e.message)
    ) {
      return { pushed: false, stale: true, detail: e.message };
    }
    throw e;
  }
}

/** Delete `ref` (a full ref name) on the remote when it is still at `lease`. */
export async function deleteRef(o: RemoteOptions, ref: string, lease: string): Promise<void> {
  await run(
    o,
    ["push", "--porcelain", "--no-verify", leaseArg(ref, lease), o.remote, `:${ref}`],
    `git push ${o.remote} --delete ${ref.replace(/^refs\/heads\//, "")}`,
  );
}
