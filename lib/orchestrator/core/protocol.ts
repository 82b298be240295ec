/**
 * What goes into the decision core (events: things that happened) and what comes out (actions:
 * things the executor does, journal rows included). The executor turns the outcome of an action
 * that takes time — a spawn, a diff capture, a merge, a rebase — into the next event.
 */
import type { WorkerSlots } from "../../workers/fleet.ts";
import type { BatchOutcome, FailedSignal, WorktreePreparedData } from "../../journal/events.ts";
import type { JournalEvent } from "../../journal/row.ts";
import type { TaskStatus } from "../../tasks/lifecycle.ts";
import type { EndReason, RunVerdict } from "./state.ts";

/** Whether an agent's failure would repeat, and the line that says why (from the exit diagnosis). */
export interface ExitDiagnosis {
  retryable: boolean;
  /** One line for the operator, with the CLI's last error line when there is one. */
  reason: string;
  /** The kind named on the card's gate receipt (agent_failed, agent_timeout, spawn_error …). */
  kind: string;
}

/** What an agent's worktree got before its agent started (DESIGN.md §13). */
export type PreparedView = Omit<WorktreePreparedData, "task_id" | "session_id">;

/**
 * The outcome of a merge attempt: into the local branch, or through a pull request (DESIGN.md
 * §12), which can also say its base moved, a required check failed, a reviewer requested
 * changes, or a person closed it.
 */
export type MergeResult =
  /**
   * Landed as `commit`; through a pull request, `pr` is its URL and `commit` the host's merge.
   * `empty`: the work changes nothing on the base (no pull request; `commit` is the base's tip).
   */
  | { kind: "merged"; commit: string; pr?: string; empty?: boolean }
  /** Its merge would change nothing on the target: nothing lands; the task closes. */
  | { kind: "unchanged" }
  | { kind: "gates_failed"; signals: FailedSignal[] }
  | { kind: "conflict"; files: string[] }
  /**
   * It waits (the user's checkout, a moved branch; the host's checks, reviews, queue). `stuck`:
   * only a person can end the wait (their uncommitted changes are in the way), so a run with
   * nothing else to do ends rather than wait for it.
   */
  | { kind: "waiting"; reason: string; stuck?: boolean }
  /** The remote base moved past the work: rebase onto it, gates again, push with lease. */
  | { kind: "base_moved"; reason: string }
  /** A required check failed on the pushed head of pull request `pr` (a URL). */
  | { kind: "check_failed"; check: string; summary: string; url?: string; pr: string }
  /** A reviewer requested changes on the host; `comments` is what they wrote. */
  | { kind: "changes_requested"; by: string[]; comments: string; pr: string }
  /** A person closed the pull request unmerged; `reason` says who and what they said. */
  | { kind: "closed"; reason: string };

/**
 * What the service found a captured diff to touch (DESIGN.md §18), read from git, never from
 * the agent.
 */
export interface DiffJudgement {
  /** Changed paths that are protected: the work never lands unattended. */
  protected: string[];
  /** Changed paths outside the task's `owned_files`. */
  outsideOwned: string[];
  /** Why its paths could not be read (it waits for an operator all the same). */
  error?: string;
}

/** The outcome of rebasing an agent branch onto the target's new tip. */
export type RebaseResult =
  /** `protected`: the protected paths of the rebased branch's diff, judged again. */
  /** `tip`: the rebased branch's new head; `onto`: the new base it was rebased onto. */
  | { kind: "rebased"; tip: string; onto: string; diffChanged: boolean; protected?: string[] }
  | { kind: "conflict"; files: string[]; otherChange: string };

