/**
 * Re-runs of a plan: a step is identified by its stage, its position in the stage and its goal
 * (a changed goal is a new step). Steps an earlier run finished for good are not run again:
 * those it landed (its verified journal says `task_merged` and the commit is still in the
 * target branch's history) and those an operator marked done (`task_done_by_operator` with no
 * later attempt: nothing was merged, and the operator said the step needs no agent).
 */
import { git, targetRef } from "../git/git.ts";
import type { PlannedTask } from "../journal/events.ts";
import { sha256Hex } from "../journal/hash.ts";
import { IncrementalJournal, type RowSink } from "../journal/incremental.ts";
import { readEvent } from "../journal/event_reader.ts";
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

/** A step an earlier run finished for good. */
export interface EarlierStep {
  run_id: string;
  task_id: string;
  /** The commit that landed it; absent when an operator marked it done (nothing was merged). */
  commit?: string;
}

/** A step of the plan that is not run again, with the run that finished it. */
export type DoneStep = KeyedTask & { earlier: EarlierStep };

interface DoneState {
  keys: Map<string, string>;
  merged: Map<string, string>;
  /** Tasks an operator marked done, unless a later attempt (a retry, a claim) followed. */
  operatorDone: Set<string>;
}

const DONE_SINK: RowSink<DoneState> = {
  init: () => ({ keys: new Map(), merged: new Map(), operatorDone: new Set() }),
  apply(state, row) {
    const event = readEvent(row);
    if (event?.type === "run_started") {
      for (const p of event.planned) if (p.step_key) state.keys.set(p.task_id, p.step_key);
    } else if (event?.type === "task_merged") {
      state.merged.set(event.task_id, event.commit ?? "");
    } else if (event?.type === "task_done_by_operator") {
      state.operatorDone.add(event.task_id);
    } else if (event?.type === "task_retried" || event?.type === "task_claimed") {
      state.operatorDone.delete(event.task_id);
    }
  },
  clone: (s) => ({
    keys: new Map(s.keys),
    merged: new Map(s.merged),
    operatorDone: new Set(s.operatorDone),
  }),
};

/**
 * Steps of earlier runs finished for good, by step key: landed on `targetBranch` and still in
 * its history, or marked done by an operator. Journals that do not verify are not trusted
 * (their steps run again).
 */
export async function doneSteps(
  paths: WorkspacePaths,
  targetBranch: string,
  warn: (line: string) => void = () => {},
): Promise<Map<string, EarlierStep>> {
  const done = new Map<string, EarlierStep>();
  let entries: Deno.DirEntry[];
  try {
    entries = await Array.fromAsync(Deno.readDir(paths.runs));
  } catch {
    return done;
  }
  for (const e of entries.filter((e) => e.isDirectory && isValidId(e.name))) {
    const path = journalPath(paths, e.name);
    let snapshot;
    try {
      snapshot = await readJournal(path, new IncrementalJournal(DONE_SINK));
    } catch {
      continue;
    }
    const { keys, merged, operatorDone } = snapshot.state;
    if (!snapshot.walker.verified) {
      if (merged.size + operatorDone.size > 0) {
        warn(`run ${e.name}: its journal does not verify; the steps it finished are not trusted`);
      }
      continue;
    }
    for (const [taskId, commit] of merged) {
      const key = keys.get(taskId);
      if (!key || !commit) continue;
      if (!await inHistory(paths.root, commit, targetBranch)) continue;
      done.set(key, { run_id: e.name, task_id: taskId, commit });
    }
    for (const taskId of operatorDone) {
      const key = keys.get(taskId);
      // A landing wins: it names the commit.
      if (key && !done.get(key)?.commit) done.set(key, { run_id: e.name, task_id: taskId });
    }
  }
  return done;
}

async function inHistory(root: string, commit: string, branch: string): Promise<boolean> {
  const r = await git(["merge-base", "--is-ancestor", commit, targetRef(branch)], {
    cwd: root,
    allowFailure: true,
  });
  return r.code === 0;
}

/** The tasks still to do: steps done earlier dropped, and dependencies on them too. */
export function stepsToDo(tasks: KeyedTask[], earlier: ReadonlyMap<string, EarlierStep>): {
  todo: KeyedTask[];
  done: DoneStep[];
} {
  const done = tasks.flatMap((t) => {
    const e = earlier.get(t.step_key);
    return e ? [{ ...t, earlier: e }] : [];
  });
  const doneIds = new Set(done.map((t) => t.id));
  const todo = tasks.filter((t) => !doneIds.has(t.id)).map((t) => ({
    ...t,
    depends_on: t.depends_on.filter((d) => !doneIds.has(d)),
  }));
  return { todo, done };
}
