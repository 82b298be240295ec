/**
 * Re-runs of a plan: a step is identified by its stage, its position in the stage and its goal
 * (a changed goal is a new step). Steps that an earlier run landed — its verified journal says
 * `task_merged` and the commit is still in the target branch's history — are not run again.
 */
import { git } from "../git/git.ts";
import type { PlannedTask } from "../journal/events.ts";
import { sha256Hex } from "../journal/hash.ts";
import { IncrementalJournal, type RowSink } from "../journal/incremental.ts";
import { readJournal } from "../journal/journal_file.ts";
import { isValidId } from "../ids.ts";
import type { ParsedPlan } from "../plans/plan.ts";
import { journalPath, type WorkspacePaths } from "../workspace.ts";

/** A plan's task with its step key. */
export type KeyedTask = ParsedPlan["tasks"][number] & { step_key: string };

/** The step key of a step: stage, position within the stage, goal. */
function stepKey(stage: string, position: number, goal: string): string {
  return sha256Hex(`${stage}\n${position}\n${goal}`).slice(0, 16);
}

/** The plan's tasks with their step keys (positions counted per stage, in plan order). */
export function keyedTasks(plan: ParsedPlan): KeyedTask[] {
  const positions = new Map<string, number>();
  return plan.tasks.map((t) => {
    const position = positions.get(t.stage) ?? 0;
    positions.set(t.stage, position + 1);
    return { ...t, step_key: stepKey(t.stage, position, t.goal ?? t.title) };
  });
}

/** The `planned` list of `run_started` (what the board shows before a task is claimed). */
export function plannedTasks(tasks: KeyedTask[]): PlannedTask[] {
  return tasks.map((t) => ({
    task_id: t.id,
    title: t.title,
    role: t.role,
    stage: t.stage,
    step_key: t.step_key,
    depends_on: t.depends_on,
  }));
}

/** A step an earlier run landed. */
export interface LandedStep {
  run_id: string;
  task_id: string;
  commit: string;
}

interface LandedState {
  keys: Map<string, string>;
  merged: Map<string, string>;
}

const LANDED_SINK: RowSink<LandedState> = {
  init: () => ({ keys: new Map(), merged: new Map() }),
  apply(state, row) {
    const d = row.data as Record<string, unknown>;
    if (row.type === "run_started" && Array.isArray(d.planned)) {
      for (const p of d.planned as Record<string, unknown>[]) {
        if (typeof p?.task_id === "string" && typeof p.step_key === "string") {
          state.keys.set(p.task_id, p.step_key);
        }
      }
    } else if (row.type === "task_merged" && typeof d.task_id === "string") {
      state.merged.set(d.task_id, typeof d.commit === "string" ? d.commit : "");
    }
  },
  clone: (s) => ({ keys: new Map(s.keys), merged: new Map(s.merged) }),
};

/**
 * Steps of earlier runs that landed on `targetBranch` and are still in its history, by step key.
 * Journals that do not verify are not trusted (their steps run again).
 */
export async function landedSteps(
  paths: WorkspacePaths,
  targetBranch: string,
  warn: (line: string) => void = () => {},
): Promise<Map<string, LandedStep>> {
  const landed = new Map<string, LandedStep>();
  let entries: Deno.DirEntry[];
  try {
    entries = await Array.fromAsync(Deno.readDir(paths.runs));
  } catch {
    return landed;
  }
  for (const e of entries.filter((e) => e.isDirectory && isValidId(e.name))) {
    const path = journalPath(paths, e.name);
    let snapshot;
    try {
      snapshot = await readJournal(path, new IncrementalJournal(LANDED_SINK));
    } catch {
      continue;
    }
    if (!snapshot.walker.verified) {
      if (snapshot.state.merged.size > 0) {
        warn(`run ${e.name}: its journal does not verify; the steps it landed are not trusted`);
      }
      continue;
    }
    for (const [taskId, commit] of snapshot.state.merged) {
      const key = snapshot.state.keys.get(taskId);
      if (!key || !commit) continue;
      if (!await inHistory(paths.root, commit, targetBranch)) continue;
      landed.set(key, { run_id: e.name, task_id: taskId, commit });
    }
  }
  return landed;
}

async function inHistory(root: string, commit: string, branch: string): Promise<boolean> {
  const r = await git(["merge-base", "--is-ancestor", commit, `refs/heads/${branch}`], {
    cwd: root,
    allowFailure: true,
  });
  return r.code === 0;
}

/** The tasks still to do: landed steps dropped, and dependencies on them too. */
export function stepsToDo(tasks: KeyedTask[], landed: ReadonlyMap<string, LandedStep>): {
  todo: KeyedTask[];
  done: (KeyedTask & { landed: LandedStep })[];
} {
  const done = tasks.flatMap((t) => {
    const l = landed.get(t.step_key);
    return l ? [{ ...t, landed: l }] : [];
  });
  const doneIds = new Set(done.map((t) => t.id));
  const todo = tasks.filter((t) => !doneIds.has(t.id)).map((t) => ({
    ...t,
    depends_on: t.depends_on.filter((d) => !doneIds.has(d)),
  }));
  return { todo, done };
}
