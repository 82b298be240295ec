/**
 * A stopped run that an offline `service cancel` settled — every one of its tasks landed, failed
 * or was cancelled — is over: nothing resumes it. What it put on the shared remote (its published
 * base, its sessions' `agent/<session>` branches) then leaves it as a finished run's does
 * (remote_sweep.ts). Found in a team trial: after `service stop`, `service cancel --all` and a new
 * `service run plan2.yaml`, the first run's base and its 14 agent branches stayed on origin.
 */
import { loadConfig } from "../config/load.ts";
import { journalPath, workspacePaths } from "../workspace.ts";
import { isFinished, type Task } from "../tasks/task.ts";
import { sweepRunRemote } from "./remote_sweep.ts";

/** The runs among `runIds` none of whose `tasks` can run again unasked (pure). */
export function settledRuns(
  runIds: Iterable<string>,
  tasks: readonly Pick<Task, "run_id" | "status" | "operator_done">[],
): string[] {
  return [...new Set(runIds)].filter((runId) => {
    const of = tasks.filter((t) => t.run_id === runId);
    return of.length > 0 && of.every(isFinished);
  });
}

/** Sweep the remote refs of each settled run among `runIds`; one line per run swept. */
export async function sweepSettledRuns(
  root: string,
  o: { runIds: Iterable<string>; tasks: readonly Task[] },
): Promise<string[]> {
  const runs = settledRuns(o.runIds, o.tasks);
  if (runs.length === 0) return [];
  const landing = (await loadConfig(root))?.landing;
  const remote = landing?.remote ?? "origin";
  const pullRequests = landing?.mode === "pull_request";
  const lines: string[] = [];
  for (const runId of runs) {
    const removed = await sweepRunRemote({
      remote: { root, remote },
      runId,
      journalPath: journalPath(workspacePaths(root), runId),
      keepBranches: pullRequests && landing?.delete_branch === false,
      pullRequests,
    }).catch(() => []);
    if (removed.length > 0) {
      lines.push(
        `removed from ${remote}: ${removed.length} ref(s) of run ${runId}, which is over ` +
          "(its published base and its sessions' agent branches)",
      );
    }
  }
  return lines;
}
