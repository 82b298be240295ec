/**
 * Remote operations the workers need beyond lib/landing/push.ts (which pushes only `agent/…`
 * branches): publishing the commit a claim names under `refs/service/base/<run_id>` so that a
 * worker can fetch it when it is on no branch of the remote (DESIGN.md §16), and fetching such a
 * ref. Only `refs/service/base/…` is ever written here.
 */
import { git } from "../git/git.ts";
import { RemoteError, type RemoteOptions } from "../landing/push.ts";
import { ID_PATTERN } from "../ids.ts";

/** `refs/service/base/<run_id>`: where the base of a run's remote work is published. */
export function baseRef(runId: string): string {
  if (!ID_PATTERN.test(runId)) throw new RangeError(`bad run id ${JSON.stringify(runId)}`);
  return `refs/service/base/${runId}`;
}

async function remoteGit(o: RemoteOptions, args: string[], what: string): Promise<void> {
  const r = await git(args, {
    cwd: o.root,
    signal: o.signal,
    timeoutMs: o.timeoutMs ?? 120_000,
    allowFailure: true,
  });
  if (r.code === 0) return;
  const said = r.stderr.trim().split("\n").filter(Boolean).slice(-3).join(" / ");
  throw new RemoteError(
    `${what} failed: ${said || `git exited with ${r.code}`}`,
    true,
    `check that ${o.remote} is reachable and that your git credentials may push there`,
  );
}

/** Point `refs/service/base/<run_id>` of the remote at `sha` (forced: the base moves on). */
export async function publishBase(o: RemoteOptions, runId: string, sha: string): Promise<void> {
  const ref = baseRef(runId);
  await remoteGit(
    o,
    ["push", "--porcelain", "--no-verify", "--force", o.remote, `${sha}:${ref}`],
    `git push ${o.remote} ${ref}`,
  );
}

/** Fetch `ref` of the remote (a published base) into the same local ref. */
export async function fetchBase(o: RemoteOptions, ref: string): Promise<void> {
  if (!/^refs\/service\/base\/[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(ref)) {
    throw new RemoteError(`refusing to fetch ${ref}: not a published base`, false, "");
  }
  await remoteGit(
    o,
    ["fetch", "--quiet", "--no-tags", "--no-write-fetch-head", o.remote, `+${ref}:${ref}`],
    `git fetch ${o.remote} ${ref}`,
  );
}
