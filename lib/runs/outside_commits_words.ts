/**
 * The words of the warning that a run's target branch gained commits the service did not make
 * (lib/runs/outside_commits.ts) — one wording for the terminal, `status` and the board — and the
 * record's shape. Pure, importing only the escaping: the board's islands import it.
 */
import { printable } from "../util/printable.ts";

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

/**
 * The warning's lines for `record` (none when the service made every commit). Pure; subjects and
 * authors are anyone's words, so they are escaped here.
 */
export function outsideCommitsWarning(record: OutsideCommitsRecord, runId?: string): string[] {
  const commits = record.outside ?? [];
  if (commits.length === 0 && !record.rewritten) return [];
  const run = runId ? `run ${runId}` : "this run";
  const lines = [
    `WARNING: ${printable(record.branch)} ${
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
    `${record.start.slice(0, 10)}..${
      printable(record.branch)
    }\`): an agent run as a host process can move ` +
    "your branch; `isolation: container` keeps it out (docs/security.md).",
  ];
  return lines;
}

/** The `outside_commits` part of `/status` (lib/status/outside_commits.ts): the run and its record. */
export interface OutsideCommitsStatus extends OutsideCommitsRecord {
  run_id: string;
}
