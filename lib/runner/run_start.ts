/**
 * How `service run` starts (pure): refuse (another run is in progress, a different plan while a
 * run has unfinished tasks, nothing to run, plan steps that are unfinished tasks of the task
 * API), resume the run with unfinished tasks, run continuously from the trackers, start a new
 * run with the plan's steps left to do, or say every step is done already. The shell
 * (`runPlan`) reads the facts; facts that cost I/O are read only when the decision asks for
 * them (`needs`), so a resume never reads the plan's history.
 */
import { relative } from "node:path";
import type { RunState } from "../runs/run_state.ts";
import { isFinished, type Task } from "../tasks/task.ts";
import { TRACKER_RUN_PLAN } from "../trackers/service_run.ts";
import type { DoneStep, KeyedTask } from "./plan_steps.ts";
import { stuckOnFailed, stuckWords } from "./stuck_on_failed.ts";

/** The store's view of a task, as the decision needs it. */
export type TaskFacts = Pick<Task, "id" | "run_id" | "status" | "operator_done"> & {
  depends_on?: readonly string[];
};

/** What the plan of a new run leaves to do (lib/runner/plan_steps.ts `stepsToDo`). */
export interface PlanSteps {
  todo: KeyedTask[];
  done: DoneStep[];
}

/** Everything that decides how a run starts. */
export interface RunStartFacts {
  /** The workspace (plan files are named relative to it). */
  root: string;
  /** This process. */
  pid: number;
  /** `.sdd/runtime/orchestrator.json`, and whether the process it names is alive. */
  previous?: RunState;
  previousAlive?: boolean;
  /** The plan file passed to `service run` (absolute) and its digest. */
  plan?: { file: string; sha256: string };
  /** The plan as the user typed it (named in the way out). */
  planArg?: string;
  /** `<root>/plan.yaml`, run when no plan is passed, and whether it exists. */
  defaultPlan: { file: string; exists: boolean };
  /** `trackers` are configured in service.yaml. */
  trackers: boolean;
  /** Every task of the store (asked for with `needs: "tasks"`). */
  tasks?: readonly TaskFacts[];
  /** What the new run's plan leaves to do (asked for with `needs: "steps"`). */
  steps?: PlanSteps;
}

/** The latest run whose tasks are not all finished: the one `service run` resumes. */
interface Resumable {
  runId: string;
  /** Its plan file and digest, known when the run state is this run's. */
  plan?: string;
  planSha256?: string;
  unfinished: TaskFacts[];
  taskIds: string[];
}

/** How the run starts. */
export type RunStart =
  | {
    kind: "refuse";
    message: string;
    fix?: string;
    /** The unfinished run the refusal offers to resume (its journal is checked before it is). */
    resumable?: { runId: string; unfinished: string[] };
  }
  /** Read this fact, then decide again. */
  | { kind: "needs"; fact: "tasks" }
  | { kind: "needs"; fact: "steps"; planFile: string }
  | {
    kind: "resume";
    runId: string;
    taskIds: string[];
    planFile: string;
    planSha256?: string;
    /** A continuous run stopped with adopted tasks still waiting resumes as one. */
    continuous: boolean;
    unfinished: TaskFacts[];
  }
  | { kind: "tracker_run" }
  /** `archive`: finished tasks of the store whose ids the plan's steps take. */
  | { kind: "new_run"; planFile: string; steps: PlanSteps; archive: string[] }
  | { kind: "up_to_date"; planFile: string; steps: PlanSteps };

