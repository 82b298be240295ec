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
import { printable } from "../util/printable.ts";
import { writeFileAtomic } from "../util/atomic_write.ts";
import { runDir, type WorkspacePaths } from "../workspace.ts";

/** One commit on the branch's first-parent line that the service did not make. */
export interface OutsideCommit {
  sha: string;
  subject: string;
  author: string;
}

/** What `outside_commits.json` holds. */
export interface OutsideCommitsRecord {
  branch: string;
  /** The branch's tip when the run began (a resumed run: when it first began). */
  start: string;
  /** Set when the run ended: the commits named then, newest first (at most {@link MAX_NAMED}). */
  outside?: OutsideCommit[];
  /** How many there were, when more than were named. */
  more?: number;
  /** The tip the run began at is no longer on the branch: it was reset or rewritten. */
  rewritten?: boolean;
}

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

/**
 * The warning's lines for `record` (none when the service made every commit). Pure; subjects and
 * authors are anyone's words, so they are escaped here.
 */
export function outsideCommitsWarning(record: OutsideCommitsRecord, runId?: string): string[] {
  const commits = record.outside ?? [];
  if (commits.length === 0 && !record.rewritten) return [];
  const run = runId ? `run ${runId}` : "this run";
  const lines = [
    `WARNING: ${record.branch} ${
      record.rewritten
        ? `no longer holds ${
          record.start.slice(0, 10)
        }, its tip when ${run} began (it was reset or rewritten)`
        : `gained commits the service did not make while ${run} was live`
    }; they were not verified, gated or reviewed by it:`,
    ...commits.map((c) =>
      `  ${c.sha.slice(0, 10)} ${printable(c.subject)} (${printable(c.author)})`
    ),
    ...(record.more ? [`  … and ${record.more} more`] : []),
    "  If you did not make them, look at them before you push (`git log --first-parent " +
    `${record.start.slice(0, 10)}..${record.branch}\`): an agent run as a host process can move ` +
    "your branch; `isolation: container` keeps it out (docs/security.md).",
  ];
  return lines;
}
