/**
 * The words of the warning that a run changed the repository's command-running git setup
 * (lib/runs/git_setup.ts) — one wording for the terminal, `status` and the board — and the shape
 * of the `git_setup` status part (lib/status/git_setup.ts). Pure and importing nothing: the
 * board's islands import it.
 */

/** The warning's first line, for changes seen when the run ended or (`sinceBegan`) now. */
export function gitSetupHeadline(sinceBegan: boolean, runId?: string): string {
  const run = runId ? `run ${runId}` : "this run";
  return `WARNING: your repository's git setup that runs commands changed ${
    sinceBegan ? `since ${run} began` : `during ${run}`
  } (an agent run as a host process can write it; the service's git never runs it, your own ` +
    "git would):";
}

/** The advice after the changes are listed. */
export const GIT_SETUP_ADVICE = "Remove what you did not put there yourself " +
  "(`git config --unset <key>`, delete the hook); `isolation: container` keeps agents out of " +
  "it (docs/security.md).";

/** The whole warning: the headline, each change indented on its line, the advice (pure). */
export function gitSetupWarning(
  changes: readonly string[],
  sinceBegan: boolean,
  runId?: string,
): string[] {
  return [
    gitSetupHeadline(sinceBegan, runId),
    ...changes.map((line) => `  ${line}`),
    `  ${GIT_SETUP_ADVICE}`,
  ];
}

/** The part's value when something changed. */
export interface GitSetupChanges {
  run_id: string;
  /** True when compared with the setup now (the run lives, or ended without recording it). */
  since_run_began: boolean;
  /** One line per hook or configuration key (the words of lib/git/command_setup.ts). */
  changes: string[];
}
