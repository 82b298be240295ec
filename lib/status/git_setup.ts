/**
 * The `git_setup` status part: what of the repository's command-running git setup (hooks,
 * drivers, helpers: lib/git/command_setup.ts) the latest run changed, from the record in its
 * run directory (lib/runs/git_setup.ts) — the setup as the run ended against as it began; while
 * the run lives, or when it was killed before it could record its end, the setup as it is now.
 * Null when nothing changed or there is no record.
 */
import { readCommandSetup, setupChanges } from "../git/command_setup.ts";
import { gitSetupPath, readGitSetupRecord } from "../runs/git_setup.ts";
import { readRunState } from "../runs/run_state.ts";
import type { StatusPart } from "./status.ts";
import type { GitSetupChanges } from "../runs/git_setup_words.ts";

/** The latest run's changes to the repository's command-running git setup (null: none). */
export const gitSetupPart: StatusPart = async (app): Promise<GitSetupChanges | null> => {
  const state = await readRunState(app.paths);
  if (!state) return null;
  const record = readGitSetupRecord(gitSetupPath(app.paths, state.run_id));
  if (!record) return null;
  const after = record.after ?? await readCommandSetup(app.paths.root).catch(() => undefined);
  if (!after) return null;
  const changes = setupChanges(record.before, after);
  if (changes.length === 0) return null;
  return { run_id: state.run_id, since_run_began: !record.after, changes };
};
