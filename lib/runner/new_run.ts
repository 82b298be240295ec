/**
 * A new run of a plan: `run_started` with the steps left to do (and those earlier runs finished:
 * landed, or marked done by an operator), the steps created as the run's tasks, and the lines
 * that tell the terminal what was skipped and why.
 */
import { relative } from "node:path";
import * as ev from "../journal/events.ts";
import { sha256Hex } from "../journal/hash.ts";
import { appendEvents } from "../journal/journal_file.ts";
import { newRunId } from "../runs/run_state.ts";
import type { TaskStore } from "../tasks/store.ts";
import { journalPath, type WorkspacePaths } from "../workspace.ts";
import { type DoneStep, plannedTasks } from "./plan_steps.ts";
import type { RunStart } from "./run_start.ts";

/** `sha256:<hex>` of a file's bytes (the plan's and the configuration's digests). */
export async function fileDigest(path: string): Promise<string> {
  return "sha256:" + sha256Hex(await Deno.readFile(path));
}

/** What a new run needs. */
export interface NewRun {
  paths: WorkspacePaths;
  start: Extract<RunStart, { kind: "new_run" }>;
  /** The plan's `name:`, else its file is named. */
  planName?: string;
  planSha: string;
  /** `sha256:` digest of the service.yaml the run validated. */
  configSha: string;
  adapter: string;
  targetBranch: string;
  /** How the terminal names where work lands, when not `targetBranch` (pull requests). */
  landingOn?: string;
  out: (line: string) => void;
}

/**
 * Journal `run_started` and create the plan's steps left to do (finished tasks of the store
 * whose ids they take are archived first).
 */
export async function startNewRun(
  store: TaskStore,
  o: NewRun,
): Promise<{ runId: string; taskIds: string[] }> {
  const { steps, archive } = o.start;
  const { todo, done } = steps;
  const name = relative(o.paths.root, o.start.planFile);
  const runId = newRunId();
  if (archive.length > 0) await store.archive(archive, `before-${runId}`);
  const landed = done.flatMap((t) =>
    t.earlier.commit ? [{ task_id: t.id, run_id: t.earlier.run_id, commit: t.earlier.commit }] : []
  );
  const byOperator = done.flatMap((t) =>
    t.earlier.commit ? [] : [{ task_id: t.id, run_id: t.earlier.run_id }]
  );
  await appendEvents(journalPath(o.paths, runId), [ev.runStarted({
    run_id: runId,
    plan: o.planName ?? name,
    plan_file: name,
    plan_sha256: o.planSha,
    config_sha256: o.configSha,
    adapter: o.adapter,
    target_branch: o.targetBranch,
    tasks: todo.length,
    planned: plannedTasks(todo),
    ...(landed.length > 0 ? { already_landed: landed } : {}),
    ...(byOperator.length > 0 ? { done_by_operator: byOperator } : {}),
  })]);
  await store.create(
    todo.map(({ stage: _stage, step_key: _key, ...input }) => input),
    { runId },
  );
  const donePart = done.length > 0 ? `${doneNote(done)}, ` : "";
  o.out(
    `run ${runId}: ${donePart}${todo.length} to do from ${name}, landing on ${
      o.landingOn ?? o.targetBranch
    }`,
  );
  return { runId, taskIds: todo.map((t) => t.id) };
}

/** `a in 0123456789, b in …`: the landed steps with their commits. */
function landedList(done: DoneStep[]): string {
  return done.map((t) => `${t.id} in ${t.earlier.commit!.slice(0, 10)}`).join(", ");
}

/** `2 already landed (a in 0123456789, …), 1 marked done by an operator (c in run-…; …)`. */
function doneNote(done: DoneStep[]): string {
  const landed = done.filter((t) => t.earlier.commit);
  const byOperator = done.filter((t) => !t.earlier.commit);
  const parts = [];
  if (landed.length > 0) parts.push(`${landed.length} already landed (${landedList(landed)})`);
  if (byOperator.length > 0) {
    parts.push(
      `${byOperator.length} marked done by an operator (${
        byOperator.map((t) => `${t.id} in ${t.earlier.run_id}`).join(", ")
      }; nothing was merged)`,
    );
  }
  return parts.join(", ");
}

/** The line of a plan whose every step is done already. */
export function upToDateLine(name: string, done: DoneStep[]): string {
  const what = done.every((t) => t.earlier.commit)
    ? `already landed (${landedList(done)})`
    : `are done: ${doneNote(done)}`;
  return `nothing to do: all ${done.length} step(s) of ${name} ${what}; ` +
    "`service run --force` runs them again";
}
