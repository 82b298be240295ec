/**
 * Watching the target branch for commits the service did not make while a run was live
 * (lib/runs/outside_commits.ts): its tip is recorded as the run begins (a resumed run keeps the
 * tip it first began at), and at the run's end the branch's first-parent line since then is
 * walked; each commit on it that is not one of the run's journaled merges (`task_merged.commit`)
 * is named in the run's last lines and, from the record, by `status`.
 */
import { git, resolveCommit } from "../git/git.ts";
import {
  MAX_NAMED,
  outsideCommitsPath,
  readOutsideCommits,
  writeOutsideCommits,
} from "../runs/outside_commits.ts";
import type { WorkspacePaths } from "../workspace.ts";
import { mergedRows } from "./store_repair.ts";
import { type OutsideCommit, outsideCommitsWarning } from "../runs/outside_commits_words.ts";

/** What {@link watchTargetBranch} watches. */
export interface TargetWatch {
  paths: WorkspacePaths;
  branch: string;
  /** The run: its record (`.sdd/runs/<run_id>/outside_commits.json`), and its journal, whose
   * `task_merged` rows name the commits the service made. */
  runId: string;
}

/**
 * Record the branch's tip now; the returned function walks what it gained since, records it as
 * the run's end and words it (no lines when the service made every commit). A record that cannot
 * be written costs only `status`'s copy of the warning.
 */
export async function watchTargetBranch(w: TargetWatch): Promise<() => Promise<string[]>> {
  const ref = `refs/heads/${w.branch}`;
  const recordPath = outsideCommitsPath(w.paths, w.runId);
  const start = readOutsideCommits(recordPath)?.start ??
    await resolveCommit(ref, { cwd: w.paths.root }).catch(() => undefined);
  if (!start) return () => Promise.resolve([]);
  await writeOutsideCommits(recordPath, { branch: w.branch, start }).catch(() => {});
  return async () => {
    const tip = await resolveCommit(ref, { cwd: w.paths.root }).catch(() => undefined);
    if (!tip) return [];
    const ancestor = await git(["merge-base", "--is-ancestor", start, tip], { cwd: w.paths.root });
    const made = new Set(
      [...(await mergedRows(w.paths, w.runId)).values()].flatMap((r) => r.commit ?? []),
    );
    const walked = await git(
      ["log", "--first-parent", "--no-decorate", "--format=%H%x1f%an%x1f%s", `${start}..${tip}`],
      { cwd: w.paths.root },
    );
    const outside: OutsideCommit[] = walked.code !== 0 ? [] : walked.stdout.split("\n")
      .filter((line) => line !== "")
      .map((line) => line.split("\x1f"))
      .filter(([sha]) => !made.has(sha))
      .map(([sha, author, subject]) => ({ sha, author: author ?? "", subject: subject ?? "" }));
    const record = {
      branch: w.branch,
      start,
      outside: outside.slice(0, MAX_NAMED),
      ...(outside.length > MAX_NAMED ? { more: outside.length - MAX_NAMED } : {}),
      ...(ancestor.code === 1 ? { rewritten: true } : {}),
    };
    await writeOutsideCommits(recordPath, record).catch(() => {});
    return outsideCommitsWarning(record);
  };
}
