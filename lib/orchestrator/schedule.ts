/**
 * The scheduling decision (pure): which ready tasks start now. Lower priority number first,
 * then creation order; never more than `maxAgents` at once (nor more than a role's own
 * `max_agents`); never a task whose `owned_files` overlap a task that is running or whose work
 * has not merged yet (so it starts from a tip that holds that work); never a task whose
 * dependency's merge is still pending; nothing while the adapter cools down after a rate limit
 * or the run is read-only because of the budget.
 */
import { hasGlobChars, matchGlob } from "../janitor/glob.ts";

/** What the scheduler needs to know of a task. */
export interface SchedulableTask {
  id: string;
  role?: string;
  priority: number;
  /** Creation order. */
  seq: number;
  owned_files: string[];
  depends_on: string[];
}

/** Inputs of one decision. */
export interface ScheduleInput {
  /** OPEN tasks, in any order. */
  ready: SchedulableTask[];
  /** Tasks with a live agent. */
  running: SchedulableTask[];
  /** Tasks whose work is done but has not merged yet (an overlap waits for their merge). */
  unmerged?: SchedulableTask[];
  maxAgents: number;
  /** Per-role caps (`roles.<role>.max_agents`). */
  roleMaxAgents?: Readonly<Record<string, number>>;
  /** Tasks whose work is done but not merged yet (DONE, not CLOSED). */
  pendingMerge: ReadonlySet<string>;
  /** Seconds left of a rate-limit cooldown for the adapter (0 when none). */
  cooldownS: number;
  /** True once the budget would be passed: the run is read-only. */
  readOnly: boolean;
}

/** Why a ready task did not start. */
export type WaitReason =
  | { kind: "max_agents" }
  | { kind: "role_max_agents"; role: string; max: number }
  | { kind: "owned_files"; with: string; file: string }
  | { kind: "dependency_merge"; dependency: string }
  | { kind: "cooldown"; seconds: number }
  | { kind: "budget" };

/** The decision: tasks to start, in order, and why the others wait. */
export interface ScheduleDecision {
  start: string[];
  waiting: Map<string, WaitReason>;
}

function normalise(path: string): string {
  return path.replace(/^\.\//, "").replace(/\/+$/, "");
}

/** The first pair of overlapping entries of two owned_files lists, if any. */
export function ownedFilesOverlap(a: string[], b: string[]): string | undefined {
  for (const x0 of a) {
    const x = normalise(x0);
    for (const y0 of b) {
      const y = normalise(y0);
      if (x === y || x.startsWith(y + "/") || y.startsWith(x + "/")) return x;
      if (hasGlobChars(x) && matchGlob(x, y)) return y;
      if (hasGlobChars(y) && matchGlob(y, x)) return x;
    }
  }
  return undefined;
}

function byPriority(a: SchedulableTask, b: SchedulableTask): number {
  return a.priority - b.priority || a.seq - b.seq;
}

/** Decide which ready tasks start now. */
export function decideSchedule(input: ScheduleInput): ScheduleDecision {
  const waiting = new Map<string, WaitReason>();
  const start: string[] = [];
  const ready = [...input.ready].sort(byPriority);
  const global: WaitReason | undefined = input.readOnly
    ? { kind: "budget" }
    : input.cooldownS > 0
    ? { kind: "cooldown", seconds: Math.ceil(input.cooldownS) }
    : undefined;
  const busy = [...input.running];
  const holders = [...input.running, ...(input.unmerged ?? [])];
  const perRole = new Map<string, number>();
  for (const t of input.running) if (t.role) perRole.set(t.role, (perRole.get(t.role) ?? 0) + 1);
  for (const task of ready) {
    if (global) {
      waiting.set(task.id, global);
      continue;
    }
    const pending = task.depends_on.find((d) => input.pendingMerge.has(d));
    if (pending) {
      waiting.set(task.id, { kind: "dependency_merge", dependency: pending });
      continue;
    }
    if (busy.length >= input.maxAgents) {
      waiting.set(task.id, { kind: "max_agents" });
      continue;
    }
    const roleMax = task.role ? input.roleMaxAgents?.[task.role] : undefined;
    if (roleMax !== undefined && (perRole.get(task.role!) ?? 0) >= roleMax) {
      waiting.set(task.id, { kind: "role_max_agents", role: task.role!, max: roleMax });
      continue;
    }
    let clash: WaitReason | undefined;
    for (const other of holders) {
      const file = ownedFilesOverlap(task.owned_files, other.owned_files);
      if (file) {
        clash = { kind: "owned_files", with: other.id, file };
        break;
      }
    }
    if (clash) {
      waiting.set(task.id, clash);
      continue;
    }
    start.push(task.id);
    busy.push(task);
    holders.push(task);
    if (task.role) perRole.set(task.role, (perRole.get(task.role) ?? 0) + 1);
  }
  return { start, waiting };
}

/** One line saying why a task waits. */
export function describeWait(reason: WaitReason): string {
  switch (reason.kind) {
    case "max_agents":
      return "waiting for a free agent slot (max_agents)";
    case "role_max_agents":
      return `waiting for a free ${reason.role} slot (roles.${reason.role}.max_agents: ${reason.max})`;
    case "owned_files":
      return `waiting for ${reason.with} to merge: both own ${reason.file}`;
    case "dependency_merge":
      return `waiting for the merge of dependency ${reason.dependency}`;
    case "cooldown":
      return `rate-limit cooldown: ${reason.seconds}s left`;
    case "budget":
      return "budget reached: run is read-only";
  }
}