/** Decide how `service run` starts from what is known so far. */
export function decideRunStart(f: RunStartFacts): RunStart {
  const p = f.previous;
  if (p?.status === "running" && p.pid !== f.pid && f.previousAlive) {
    return {
      kind: "refuse",
      message: `run ${p.run_id} is in progress (pid ${p.pid}, ${p.url})`,
      fix: "watch it with `service status`, or end it with `service stop`",
    };
  }
  if (!f.tasks) return { kind: "needs", fact: "tasks" };
  const resumable = findResumable(f.tasks, p);
  if (resumable) {
    const samePlan = f.plan && resumable.plan === f.plan.file &&
      resumable.planSha256 === f.plan.sha256;
    if (f.plan && !samePlan) {
      return {
        kind: "refuse",
        message: `run ${resumable.runId}${
          resumable.plan ? ` (${relative(f.root, resumable.plan)})` : ""
        } has ${resumable.unfinished.length} unfinished task(s): ${
          describeUnfinished(resumable.unfinished)
        }`,
        fix: `\`service run\` resumes it; or \`service cancel --all\` cancels them, then ` +
          `\`service run ${f.planArg ?? f.plan.file}\` starts a new run`,
        resumable: { runId: resumable.runId, unfinished: resumable.unfinished.map((t) => t.id) },
      };
    }
    // Only BLOCKED tasks behind FAILED ones: a resume would start and end at once.
    const stuck = stuckOnFailed(resumable.unfinished, f.tasks);
    if (stuck) return { kind: "refuse", ...stuckWords(resumable.runId, stuck) };
    return {
      kind: "resume",
      runId: resumable.runId,
      taskIds: resumable.taskIds,
      planFile: resumable.plan ?? f.plan?.file ?? "",
      planSha256: resumable.planSha256,
      continuous: resumable.plan === TRACKER_RUN_PLAN,
      unfinished: resumable.unfinished,
    };
  }
  if (!f.plan && !f.defaultPlan.exists) {
    // Tasks the task API or the board created wait for a run: a continuous one takes them.
    const waiting = f.tasks.some((t) => t.run_id === null && !isFinished(t));
    if (f.trackers || waiting) return { kind: "tracker_run" };
    return {
      kind: "refuse",
      message: "nothing to run: no earlier run has unfinished tasks and there is no plan.yaml",
      fix: "pass a plan: `service run path/to/plan.yaml`, or configure `trackers` in " +
        "service.yaml to take work from issue trackers (docs/trackers.md)",
    };
  }
  const planFile = f.plan?.file ?? f.defaultPlan.file;
  if (!f.steps) return { kind: "needs", fact: "steps", planFile };
  if (f.steps.todo.length === 0) return { kind: "up_to_date", planFile, steps: f.steps };
  const ids = new Set(f.steps.todo.map((t) => t.id));
  const taken = f.tasks.filter((t) => ids.has(t.id));
  const open = taken.filter((t) => !isFinished(t));
  if (open.length > 0) {
    return {
      kind: "refuse",
      message: `task id(s) ${describeUnfinished(open)} of the plan are unfinished tasks of the ` +
        "task API",
      fix: `\`service cancel ${
        open.map((t) => t.id).join(" ")
      }\`, or give the steps other \`id:\`s`,
    };
  }
  return { kind: "new_run", planFile, steps: f.steps, archive: taken.map((t) => t.id) };
}

/** The latest run whose tasks are not all finished (the run state's first, else the newest id). */
function findResumable(
  tasks: readonly TaskFacts[],
  state: RunState | undefined,
): Resumable | undefined {
  const byRun = new Map<string, TaskFacts[]>();
  for (const t of tasks) {
    if (!t.run_id) continue;
    const list = byRun.get(t.run_id) ?? [];
    list.push(t);
    byRun.set(t.run_id, list);
  }
  const candidates = [...byRun.keys()].filter((id) => byRun.get(id)!.some((t) => !isFinished(t)))
    .sort().reverse();
  const runId = state && candidates.includes(state.run_id) ? state.run_id : candidates[0];
  if (!runId) return undefined;
  const runTasks = byRun.get(runId)!;
  const own = state?.run_id === runId;
  return {
    runId,
    plan: own ? state.plan : undefined,
    planSha256: own ? state.plan_sha256 : undefined,
    unfinished: runTasks.filter((t) => !isFinished(t)),
    taskIds: runTasks.map((t) => t.id),
  };
}

/** `t1 (OPEN), t2 (FAILED)`, the first six and how many more. */
export function describeUnfinished(tasks: readonly Pick<Task, "id" | "status">[]): string {
  const shown = tasks.slice(0, 6).map((t) => `${t.id} (${t.status})`).join(", ");
  return tasks.length > 6 ? `${shown} and ${tasks.length - 6} more` : shown;
}
