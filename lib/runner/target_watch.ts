/**
 * Watching the target branch for commits the service did not make while a run was live
 * (lib/runs/outside_commits.ts): its tip is recorded as the run begins (a resumed run keeps the
 * tip it first began at), and at the run's end the branch's first-parent line since then is
 * walked; each commit on it that is not one of the run's journaled merges (`task_merged.commit`)
 * is named in the run's last lines and, from the record, by `status`.
 */
import { git, resolveCommit } from "../git/git.ts";
import { MAX_NAMED, readOutsideCommits, writeOutsideCommits } from "../runs/outside_commits.ts";
import { type OutsideCommit, outsideCommitsWarning } from "../runs/outside_commits_words.ts";

/** What {@link watchTargetBranch} watches. */
export interface TargetWatch {
  root: string;
  branch: string;
  /** `.sdd/runs/<run_id>/outside_commits.json`. */
  recordPath: string;
  /** The run's journal: its `task_merged` rows name the commits the service made. */
  journal: string;
}

/**
 * Record the branch's tip now; the returned function walks what it gained since, records it as
 * the run's end and words it (no lines when the service made every commit). A record that cannot
 * be written costs only `status`'s copy of the warning.
 */
export async function watchTargetBranch(w: TargetWatch): Promise<() => Promise<string[]>> {
  const ref = `refs/heads/${w.branch}`;
  const start = readOutsideCommits(w.recordPath)?.start ??
    await resolveCommit(ref, { cwd: w.root }).catch(() => undefined);
  if (!start) return () => Promise.resolve([]);
  await writeOutsideCommits(w.recordPath, { branch: w.branch, start }).catch(() => {});
  return async () => {
    const tip = await resolveCommit(ref, { cwd: w.root }).catch(() => undefined);
    if (!tip || tip === start) return [];
    const ancestor = await git(["merge-base", "--is-ancestor", start, tip], { cwd: w.root });
    const made = await mergedCommits(w.journal);
    const walked = await git(
      ["log", "--first-parent", "--no-decorate", "--format=%H%x1f%an%x1f%s", `${start}..${tip}`],
      { cwd: w.root },
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
    await writeOutsideCommits(w.recordPath, record).catch(() => {});
    return outsideCommitsWarning(record);
  };
}

/** The commits the run's `task_merged` rows name (rows that parse; the chain is not the point). */
async function mergedCommits(journal: string): Promise<Set<string>> {
  const made = new Set<string>();
  const text = await Deno.readTextFile(journal).catch(() => "");
  for (const line of text.split("\n")) {
    if (!line.includes('"task_merged"')) continue;
    try {
      const row = JSON.parse(line) as { type?: string; data?: { commit?: unknown } };
      if (row.type === "task_merged" && typeof row.data?.commit === "string") {
        made.add(row.data.commit);
      }
    } catch { /* a torn line names nothing */ }
  }
  return made;
}
