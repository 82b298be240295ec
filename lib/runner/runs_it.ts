/**
 * Which run takes a task created while the service runs (the board's New task, issue 35): the
 * live continuous run at once, else what the next `service run` does — decided as
 * {@link decideRunStart} decides, so the words never promise what `service run` will not do.
 */
import { join } from "node:path";
import { existsSync } from "node:fs";
import { decideRunStart, type RunStart, type TaskFacts } from "./run_start.ts";
import { readRunState, type RunState } from "../runs/run_state.ts";
import { TRACKER_RUN_PLAN } from "../trackers/service_run.ts";
import { processAlive } from "../util/process_alive.ts";
import type { WorkspacePaths } from "../workspace.ts";

/** What decides who runs a new task: the live run, else how `service run` would start. */
export interface RunsItFacts {
  /** The run whose process is alive, and whether it takes new tasks (a continuous run). */
  live?: { runId: string; continuous: boolean };
  /** How `service run` without a plan would start now (lib/runner/run_start.ts). */
  next: RunStart;
}

/** Which run takes a new task, in words for the board (pure). */
export function runsItWords(f: RunsItFacts): string {
  if (f.live?.continuous) return `the running run ${f.live.runId} takes it now`;
  const after = f.live
    ? `run ${f.live.runId} is running a plan and does not take it; once that run ends, `
    : "no run is running: ";
  const next = f.next;
  switch (next.kind) {
    case "tracker_run":
      return after + "`service run` (without a plan) takes it";
    case "resume":
      return next.continuous
        ? after + `\`service run\` resumes run ${next.runId}, which takes it`
        : after + `\`service run\` first resumes run ${next.runId} (${next.unfinished.length} ` +
          "unfinished task(s)); once that run ends, the next `service run` takes it";
    case "needs":
    case "new_run":
    case "up_to_date":
      return after + "`service run` runs the workspace's plan.yaml instead, which does not " +
        "take it; a `service run` in a workspace without plan.yaml takes it";
    case "refuse":
      return after + `\`service run\` would refuse: ${next.message}`;
  }
}

/** Which run takes a new task now (reads the run state and the store). */
export async function whoRunsIt(
  paths: WorkspacePaths,
  tasks: readonly TaskFacts[],
  pid: number = Deno.pid,
): Promise<string> {
  const state: RunState | undefined = await readRunState(paths);
  const alive = state?.status === "running" && processAlive(state.pid);
  const defaultPlan = join(paths.root, "plan.yaml");
  const next = decideRunStart({
    root: paths.root,
    // The live run is answered for above: decide as the next process after it would.
    pid,
    previous: alive ? { ...state!, status: "stopped" } : state,
    previousAlive: false,
    defaultPlan: { file: defaultPlan, exists: existsSync(defaultPlan) },
    trackers: false, // without a plan, waiting tasks start a continuous run either way
    tasks,
  });
  return runsItWords({
    live: alive
      ? { runId: state!.run_id, continuous: state!.plan === TRACKER_RUN_PLAN }
      : undefined,
    next,
  });
}
