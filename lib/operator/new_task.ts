/**
 * A task an operator creates from the board (issue 35), as a review action is recorded: the
 * audit chain signs it first (`board.task_created`, binding its id, role, adapter, priority and
 * the digests of its title and goal; a broken chain refuses with 409 and nothing is created),
 * then the task store creates it as `POST /tasks` does; a store that refuses (409 duplicate, 422
 * unknown role or adapter, 507 full disk) takes the entry back, so nothing claims a task that
 * does not exist. Which run takes it is lib/runner/runs_it.ts's to say.
 */
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
import type { TaskStore } from "../tasks/store.ts";
import { AdapterName, type Task, TaskInputSchema } from "../tasks/task.ts";

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
  store: TaskStore;
  input: BoardTask;
  principal: Principal;
  audit: AuditPaths;
  auditKey: () => Promise<Uint8Array>;
  now?: () => Date;
}

/** What was created, by whom, and its audit entry's hash. */
export interface CreatedBoardTask {
  task: Task;
  principal: string;
  scope: string;
  audit_event_hash: string;
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
  };
}
