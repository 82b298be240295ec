/**
 * The scheduling decision (pure): which ready tasks start now, and how. Lower priority number
 * first, then creation order; never more than `maxAgents` at once (nor more than a role's own
 * `max_agents`); never a task whose `owned_files` overlap a task that is running, in the batch
 * lane or whose work has not merged yet (so it starts from a tip that holds that work); never a
 * task whose dependency's merge is still pending; nothing while the run is read-only because of
 * the budget. A task starts with the first adapter of its role's chain (the configured `cli`,
 * then its `fallback_adapters`) that is not parked by a rate or usage limit; when every one is
 * parked it waits. A task routed to the batch lane takes no agent slot and no adapter.
 */
import { hasGlobChars, matchGlob } from "../janitor/glob.ts";
import { durationWords } from "../util/duration_words.ts";

/** What the scheduler needs to know of a task. */
export interface SchedulableTask {
  id: string;
  role?: string;
  /** The adapter the task chose (`cli` of its step or its creation): first in its chain. */
  cli?: string;
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
  /**
   * The adapters a task of each role may start with, first choice first: the configured `cli`,
   * then the role's (or the top-level) `fallback_adapters` that are ready. A role not listed
   * starts with {@link ScheduleInput.adapter}.
   */
  chains?: Readonly<Record<string, readonly string[]>>;
  /** The configured adapter (`cli`); default `default`. */
  adapter?: string;
  /** Seconds until each parked adapter may start agents again; absent or 0: not parked. */
  parked?: Readonly<Record<string, number>>;
  /** True once the budget would be passed: the run is read-only. */
  readOnly: boolean;
  /** Ready tasks that go through the batch lane (no agent slot, no adapter). */
  batch?: ReadonlySet<string>;
  /** Tasks whose request is in the batch lane: they hold their owned files, not a slot. */
  inBatch?: SchedulableTask[];
  /**
   * The remote workers connected now (heard of within a lease), when the run serves workers: a
   * task that finds no agent slot here is told why no worker runs it either.
   */
  workers?: readonly RemoteSlots[];
}

/** What the scheduler needs to know of a connected remote worker. */
export interface RemoteSlots {
  name: string;
  /** Roles it takes (any when absent). */
  roles?: readonly string[];
  slots: number;
  /** Slots it said were free when it last asked for tasks. */
  free: number;
  /** Cordoned or draining: connected, but it takes no task. */
  closed?: boolean;
}

/** Why a ready task did not start. */
export type WaitReason =
  | { kind: "max_agents" }
  /** No agent slot here (`max_agents: 0`, or all busy) and no worker is connected. */
  | { kind: "no_worker"; maxAgents: number }
  /** Workers are connected, but none takes the task's role. */
  | { kind: "no_worker_for_role"; role: string; workers: number }
  /** Every connected worker that takes the role is busy. */
  | { kind: "worker_slots"; workers: number; slots: number }
  /** A connected worker has a free slot: it takes the task at its next claim. */
  | { kind: "worker_claim"; workers: number; free: number }
  /** Every connected worker is cordoned or draining (`service workers`). */
  | { kind: "workers_closed"; workers: number }
  | { kind: "role_max_agents"; role: string; max: number }
  | { kind: "owned_files"; with: string; file: string }
  | { kind: "dependency_merge"; dependency: string }
  /** Every adapter of the task's chain is parked; the first returns in `seconds`. */
  | { kind: "parked"; adapters: string[]; seconds: number }
  | { kind: "budget" };

