/**
 * Commits the target branch gained while a run was live that the service did not make. In merge
 * mode the service lands each task as one merge commit on the branch (lib/merge/merge.ts), so on
 * the branch's first-parent line every other commit came from elsewhere: a person who committed
 * meanwhile — or an agent run as a host process, which can move your branch with its own git
 * (docs/security.md). The run's last lines and `status` name them from
 * `.sdd/runs/<run_id>/outside_commits.json`, so nothing lands on your branch unsaid.
 */
import { join } from "node:path";
import { readPlainJson } from "../git/plain_file.ts";
import { writeFileAtomic } from "../util/atomic_write.ts";
import { runDir, type WorkspacePaths } from "../workspace.ts";
import type { OutsideCommit, OutsideCommitsRecord } from "./outside_commits_words.ts";

/** Commits named one by one; the rest are counted. */
export const MAX_NAMED = 10;

/** `.sdd/runs/<run_id>/outside_commits.json`. */
export function outsideCommitsPath(paths: WorkspacePaths, runId: string): string {
  return join(runDir(paths, runId), "outside_commits.json");
}

/** Write the record (atomically). */
export async function writeOutsideCommits(
  path: string,
  record: OutsideCommitsRecord,
): Promise<void> {
  await writeFileAtomic(path, JSON.stringify(record) + "\n");
}

/** The record at `path`; undefined when there is none or it is not one (an agent can write it). */
export function readOutsideCommits(path: string): OutsideCommitsRecord | undefined {
  const parsed = readPlainJson(path, 1 << 20);
  const r = parsed as Partial<OutsideCommitsRecord> | null;
  if (
    !r || typeof r !== "object" || typeof r.branch !== "string" ||
    !/^[0-9a-f]{40,64}$/.test(r.start ?? "")
  ) {
    return undefined;
  }
  const commits = Array.isArray(r.outside) ? r.outside.filter(isCommit) : undefined;
  return {
    branch: r.branch,
    start: r.start!,
    ...(commits ? { outside: commits.slice(0, MAX_NAMED) } : {}),
    ...(typeof r.more === "number" && r.more > 0 ? { more: r.more } : {}),
    ...(r.rewritten === true ? { rewritten: true } : {}),
  };
}

function isCommit(c: unknown): c is OutsideCommit {
  const o = c as Record<string, unknown> | null;
  return !!o && typeof o.sha === "string" && /^[0-9a-f]{40,64}$/.test(o.sha) &&
    typeof o.subject === "string" && typeof o.author === "string";
}