/** Something that happened. */
export type CoreEvent =
  /** A second passed: deadlines and merge retries (timeouts), then a settle. */
  | { type: "tick" }
  /**
   * Events were decided that may change what may start (the executor asks once the events that
   * arrived together are decided): start what may start, say why the rest waits, end the run
   * when nothing can progress.
   */
  | { type: "settle" }
  | {
    type: "spawned";
    taskId: string;
    sessionId: string;
    startedAt: number;
    deadline: number;
    /** The attempt's number: one more than the task's claims in the run journal. */
    attempt: number;
    /**
     * Its number among the attempts that count against the retry limit (the task store's count
     * after the claim): lower than `attempt` after runs that counted none (a limit, a batch try).
     */
    counted?: number;
    model?: string;
    batchEligible?: boolean;
    /** Where the agent runs: `worktree` or `container:<runtime>:<image id>` (DESIGN.md §14). */
    isolation?: string;
    /** What its worktree environment gave it (absent when nothing was configured). */
    prepared?: PreparedView;
    /** The adapter that runs it. */
    adapter: string;
    /** The remote worker that runs it (`service worker`, DESIGN.md §16); absent: this machine. */
    worker?: string;
  }
  | {
    type: "spawn_failed";
    taskId: string;
    sessionId: string;
    diagnosis: ExitDiagnosis;
    /**
     * Set when the attempt got as far as its worktree environment (its setup failed): the claim
     * it made is journaled with this number, then what the worktree got.
     */
    attempt?: number;
    model?: string;
    /** The adapter the attempt was started with (set with `attempt`). */
    adapter?: string;
    prepared?: PreparedView;
    /** Where its setup ran (set with `attempt`): `worktree` or `container:<runtime>:<id>`. */
    isolation?: string;
  }
  /** The task's request went to a provider's batch API (the task is claimed for it). */
  | {
    type: "batch_submitted";
    taskId: string;
    sessionId: string;
    provider: string;
    /** The adapter whose provider it is. */
    adapter: string;
    batchId: string;
    customId: string;
    startedAt: number;
    attempt: number;
    model: string;
  }
  /** A request submitted before this process started is polled again (after a stop or crash). */
  | {
    type: "batch_adopted";
    taskId: string;
    sessionId: string;
    batchId: string;
    startedAt: number;
  }
  /**
   * What came of a task's batch request: `applied` — its patch is committed in the task's
   * worktree and the task is DONE; anything else — it goes to the agent CLI in real time.
   */
  | {
    type: "batch_result";
    taskId: string;
    sessionId?: string;
    batchId?: string;
    outcome: BatchOutcome;
    reason?: string;
  }
  /** The task was claimed through the task API before the loop could claim it. */
  | { type: "claim_lost"; taskId: string }
  /**
   * A remote worker asks for up to `free` tasks (of `roles`, any when absent); answered by one
   * `dispatch` action naming the tasks it gets (none, when nothing may start).
   */
  | {
    type: "worker_asks";
    requestId: string;
    worker: string;
    free: number;
    roles?: string[];
    /** The adapters it can start (absent: any; lib/workers/fleet.ts). */
    offer?: { adapters?: string[] };
    /** A claim ticket's task (DESIGN.md §17): that task only, or none. */
    task?: string;
    /**
     * The Kubernetes launcher asks: the tasks it gets are reserved for the Jobs it creates
     * (`launching`), not claimed; each Job's pod claims its own with a ticket.
     */
    reserve?: boolean;
  }
  /** The remote workers the server has heard from, as the scheduler counts them. */
  | { type: "workers_seen"; workers: WorkerSlots[] }
  /**
   * A remote session's agent did not start on its worker (its CLI, key, image or launch): the
   * worker's fault, not the task's — no attempt counted, and the task goes to another worker.
   */
  | {
    type: "remote_start_failed";
    taskId: string;
    sessionId: string;
    worker: string;
    reason: string;
    /** The worker was cordoned for it (repeated failures): why. */
    cordoned?: string;
  }
  /** A task's Job ended (or was never created) before its pod claimed it: it is ready again. */
  | { type: "launch_lapsed"; taskId: string; reason: string }
  /** A Job an earlier process created for an OPEN task still runs: the task stays reserved for it. */
  | { type: "launch_adopted"; taskId: string; job: string }
  /**
   * A remote session an earlier process started is still held by its worker (its lease lives
   * in the task store): the run waits for its report as for any agent.
   */
  | {
    type: "remote_adopted";
    taskId: string;
    sessionId: string;
    worker: string;
    startedAt: number;
    deadline: number;
  }
  | {
    type: "agent_exited";
    taskId: string;
    sessionId: string;
    exitCode: number;
    durationMs: number;
    /** The log matched a rate-limit rule. */
    rateLimited: boolean;
    /** The agent's branch holds work beyond its base (leftovers committed). */
    hasWork: boolean;
    /**
     * Asked only under `recovery.land_unreported` for interrupted work: true when the task has
     * completion signals and every one passes on that work.
     */
    signalsPass?: boolean;
    diagnosis: ExitDiagnosis;
    /**
     * It ran on a remote worker: which, and the commit it delivered (null: none); `drained` when
     * the worker ended it because the worker itself was stopping (`ended_by: "drain"`).
     */
    remote?: {
      worker: string;
      commit: string | null;
      push_error?: string;
      drained?: boolean;
      /**
       * Its end was not the task's doing: no orchestrator answered when it ended (`stop`: the
       * run was stopped), or its worker's process restarted (`restart`). No attempt is counted;
       * its pushed work is kept.
       */
      interrupted?: "stop" | "restart";
    };
  }
  | {
    type: "rate_limit_hit";
    taskId: string;
    sessionId: string;
    adapter: string;
    rule: string;
    line: string;
    until: number;
    /** `until` is the reset time the limit named (else the cooldown). */
    named: boolean;
  }
  /** A task an earlier process left claimed or done (it was stopped or crashed). */
  | {
    type: "recovered";
    taskId: string;
    /** The session whose worktree or branch holds the work. */
    sessionId?: string;
    hasWorktree: boolean;
    hasWork: boolean;
    /** As in `agent_exited`. */
    signalsPass?: boolean;
  }
  /**
   * The diff of a DONE task's work was captured (or capture failed open) and its verification
   * ran; `gatesFailed` when its gates failed on the candidate tree (the merge will refuse it).
   */
  | { type: "captured"; taskId: string; gatesFailed?: boolean; judged?: DiffJudgement }
  | { type: "merge_result"; taskId: string; result: MergeResult }
  /** The host says something changed for the task's pull request (or its retry is due). */
  | { type: "landing_changed"; taskId: string }
  | { type: "rebase_result"; taskId: string; result: RebaseResult }
  | {
    type: "review";
    taskId: string;
    decision: "approve" | "request_changes" | "merge";
    principal: string;
    note?: string;
  }
  /** The store moved a task (the task API, the CLI, the heartbeat monitor). */
  | { type: "task_changed"; taskId: string; from: TaskStatus | null; to: TaskStatus }
  | { type: "stop" };

