/**
 * The decision core's state: what the run loop remembers between events (live sessions, work
 * being landed, notes for the next attempt, why tasks wait) plus a snapshot of the run's tasks
 * as the task store holds them. Plain data: no handles, no clocks, no files.
 */
import type { WorkerSlots } from "../../workers/fleet.ts";
import type { TaskStatus } from "../../tasks/lifecycle.ts";
import type { EndReason } from "../../agents/end_reason.ts";

/** What the core needs to know of a task (a snapshot of the store's record). */
export interface TaskView {
  id: string;
  status: TaskStatus;
  title: string;
  role: string;
  priority: number;
  /** Creation order (ties of priority). */
  seq: number;
  owned_files: string[];
  depends_on: string[];
  /** Agent runs so far (a claim counts one). */
  attempts: number;
  /** The store's last word on the task (an agent's summary or a failure reason). */
  summary: string | null;
  /** An operator marked it DONE with no agent's work: done for good, nothing to land. */
  operatorDone?: boolean;
  /** The session of an interrupted attempt whose kept work the next attempt starts from. */
  resumeFrom?: string;
  /** When it starts, its request goes to the provider's batch API instead of an agent. */
  batch?: boolean;
  /** The adapter it chose (`cli`), first in its chain. */
  cli?: string;
}

/** Why an agent was ended (lib/agents/end_reason.ts). */
export type { EndReason } from "../../agents/end_reason.ts";

/** A live agent session, by task. */
export interface SessionView {
  taskId: string;
  sessionId: string;
  startedAt: number;
  /** Wall-clock limit (ms since the epoch). */
  deadline: number;
  /** Set once the loop asked the agent to end. */
  endedBy?: EndReason;
  /** When the loop first saw the task reported (or failed) while the agent still ran. */
  reportedAt?: number;
  /** The adapter running it. */
  adapter?: string;
  /** A request in the batch lane, not an agent: no process, no deadline of ours. */
  batchId?: string;
  /** The remote worker running it (DESIGN.md §16): its lease is the task's heartbeat. */
  worker?: string;
  /** Its worker's lease ran out: what it pushed is being fetched. */
  lost?: boolean;
}

/** How work that was never reported came to land (see {@link Landing.unreported}). */
export type Unreported = "exited" | "interrupted";

/**
 * Where a finished task's work is on its way to the target branch (`closing`: a person closed
 * its pull request; the cancel that asked of the store comes back as a task change).
 */
export type LandingStage = "capturing" | "review" | "merging" | "rebasing" | "waiting" | "closing";

/** Work of a DONE task that has not landed yet. */
export interface Landing {
  taskId: string;
  stage: LandingStage;
  /**
   * Its agent ended without reporting: it exited 0 on its own (a completion candidate), or it
   * was interrupted and `recovery.land_unreported` lands it. Absent for reported work.
   */
  unreported?: Unreported;
  /** Why it waits (shown by `status`). */
  reason: string;
  /** A merge that waits for a person (see `MergeResult` `stuck`): the run may end meanwhile. */
  stuck?: boolean;
  /** When a waiting merge was last tried (ms). */
  lastTry: number;
  /** Rebases onto a new tip in this attempt. */
  rebases: number;
  /** The protected paths its diff touches (it waits for an operator's merge, DESIGN.md §18). */
  protectedPaths?: string[];
  /** The files over `max_landed_file_mb` its diff adds or grows (it waits the same way). */
  oversized?: { path: string; bytes: number }[];
  /** The host said something changed while a step was under way: it is tried again at once. */
  changed?: boolean;
  /**
   * The task was cancelled (an operator, its ticket closed) while its merge step was under way:
   * the step's result decides — landed work stays landed and says so; anything else is the
   * cancel.
   */
  cancelled?: true;
}

/** Settings the core decides with (from service.yaml and the run's options). */
export interface CoreSettings {
  maxAgents: number;
  /** `roles.<role>.max_agents`: at most this many agents of the role at once. */
  roleMaxAgents: Readonly<Record<string, number>>;
  maxAttempts: number;
  requireApproval: boolean;
  /** `enforce_owned_files`: a diff that leaves its task's `owned_files` is refused. */
  enforceOwnedFiles?: boolean;
  /** Keep running when every task is finished (work arrives from trackers and the task API). */
  continuous: boolean;
  /** How long an agent may run on after it reported (ms). */
  reportedExitGraceMs: number;
  /** How often a merge that waits (the user's checkout, a moved branch) is tried again (ms). */
  mergeRetryMs: number;
  /**
   * How long a run with nothing left but merges only the user can unblock (their changes in the
   * way) waits for them before it ends with the reason (ms; default 60 000).
   */
  stuckMergeWaitMs?: number;
  /**
   * `landing.on_ci_failure` (pull requests): a failed required check sends the task to a new
   * attempt told its name (`retry`), or fails it (`fail`).
   */
  onCiFailure?: "retry" | "fail";
  /** Rebases of one attempt's work before a conflict sends it back to an agent. */
  maxRebases: number;
  /**
   * `recovery.land_unreported`: the work of an interrupted agent lands (spec §3.1 ORPHANED →
   * DONE) when every completion signal of its task passes, instead of going to a new attempt.
   */
  landUnreported: boolean;
  /** The configured adapter (`cli`). */
  adapter: string;
  /** A remote worker not heard from for this long is not counted as connected (s; default 45). */
  heartbeatTimeoutS?: number;
  /**
   * By role, the adapters a task may start with, first choice first: `cli`, then the role's (or
   * the top-level) `fallback_adapters` that are ready. A role not listed uses `[adapter]`.
   */
  chains: Readonly<Record<string, readonly string[]>>;
}

