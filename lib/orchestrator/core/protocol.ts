/**
 * What goes into the decision core (events: things that happened) and what comes out (actions:
 * things the executor does, journal rows included). The executor turns the outcome of an action
 * that takes time — a spawn, a diff capture, a merge, a rebase — into the next event.
 */
import type { BatchOutcome } from "../../journal/events.ts";
import type { JournalEvent } from "../../journal/row.ts";
import type { TaskStatus } from "../../tasks/lifecycle.ts";
import type { EndReason, RunVerdict } from "./state.ts";
import type { AgentLaneEvent } from "../../agent_session/events.ts";
import type { BatchLaneEvent } from "../../batch/mod.ts";
import type { Dispatch, WorkerLaneEvent } from "../../workers/lane_events.ts";
import type { DiffJudgement, MergeResult, RebaseResult } from "../../integration/mod.ts";

export type { ExitDiagnosis, PreparedView } from "../../agent_session/events.ts";
export type { DiffJudgement, MergeResult, RebaseResult } from "../../integration/mod.ts";

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
  | AgentLaneEvent
  | BatchLaneEvent
  | WorkerLaneEvent
  /** A task's Job ended (or was never created) before its pod claimed it: it is ready again. */
  | { type: "launch_lapsed"; taskId: string; reason: string }
  /** A Job an earlier process created for an OPEN task still runs: the task stays reserved for it. */
  | { type: "launch_adopted"; taskId: string; job: string }
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
  /** End the run; `now`: a second Ctrl-C — agents still ending get SIGKILL without the grace. */
  | { type: "stop"; now?: true };

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
  /** End `taskId`'s agent: SIGTERM, the grace, SIGKILL (`now`: SIGKILL at once). */
  | { kind: "terminate"; taskId: string; reason: EndReason; now?: true }
  | Dispatch
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
