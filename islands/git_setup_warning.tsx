/**
 * The board's warning that the latest run changed the repository's own git setup that runs
 * commands (the `git_setup` part of `/status`, lib/status/git_setup.ts): shown while the change
 * stands, each change on its line, with the same words and advice as the terminal and `status`.
 */
import type { GitSetupChanges } from "../lib/runs/git_setup_words.ts";
import { GIT_SETUP_ADVICE, gitSetupHeadline } from "../lib/runs/git_setup_words.ts";
import { printable } from "../lib/util/printable.ts";

/** The warning, or nothing when the latest run changed none of it. */
export function GitSetupWarning({ setup }: { setup: GitSetupChanges | null }) {
  if (!setup || !Array.isArray(setup.changes) || setup.changes.length === 0) return null;
  return (
    <div class="git-setup-warning" role="alert" data-git-setup-warning={setup.run_id}>
      <strong>{printable(gitSetupHeadline(setup.since_run_began, setup.run_id))}</strong>
      <ul>
        {setup.changes.map((line) => <li key={line}>{printable(line)}</li>)}
      </ul>
      <p>{GIT_SETUP_ADVICE}</p>
    </div>
  );
}
