/**
 * A task an operator creates from the board (issue 35), as a review action is recorded: the
 * audit chain signs it first (`board.task_created`, binding its id, role, adapter, priority and
 * the digests of its title and goal; a broken chain refuses with 409 and nothing is created),
 * then the task store creates it as `POST /tasks` does; a store that refuses (409 duplicate, 422
 * unknown role or adapter, 507 full disk) takes the entry back, so nothing claims a task that
 * does not exist. The answer says which run takes it: the running continuous run at once, else
 * what the next `service run` does with it.
 */
import { join } from "node:path";
import { existsSync } from "node:fs";
import { z } from "zod";
import {
  appendAuditEntry,
  AuditChainBrokenError,
  type AuditPaths,
  retractAuditEntry,
} from "../audit/store.ts";
import type { Principal } from "../auth/tokens.ts";
import { ConflictError } from "../errors.ts";
import { sha256Hex } from "../journal/hash.ts";
import { decideRunStart, type RunStart, type TaskFacts } from "../orchestrator/run_start.ts";
import { readRunState, type RunState } from "../runs/run_state.ts";
import type { TaskStore } from "../tasks/store.ts";
import { AdapterName, type Task, TaskInputSchema } from "../tasks/task.ts";
import { TRACKER_RUN_PLAN } from "../trackers/service_run.ts";
import { processAlive } from "../util/process_alive.ts";
import type { WorkspacePaths } from "../workspace.ts";

/** The audit chain's event name of a task created from the board. */
export const TASK_CREATED_EVENT = "board.task_created";

/** Longest goal the board's form may send, in characters. */
export const MAX_GOAL = 20_000;

/** What the board's form sends: a title, a role, and optionally a goal, an adapter, a priority. */
export const BoardTaskSchema = z.strictObject({
  title: TaskInputSchema.shape.title,
  role: TaskInputSchema.shape.role,
  goal: z.string().max(MAX_GOAL).optional(),
  cli: AdapterName.optional(),
  priority: z.number().int().min(0).max(1000).optional(),
});

/** A validated board form. */
export type BoardTask = z.output<typeof BoardTaskSchema>;

/** What {@link createBoardTask} needs. */
export interface CreateBoardTask {
  paths: WorkspacePaths;
  store: TaskStore;
  input: BoardTask;
  principal: Principal;
  audit: AuditPaths;
  auditKey: () => Promise<Uint8Array>;
  now?: () => Date;
  /** This process (a run's own server answers for the run it hosts). */
  pid?: number;
}

/** What was created, its audit entry's hash, and which run takes it. */
export interface CreatedBoardTask {
  task: Task;
  principal: string;
  scope: string;
  audit_event_hash: string;
  runs_it: string;
}

/** What decides who runs a new task: the live run, else how `service run` would start. */
export interface RunsItFacts {
  /** The run whose process is alive, and whether it takes new tasks (a continuous run). */
  live?: { runId: string; continuous: boolean };
  /** How `service run` without a plan would start now (lib/orchestrator/run_start.ts). */
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

/** A new task id, as the store makes them (`t-` and 12 hex digits), not yet in `store`. */
function newTaskId(store: TaskStore): string {
  for (;;) {
    const id = `t-${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
    if (!store.get(id)) return id;
  }
}

/** `sha256:<hex>` of a text. */
function digest(text: string): string {
  return "sha256:" + sha256Hex(new TextEncoder().encode(text));
}

/** Sign and create the task; nothing is kept of a creation the chain or the store refuses. */
export async function createBoardTask(o: CreateBoardTask): Promise<CreatedBoardTask> {
  const input = TaskInputSchema.parse({ ...o.input, id: newTaskId(o.store) });
  let signed: string;
  try {
    const audit = await appendAuditEntry(o.audit, {
      event: TASK_CREATED_EVENT,
      principal: o.principal.principal,
      data: {
        task_id: input.id!,
        role: input.role,
        cli: input.cli ?? null,
        priority: input.priority,
        title_sha256: digest(input.title),
        goal_sha256: digest(input.goal ?? ""),
        scope: o.principal.scope,
      },
    }, { key: await o.auditKey(), now: o.now });
    signed = audit.lineHash;
  } catch (e) {
    if (e instanceof AuditChainBrokenError) {
      throw new ConflictError("audit_chain_broken", e.message);
    }
    throw e;
  }
  let task: Task;
  try {
    [task] = await o.store.create([input]);
  } catch (e) {
    await retractAuditEntry(o.audit, signed);
    throw e;
  }
  return {
    task,
    principal: o.principal.principal,
    scope: o.principal.scope,
    audit_event_hash: signed,
    runs_it: await whoRunsIt(o.paths, o.store.list(), o.pid),
  };
}
