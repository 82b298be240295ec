/**
 * What a finished run leaves on the shared remote, removed (issue 35: refs piled up): the run's
 * published base (`refs/service/base/<run_id>`, DESIGN.md §16) and the `agent/<session>` branches
 * of its own sessions — pushed by workers, or by the orchestrator for an attempt that continued
 * earlier work — whose work is merged or kept on the orchestrator's rescue refs by now. Only refs
 * of this run's sessions (named by its journal's claims) are touched, never another run's or a
 * person's; a stopped run keeps them (its resume continues from them).
 */
import { git } from "../git/git.ts";
import type { RemoteOptions } from "../git/remote.ts";
import { baseRef } from "./remote_refs.ts";

/** Options of {@link sweepRunRemote}. */
export interface SweepOptions {
  remote: RemoteOptions;
  runId: string;
  journalPath: string;
  /** Keep the agent branches (`landing.delete_branch: false`: the user keeps them). */
  keepBranches?: boolean;
  /**
   * The run lands through pull requests (it pushed to the remote). Otherwise the remote is
   * looked at only when a worker ran one of its sessions: a run that never used the remote never
   * calls it (a user's `origin` may ask for credentials).
   */
  pullRequests?: boolean;
}

/** The refs of the run's sessions and base that `ls-remote` lists (pure). */
export function runRefs(listed: string, runId: string, sessions: Iterable<string>): string[] {
  const wanted = new Set([baseRef(runId), ...[...sessions].map((s) => `refs/heads/agent/${s}`)]);
  return listed.split("\n").map((l) => l.split("\t")[1]?.trim() ?? "").filter((r) => wanted.has(r));
}

/**
 * The sessions the journal's `task_claimed` rows name, and whether a worker ran any (a torn line
 * says nothing; pure).
 */
export function claimedSessions(journal: string): { sessions: Set<string>; remote: boolean } {
  const sessions = new Set<string>();
  let remote = false;
  for (const line of journal.split("\n")) {
    if (!line.includes('"task_claimed"')) continue;
    try {
      const row = JSON.parse(line);
      const session = row?.data?.session_id;
      if (row?.type === "task_claimed" && typeof session === "string" && session) {
        sessions.add(session);
        if (typeof row.data.worker === "string") remote = true;
      }
    } catch { /* torn */ }
  }
  return { sessions, remote };
}

/** Delete the run's refs from the remote; the refs deleted (none when it cannot be reached). */
export async function sweepRunRemote(o: SweepOptions): Promise<string[]> {
  const { sessions, remote } = claimedSessions(
    await Deno.readTextFile(o.journalPath).catch(() => ""),
  );
  if (!remote && !o.pullRequests) return [];
  const patterns = [baseRef(o.runId), ...(o.keepBranches ? [] : ["refs/heads/agent/*"])];
  const cwd = o.remote.root;
  const listed = await git(["ls-remote", o.remote.remote, ...patterns], {
    cwd,
    timeoutMs: 60_000,
    allowFailure: true,
  });
  if (listed.code !== 0) return [];
  const refs = runRefs(listed.stdout, o.runId, o.keepBranches ? [] : sessions);
  if (refs.length === 0) return [];
  const pushed = await git(
    ["push", "--porcelain", "--no-verify", o.remote.remote, ...refs.map((r) => `:${r}`)],
    { cwd, timeoutMs: 120_000, allowFailure: true },
  );
  if (pushed.code !== 0) return [];
  return refs;
}
