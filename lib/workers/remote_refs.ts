/**
 * What remote work writes to and reads from the remote (DESIGN.md §16), and nothing else: the
 * commit a claim names, published under `refs/service/base/<run_id>` so that a worker can fetch
 * it when it is on no branch of the remote, and a session's own branch `agent/<session_id>`,
 * which the worker pushes its agent's work to (leased on the tip it last pushed) and which is
 * fetched with every object checked as it arrives (it is an agent's work). The git
 * mechanism is lib/git/remote.ts; the ids are checked by the one id rule (lib/ids.ts) before
 * git runs, so no other ref can be named here.
 */
import { isValidId } from "../ids.ts";
import {
  fetchBranch,
  fetchRef,
  type PushOutcome,
  pushRef,
  RemoteError,
  type RemoteOptions,
} from "../git/remote.ts";

/** `refs/service/base/<run_id>`: where the base of a run's remote work is published. */
export function baseRef(runId: string): string {
  if (!isValidId(runId)) throw new RangeError(`bad run id ${JSON.stringify(runId)}`);
  return `refs/service/base/${runId}`;
}

/** Point `refs/service/base/<run_id>` of the remote at `sha` (forced: the base moves on). */
export async function publishBase(o: RemoteOptions, runId: string, sha: string): Promise<void> {
  await pushRef(o, { ref: baseRef(runId), sha, lease: "any" });
}

/** Fetch `ref` of the remote (a published base) into the same local ref. */
export async function fetchBase(o: RemoteOptions, ref: string): Promise<void> {
  const runId = ref.startsWith("refs/service/base/") ? ref.slice("refs/service/base/".length) : "";
  if (!isValidId(runId)) {
    throw new RemoteError(`refusing to fetch ${ref}: not a published base`, false, "");
  }
  await fetchRef(o, ref);
}

function requireSession(sessionId: string, what: string): void {
  if (!isValidId(sessionId)) {
    throw new RemoteError(
      `refusing to ${what} agent/${sessionId}: not a session id`,
      false,
      "remote work names only the agent/<session> branch of a work order",
    );
  }
}

/**
 * Fetch the session's branch `agent/<session_id>` into its remote-tracking ref, every object
 * checked as it arrives; its tip.
 */
export async function fetchSessionBranch(o: RemoteOptions, sessionId: string): Promise<string> {
  requireSession(sessionId, "fetch");
  return await fetchBranch(o, `agent/${sessionId}`, { checkObjects: true });
}

/** A session's branch push: its tip, and the tip the remote is expected to hold (none: new). */
export interface SessionPush {
  sessionId: string;
  sha: string;
  expected?: string;
}

/**
 * Push `sha` to the session's branch `agent/<session_id>`, leased on `expected` (the tip last
 * pushed; undefined: the branch must not exist yet).
 */
export async function pushSessionBranch(
  o: RemoteOptions,
  { sessionId, sha, expected }: SessionPush,
): Promise<PushOutcome> {
  requireSession(sessionId, "push");
  return await pushRef(o, {
    ref: `refs/heads/agent/${sessionId}`,
    sha,
    lease: expected ?? null,
  });
}