export type { BatchOutcome };

/** A change of a task's status in the store. */
export type StoreChange =
  | { op: "orphan"; taskId: string; reason: string }
  | {
    op: "requeue";
    taskId: string;
    reason: string;
    countAttempt: boolean;
    /** The session whose kept work the next attempt continues; null: start afresh. */
    resumeFrom?: string | null;
  }
  /** ORPHANED → FAILED: the attempts are spent (or the failure would repeat). */
  | { op: "give_up"; taskId: string; reason: string }
  /** DONE → FAILED: its work cannot land. */
  | { op: "merge_failed"; taskId: string; reason: string }
  /**
   * ORPHANED → DONE: unreported work will land like any completion (an agent that exited 0 on
   * its own, or interrupted work under `recovery.land_unreported`).
   */
  | { op: "recover_done"; taskId: string }
  /** DONE → CANCELLED: a person closed its pull request unmerged (`reason` says who). */
  | { op: "cancel"; taskId: string; reason: string }
  /** DONE → CLOSED: landed. */
  | { op: "merged"; taskId: string }
  /** DONE → CLOSED: its work changes nothing on the target, so nothing was merged. */
  | { op: "unchanged"; taskId: string };

/** Something to do. */
export type Action =
  | { kind: "journal"; event: JournalEvent }
  | { kind: "store"; change: StoreChange }
  | { kind: "spawn"; taskId: string; adapter: string; note?: string }
  /** Claim `taskIds` and submit their requests to the batch lane; then `batch_submitted` each. */
  | { kind: "batch"; taskIds: string[] }
  | { kind: "terminate"; taskId: string; reason: EndReason }
  /**
   * Hand `tasks` to `worker`'s request `requestId` (claim each, publish its base, answer the
   * request); then `spawned` (with `worker`) or `claim_lost` each. No tasks: the answer is 204.
   */
  | {
    kind: "dispatch";
    requestId: string;
    worker: string;
    tasks: { taskId: string; adapter: string; note?: string }[];
    /** The launcher's request: the tasks are reserved for Jobs, nothing is claimed. */
    reserve?: boolean;
  }
  /** The worker holding `taskId` lost its lease: fetch what it pushed; then `agent_exited`. */
  | { kind: "remote_lost"; taskId: string; sessionId: string; reason: string }
  /** Commit what the agent left, store its diff (task_diff_captured); then `captured`. */
  | { kind: "capture"; taskId: string }
  /** Gates on the merged tree, then merge; then `merge_result`. */
  | { kind: "merge"; taskId: string }
  /** Rebase the agent branch onto the target's tip; then `rebase_result`. */
  | { kind: "rebase"; taskId: string }
  /** Remove the worktree (work kept on a rescue ref) and keep the session log in the run. */
  | { kind: "reap"; taskId: string; reason: string }
  /** Commit what the agent left and keep its worktree for the next run (stop). */
  | { kind: "keep"; taskId: string; reason: string }
  | { kind: "log"; line: string }
  | { kind: "publish_waits"; waits: Record<string, string> }
  | { kind: "finish"; verdict: RunVerdict };