/** Why the run became read-only. */
export interface BudgetStop {
  total_micro_usd: number;
  budget_micro_usd: number;
  estimate_micro_usd: number;
  /** The line the operator reads. */
  message: string;
}

/** How the run ended. */
export interface RunVerdict {
  status: "completed" | "failed" | "stopped";
  /** One line per task that did not land, with the way out. */
  problems: string[];
}

/** Everything the core knows. */
export interface CoreState {
  settings: CoreSettings;
  /** The time of the event being decided (ms), set by the executor's clock. */
  now: number;
  /** The run's tasks, refreshed from the store before each decision. */
  tasks: ReadonlyMap<string, TaskView>;
  sessions: ReadonlyMap<string, SessionView>;
  /** Tasks whose spawn was asked for and not yet confirmed. */
  starting: ReadonlySet<string>;
  /** Of `starting`, the tasks being submitted to the batch lane (they take no agent slot). */
  batching: ReadonlySet<string>;
  /** Of `starting`, the tasks being handed to a remote worker (they take none of ours either). */
  dispatching: ReadonlySet<string>;
  /**
   * Of `dispatching`, the tasks reserved for a Kubernetes Job whose pod has not claimed them yet
   * (DESIGN.md §17), with the adapter the reservation chose.
   */
  launching: ReadonlyMap<string, string>;
  /** Batch requests left with their provider when the run stopped, by task (batch id). */
  batchesLeft: ReadonlyMap<string, string>;
  landings: ReadonlyMap<string, Landing>;
  /** Tasks this run merged (`task_merged` journaled), whether or not the store recorded it. */
  landed: ReadonlySet<string>;
  /** Notes for a task's next attempt (why the last one did not land). */
  notes: ReadonlyMap<string, string>;
  /** The number of each task's latest attempt this process started (its claim row's `attempt`). */
  attemptOf: ReadonlyMap<string, number>;
  /** Why each waiting task waits (published for `status` and the board). */
  waits: ReadonlyMap<string, string>;
  /** The wait reasons already journaled, so each change is journaled once. */
  journaledWaits: ReadonlyMap<string, string>;
  /** Seconds until each parked adapter may start agents again (a rate or usage limit). */
  parked: Readonly<Record<string, number>>;
  /** The budget would be passed by another agent: no new agents start. */
  readOnly: boolean;
  /** Spend against the budget when `readOnly` (journaled once). */
  budget?: BudgetStop;
  budgetNoted: boolean;
  stopping: boolean;
  /** Stopped without the grace (a second Ctrl-C): an agent still ending gets SIGKILL at once. */
  stoppingNow?: true;
  /** When the run ends if nothing but merges only the user can unblock is left by then (ms). */
  endsAt?: number;
  verdict?: RunVerdict;
  /** The remote workers the server has heard from (lib/workers/fleet.ts); none until told. */
  workers?: readonly WorkerSlots[];
  /** Workers an agent of the task did not start on, by task: it goes to another one. */
  refusedBy?: ReadonlyMap<string, ReadonlySet<string>>;
  /** The run said that no worker is connected (said again once one was). */
  noWorkerSaid?: boolean;
}

/** A fresh state for a run. */
export function initialState(settings: CoreSettings, now: number): CoreState {
  return {
    settings,
    now,
    tasks: new Map(),
    sessions: new Map(),
    starting: new Set(),
    batching: new Set(),
    dispatching: new Set(),
    launching: new Map(),
    batchesLeft: new Map(),
    landings: new Map(),
    landed: new Set(),
    notes: new Map(),
    attemptOf: new Map(),
    waits: new Map(),
    journaledWaits: new Map(),
    parked: {},
    readOnly: false,
    budgetNoted: false,
    stopping: false,
  };
}

/** A mutable copy of the parts a decision changes (the task snapshot is shared, never written). */
export interface Draft extends CoreState {
  sessions: Map<string, SessionView>;
  starting: Set<string>;
  batching: Set<string>;
  dispatching: Set<string>;
  launching: Map<string, string>;
  batchesLeft: Map<string, string>;
  landings: Map<string, Landing>;
  landed: Set<string>;
  notes: Map<string, string>;
  attemptOf: Map<string, number>;
  waits: Map<string, string>;
  journaledWaits: Map<string, string>;
}

/** Copy `state` for one decision. */
export function draft(state: CoreState): Draft {
  return {
    ...state,
    sessions: new Map(state.sessions),
    starting: new Set(state.starting),
    batching: new Set(state.batching),
    dispatching: new Set(state.dispatching),
    launching: new Map(state.launching),
    batchesLeft: new Map(state.batchesLeft),
    landings: new Map(state.landings),
    landed: new Set(state.landed),
    notes: new Map(state.notes),
    attemptOf: new Map(state.attemptOf),
    waits: new Map(state.waits),
    journaledWaits: new Map(state.journaledWaits),
  };
}
