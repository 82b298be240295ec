/**
 * The `outside_commits` status part: the commits the latest run's target branch gained while it
 * was live that the service did not make, as recorded at the run's end
 * (lib/runs/outside_commits.ts). Null when there were none, or the run has not ended.
 */
import { outsideCommitsPath, readOutsideCommits } from "../runs/outside_commits.ts";
import type { OutsideCommitsStatus } from "../runs/outside_commits_words.ts";
import { readRunState } from "../runs/run_state.ts";
import type { StatusPart } from "./status.ts";

/** The latest run's outside commits (null: none, or not known yet). */
export const outsideCommitsPart: StatusPart = async (app): Promise<OutsideCommitsStatus | null> => {
  const state = await readRunState(app.paths);
  if (!state) return null;
  const record = readOutsideCommits(outsideCommitsPath(app.paths, state.run_id));
  if (!record?.outside?.length && !record?.rewritten) return null;
  return { run_id: state.run_id, ...record };
};
