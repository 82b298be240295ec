/**
 * `service run` without a plan, when trackers are configured: a continuous run that takes its
 * work from the trackers (polls and webhooks feed the task store) and the task API until
 * `service stop`. The orchestrator adopts every task created while it runs (`continuous`);
 * this module decides when such a run applies and starts it (journal `run_started`, the
 * unfinished tasks not owned by any run as its first tasks, made the run's own).
 */
import type { ServiceConfig } from "../config/schema.ts";
import * as ev from "../journal/events.ts";
import { appendEvents } from "../journal/journal_file.ts";
import { newRunId } from "../runs/run_state.ts";
import type { TaskStore } from "../tasks/store.ts";
import { isFinished } from "../tasks/task.ts";
import { journalPath, type WorkspacePaths } from "../workspace.ts";

/** The plan name a continuous tracker run records. */
export const TRACKER_RUN_PLAN = "trackers and the task API (continuous)";

/** True when `service run` without a plan should run continuously from the trackers. */
export function runsFromTrackers(config: ServiceConfig): boolean {
  return Object.keys(config.trackers).length > 0;
}

/** Unfinished tasks no run owns (created by the trackers or the task API). */
export function unownedTaskIds(store: TaskStore): string[] {
  return store.list().filter((t) => t.run_id === null && !isFinished(t)).map((t) => t.id);
}

/** Start a continuous run: journal `run_started`; its first tasks are the unowned unfinished ones. */
export async function startTrackerRun(
  store: TaskStore,
  o: {
    paths: WorkspacePaths;
    /** `sha256:` digest of the service.yaml the run validated. */
    configSha: string;
    adapter: string;
    targetBranch: string;
    /** How the terminal names where work lands, when not `targetBranch` (pull requests). */
    landingOn?: string;
    out: (l: string) => void;
  },
): Promise<{ runId: string; taskIds: string[] }> {
  const runId = newRunId();
  const taskIds = unownedTaskIds(store);
  for (const id of taskIds) await store.joinRun(id, runId);
  await appendEvents(journalPath(o.paths, runId), [ev.runStarted({
    run_id: runId,
    plan: TRACKER_RUN_PLAN,
    config_sha256: o.configSha,
    adapter: o.adapter,
    target_branch: o.targetBranch,
    tasks: taskIds.length,
  })]);
  o.out(
    `run ${runId}: taking work from the trackers and the task API until \`service stop\` ` +
      `(${taskIds.length} waiting task(s)), landing on ${o.landingOn ?? o.targetBranch}`,
  );
  return { runId, taskIds };
}
