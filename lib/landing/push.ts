/**
 * Landing's rule for what reaches a remote (DESIGN.md §12): only the agents' `agent/<session>`
 * branches are ever pushed or deleted. Any other branch is refused here, before git runs, so the
 * service can never push to a base branch (a host's branch protection refuses it too; this guard
 * does not rely on it). The git mechanism — the leased push, the fetch, the tips — is
 * lib/git/remote.ts; pushes are leased on the tip the service last saw, so work a person pushed
 * meanwhile is never overwritten.
 */
import { isValidId } from "../ids.ts";
import {
  deleteRef,
  type PushOutcome,
  pushRef,
  RemoteError,
  type RemoteOptions,
} from "../git/remote.ts";

/** True for a branch the service may push: its agents' `agent/<session>`. */
export function isPushableBranch(branch: string): boolean {
  return branch.startsWith("agent/") && isValidId(branch.slice("agent/".length));
}

function requirePushable(branch: string): void {
  if (!isPushableBranch(branch)) {
    throw new RemoteError(
      `refusing to push ${branch}: the service pushes only its agents' agent/<session> branches`,
      false,
      "work reaches a base branch only through a pull request",
    );
  }
}

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
  return await pushRef(o, { ref: `refs/heads/${branch}`, sha, lease: expected ?? null });
}

/** Delete `branch` (an `agent/…` branch) on the remote when it is still at `expected`. */
export async function deleteBranch(o: RemoteOptions, branch: string, expected: string) {
  requirePushable(branch);
  await deleteRef(o, `refs/heads/${branch}`, expected);
}