/** The decision: tasks to start, in order, and why the others wait. */
export interface ScheduleDecision {
  /** Tasks whose agent starts now. */
  start: string[];
  /** The adapter each of `start` starts with. */
  adapters: Map<string, string>;
  /** Tasks submitted to the batch lane now. */
  batch: string[];
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

/**
 * The adapters `task` may start with, first choice first: the one it chose (`cli`), then its
 * role's chain (the role's adapter and its fallbacks). Pure.
 */
export function chainOf(
  task: Pick<SchedulableTask, "role" | "cli">,
  input: Pick<ScheduleInput, "chains" | "adapter">,
): readonly string[] {
  const role = (task.role && input.chains?.[task.role]) || [input.adapter ?? "default"];
  return task.cli ? [task.cli, ...role.filter((a) => a !== task.cli)] : role;
}

/** The first adapter of `chain` that is not parked, or why none may start. */
function chooseAdapter(
  chain: readonly string[],
  parked: Readonly<Record<string, number>>,
): { adapter: string } | WaitReason {
  const free = chain.find((a) => !((parked[a] ?? 0) > 0));
  if (free !== undefined) return { adapter: free };
  const seconds = Math.min(...chain.map((a) => parked[a]));
  return { kind: "parked", adapters: [...chain], seconds: Math.ceil(seconds) };
}

/** The first overlap of `task`'s owned files with a holder's, as a wait. */
function clashOf(task: SchedulableTask, holders: SchedulableTask[]): WaitReason | undefined {
  for (const other of holders) {
    const file = ownedFilesOverlap(task.owned_files, other.owned_files);
    if (file) return { kind: "owned_files", with: other.id, file };
  }
  return undefined;
}

/** Why `task` finds no agent slot here, as far as the connected workers say. */
function slotWait(task: SchedulableTask, input: ScheduleInput): WaitReason {
  const workers = input.workers;
  // With slots of its own the run's wait is for them; workers only add to them.
  if (!workers || (input.maxAgents > 0 && workers.length === 0)) return { kind: "max_agents" };
  if (workers.length === 0) return { kind: "no_worker", maxAgents: input.maxAgents };
  const open = workers.filter((w) => !w.closed);
  if (open.length === 0) {
    return input.maxAgents > 0
      ? { kind: "max_agents" }
      : { kind: "workers_closed", workers: workers.length };
  }
  const takers = open.filter((w) => !w.roles || !task.role || w.roles.includes(task.role));
  if (takers.length === 0) {
    if (input.maxAgents > 0) return { kind: "max_agents" };
    return { kind: "no_worker_for_role", role: task.role ?? "", workers: open.length };
  }
  const free = takers.reduce((n, w) => n + w.free, 0);
  if (free > 0) return { kind: "worker_claim", workers: takers.length, free };
  return {
    kind: "worker_slots",
    workers: takers.length,
    slots: takers.reduce((n, w) => n + w.slots, 0),
  };
}

/** Decide which ready tasks start now. */
export function decideSchedule(input: ScheduleInput): ScheduleDecision {
  const waiting = new Map<string, WaitReason>();
  const start: string[] = [];
  const adapters = new Map<string, string>();
  const batch: string[] = [];
  const ready = [...input.ready].sort(byPriority);
  const parked = input.parked ?? {};
  const busy = [...input.running];
  const holders = [...input.running, ...(input.inBatch ?? []), ...(input.unmerged ?? [])];
  const perRole = new Map<string, number>();
  for (const t of input.running) if (t.role) perRole.set(t.role, (perRole.get(t.role) ?? 0) + 1);
  for (const task of ready) {
    if (input.readOnly) {
      waiting.set(task.id, { kind: "budget" });
      continue;
    }
    const pending = task.depends_on.find((d) => input.pendingMerge.has(d));
    if (pending) {
      waiting.set(task.id, { kind: "dependency_merge", dependency: pending });
      continue;
    }
    if (input.batch?.has(task.id)) {
      const clash = clashOf(task, holders);
      if (clash) waiting.set(task.id, clash);
      else {
        batch.push(task.id);
        holders.push(task);
      }
      continue;
    }
    const chain = chainOf(task, input);
    const choice = chooseAdapter(chain, parked);
    if ("kind" in choice) {
      waiting.set(task.id, choice);
      continue;
    }
    // Its files first: a task that overlaps a running one waits for it whatever slot frees.
    const clash = clashOf(task, holders);
    if (clash) {
      waiting.set(task.id, clash);
      continue;
    }
    if (busy.length >= input.maxAgents) {
      waiting.set(task.id, slotWait(task, input));
      continue;
    }
    const roleMax = task.role ? input.roleMaxAgents?.[task.role] : undefined;
    if (roleMax !== undefined && (perRole.get(task.role!) ?? 0) >= roleMax) {
      waiting.set(task.id, { kind: "role_max_agents", role: task.role!, max: roleMax });
      continue;
    }
    start.push(task.id);
    adapters.set(task.id, choice.adapter);
    busy.push(task);
    holders.push(task);
    if (task.role) perRole.set(task.role, (perRole.get(task.role) ?? 0) + 1);
  }
  return { start, adapters, batch, waiting };
}

/** One line saying why a task waits. */
export function describeWait(reason: WaitReason): string {
  switch (reason.kind) {
    case "max_agents":
      return "waiting for a free agent slot (max_agents)";
    case "no_worker":
      return reason.maxAgents === 0
        ? "waiting for a worker: none is connected (max_agents: 0 leaves every task to workers)"
        : "waiting for a free agent slot (max_agents); no worker is connected";
    case "no_worker_for_role":
      return `waiting for a worker that takes role ${reason.role}: none of the ${
        plural(reason.workers, "connected worker")
      } does (their --roles)`;
    case "worker_slots":
      return `waiting for a free worker slot (${plural(reason.workers, "worker")}, all ${
        plural(reason.slots, "slot")
      } busy)`;
    case "workers_closed":
      return `waiting for a worker: the ${plural(reason.workers, "connected worker")} ${
        reason.workers === 1 ? "is" : "are"
      } cordoned or draining (\`service workers\`)`;
    case "worker_claim":
      return `waiting for a worker to claim it (${plural(reason.free, "free slot")} on ${
        plural(reason.workers, "worker")
      })`;
    case "role_max_agents":
      return `waiting for a free ${reason.role} slot (roles.${reason.role}.max_agents: ${reason.max})`;
    case "owned_files":
      return `waiting for ${reason.with} to merge: both own ${reason.file}`;
    case "dependency_merge":
      return `waiting for the merge of dependency ${reason.dependency}`;
    case "parked": {
      const [first, ...rest] = reason.adapters;
      const also = rest.length > 0 ? ` (fallback ${rest.join(", ")} parked too)` : "";
      return `rate-limit cooldown: ${first} is parked by a rate or usage limit${also}; ` +
        `back in ${durationWords(reason.seconds)}`;
    }
    case "budget":
      return "budget reached: run is read-only";
  }
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}
