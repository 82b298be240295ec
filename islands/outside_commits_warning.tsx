/**
 * The board's warning that the latest run's branch gained commits the service did not make (the
 * `outside_commits` part of `/status`, lib/status/outside_commits.ts): each commit on its line,
 * in the same words as the terminal and `status`.
 */
import {
  type OutsideCommitsStatus,
  outsideCommitsWarning,
} from "../lib/runs/outside_commits_words.ts";

/** The warning, or nothing when the service made every commit. */
export function OutsideCommitsWarning({ part }: { part: OutsideCommitsStatus | null }) {
  if (!part || typeof part.branch !== "string" || typeof part.start !== "string") return null;
  const lines = outsideCommitsWarning(part, part.run_id);
  if (lines.length === 0) return null;
  return (
    <div class="git-setup-warning" role="alert" data-outside-commits={part.run_id}>
      <strong>{lines[0]}</strong>
      <ul>
        {lines.slice(1, -1).map((line) => <li key={line}>{line.trim()}</li>)}
      </ul>
      <p>{lines[lines.length - 1].trim()}</p>
    </div>
  );
}
