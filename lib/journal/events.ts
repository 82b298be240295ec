/**
 * The journal's event vocabulary: one typed constructor per event type, so no caller spells a
 * type name or shapes a row's `data` by hand (`row.ts` is the one place an event becomes bytes).
 *
 * The board reads the events of spec §2.7 (DESIGN.md §4); the others are detail rows that the
 * fold ignores (spec §2.7, §9.3), so adding one never changes a projection.
 */
import type { JsonValue } from "./canonical_json.ts";
import type { JournalEvent } from "./row.ts";

type Data = Record<string, JsonValue>;

/** Drop keys whose value is undefined (a row leaves a key out rather than writing null). */
function defined(data: Record<string, JsonValue | undefined>): Data {
  const out: Data = {};
  for (const [k, v] of Object.entries(data)) if (v !== undefined) out[k] = v;
  return out;
}

function event(type: string, data: Record<string, JsonValue | undefined>): JournalEvent {
  return { type, data: defined(data) };
}

// ---- run envelope (board: run.started / run.completed) ---------------------------------------

/** A step of the plan as carried in `run_started` (planned tasks show on the page before a claim). */
export interface PlannedTask {
  task_id: string;
  title: string;
  role: string;
  stage?: string;
  /** Identifies the step across runs (stage, position, goal). */
  step_key?: string;
  depends_on: string[];
}

/** Facts of a new run. */
export interface RunStartedData {
  run_id: string;
  plan?: string;
  /** The plan file, relative to the workspace (a protected path of later runs, DESIGN.md §18). */
  plan_file?: string;
  plan_sha256?: string;
  config_sha256?: string;
  adapter?: string;
  target_branch?: string;
  /** Number of tasks the run starts with. */
  tasks?: number;
  /** The planned tasks, in plan order. */
  planned?: PlannedTask[];
  /** Tasks of the plan that an earlier run already landed (not run again). */
  already_landed?: { task_id: string; run_id: string; commit: string }[];
  /** Tasks of the plan an operator marked done earlier (nothing merged; not run again). */
  done_by_operator?: { task_id: string; run_id: string }[];
}

/** `run_started`: fills `board.run.started`. */
export function runStarted(data: RunStartedData): JournalEvent {
  return event("run_started", data as unknown as Data);
}

/** `run_resumed` (detail): a later process took over an interrupted run. */
export function runResumed(data: { run_id: string; pid: number }): JournalEvent {
  return event("run_resumed", data);
}

/** How a run ended. */
export type RunStatus = "completed" | "failed" | "stopped";

/** `run_completed`: fills `board.run.completed`. */
export function runCompleted(
  data: { run_id: string; status: RunStatus; counts?: Record<string, number> },
): JournalEvent {
  return event("run_completed", data);
}

// ---- task columns (spec §3.2) -----------------------------------------------------------------

/**
 * `task_claimed`: the card enters (or returns to) running. `adapter` names the agent CLI that
 * runs the attempt (a fallback while the configured one is parked); `lane: "batch"` says the
 * attempt is a request to the provider's batch API, not an agent.
 */
export function taskClaimed(data: {
  task_id: string;
  session_id: string;
  title?: string;
  role?: string;
  attempt?: number;
  model?: string;
  batch_eligible?: boolean;
  /** `worktree` (a host process) or `container:<runtime>:<image id>` (DESIGN.md §14). */
  isolation?: string;
  adapter?: string;
  lane?: "batch";
  /** The remote worker that runs the attempt (DESIGN.md §16); absent: the orchestrator's machine. */
  worker?: string;
}): JournalEvent {
  return event("task_claimed", {
    ...data,
    batch_eligible: data.batch_eligible ? true : undefined,
  });
}

/** `task_batch_submitted` (detail): the task's request went to a provider's batch API. */
export function taskBatchSubmitted(data: {
  task_id: string;
  provider: string;
  batch_id: string;
  custom_id: string;
}): JournalEvent {
  return event("task_batch_submitted", data);
}

/**
 * How a batch request ended: its patch `applied` in the task's worktree, or it was `not_applied`,
 * `errored`, `expired` or `canceled` at the provider, `not_submitted` (no request was sent), or
 * `dropped` (the task was cancelled meanwhile).
 */
export type BatchOutcome =
  | "applied"
  | "not_applied"
  | "errored"
  | "expired"
  | "canceled"
  | "not_submitted"
  | "dropped";

/** `task_batch_result` (detail): what came of the task's batch request, and why. */
export function taskBatchResult(data: {
  task_id: string;
  batch_id?: string;
  outcome: BatchOutcome;
  reason?: string;
}): JournalEvent {
  return event("task_batch_result", data);
}

/** One failed check or failure reason on a card's gate receipt (`{kind, detail}` at least). */
export interface FailedSignal {
  kind: string;
  detail: string;
  output_tail?: string;
  [extra: string]: JsonValue | undefined;
}

/** `task_verification_failed`: the card moves to gated with `signals` as its receipt. */
export function taskVerificationFailed(
  data: { task_id: string; signals: FailedSignal[] },
): JournalEvent {
  return event("task_verification_failed", {
    task_id: data.task_id,
    signals: data.signals.map((s) => defined(s)),
  });
}

/** `task_retried`: a new attempt; the card moves to queued. */
export function taskRetried(data: { task_id: string; reason?: string }): JournalEvent {
  return event("task_retried", data);
}

/**
 * `task_completed`: the agent reported (or recovery found) finished work; needs review.
 * `recovered`: its agent ended without reporting (it exited 0 on its own); `interrupted` too:
 * its agent was interrupted and `recovery.land_unreported` lands it because every completion
 * signal passed.
 */
export function taskCompleted(
  data: { task_id: string; summary?: string; recovered?: boolean; interrupted?: boolean },
): JournalEvent {
  return event("task_completed", {
    ...data,
    recovered: data.recovered || data.interrupted ? true : undefined,
    interrupted: data.interrupted ? true : undefined,
  });
}

/**
 * `task_merged`: the verified work landed as `commit`. Landed through a pull request
 * (DESIGN.md §12), `pr` is its URL and `commit` the host's merge commit.
 */
export function taskMerged(
  data: {
    task_id: string;
    commit?: string;
    pr?: string;
    /** The work changed nothing on the target: nothing was merged, no pull request opened. */
    empty?: boolean;
  },
): JournalEvent {
  return event("task_merged", data);
}

/**
 * `task_unchanged`: the completed work changes nothing on the target branch (no commits, or
 * only changes already there), so nothing was merged and the task closed. The board's fold
 * ignores it (the card stays where `task_completed` put it); the page says "no changes".
 */
export function taskUnchanged(data: { task_id: string }): JournalEvent {
  return event("task_unchanged", data);
}

/**
 * `task_files_kept_out`: ignored or copied files the agent staged or committed were kept out of
 * the branch's commits (`rewritten_commits` of the agent's commits rewritten into one service
 * commit because they held any); the board's fold ignores it, the task detail shows it.
 */
export function taskFilesKeptOut(
  data: { task_id: string; paths: string[]; paths_total?: number; rewritten_commits: number },
): JournalEvent {
  return event("task_files_kept_out", data);
}

/**
 * `task_follow_up`: an operator sent the task's agent a follow-up from the board (its text, and
 * the audit entry that signs it); the board's fold ignores it, the task detail shows it.
 */
export function taskFollowUp(data: {
  task_id: string;
  seq: number;
  principal: string;
  text: string;
  audit_event_hash: string;
}): JournalEvent {
  return event("task_follow_up", data);
}

/**
 * `task_diff_captured`: attaches the diff summary (DESIGN.md §4), of the stored bytes; `truncated`
 * when those are the first whole files of a patch too large to store (lib/diff/shown_patch.ts):
 * the whole patch's bytes and files.
 */
export function taskDiffCaptured(data: {
  task_id: string;
  sha256: string;
  added: number;
  removed: number;
  files: number;
  truncated?: { bytes: number; files: number };
}): JournalEvent {
  return event("task_diff_captured", data);
}

/** A review decision's row (spec §2.6, DESIGN.md §4). */
export interface ReviewDecisionData {
  task_id: string;
  decision: "approve" | "request_changes" | "merge";
  note?: string;
  principal: string;
  scope: string;
  projection_hash: string;
  journal_head: string;
  /** Null when no diff was captured for the task. */
  diff_sha256: string | null;
  audit_event_hash: string;
}

/** `task_review_decision`: attaches the verdict; `merge` moves the card to merged. */
export function taskReviewDecision(data: ReviewDecisionData): JournalEvent {
  return event("task_review_decision", data as unknown as Record<string, JsonValue | undefined>);
}

// ---- detail rows (ignored by the fold) --------------------------------------------------------

/** `task_failed` (detail): the task is FAILED for good, with why. */
export function taskFailed(
  data: { task_id: string; reason: string; files?: string[] },
): JournalEvent {
  return event("task_failed", data);
}

/** `agent_exited` (detail): an agent process ended. */
export function agentExited(data: {
  task_id: string;
  session_id: string;
  exit_code: number;
  duration_ms: number;
  ended_by?: string;
  /** The remote worker it ran on (DESIGN.md §16), the commit it delivered, why none was. */
  worker?: string;
  commit?: string | null;
  push_error?: string;
  /** The agent did not start on its worker (the worker's fault: no attempt counted). */
  start_failure?: string;
  /** Why its end was not the task's: `stop` (no orchestrator answered), `restart` (its worker). */
  interrupted?: string;
  /** Its worker's lease ran out: no exit was seen (`exit_code` is a stand-in). */
  lease_lost?: true;
}): JournalEvent {
  return event("agent_exited", data);
}

/**
 * `merge_conflict` (detail): a merge attempt conflicted on `files`; `attempt` is the conflicting
 * attempt's number (as its `task_claimed` row says) when this process claimed it.
 */
export function mergeConflict(
  data: { task_id: string; files: string[]; attempt?: number },
): JournalEvent {
  return event("merge_conflict", data);
}

/** `budget_exceeded` (detail): scheduling stopped before the cap would be passed. */
export function budgetExceeded(data: {
  total_micro_usd: number;
  budget_micro_usd: number;
  estimate_micro_usd: number;
}): JournalEvent {
  return event("budget_exceeded", data);
}

/**
 * `rate_limited` (detail): an adapter's log matched a rate-limit rule; the adapter is parked
 * until `until` (epoch seconds): the reset time the limit named (`reset_named`), else the
 * cooldown.
 */
export function rateLimited(data: {
  task_id: string;
  session_id: string;
  adapter: string;
  rule: string;
  line: string;
  until: number;
  reset_named?: boolean;
}): JournalEvent {
  return event("rate_limited", { ...data, reset_named: data.reset_named ? true : undefined });
}

/** `task_cancelled` (detail): an operator cancelled the task. */
export function taskCancelled(data: { task_id: string; reason: string }): JournalEvent {
  return event("task_cancelled", data);
}

/**
 * `task_done_by_operator` (detail): an operator marked the task DONE while no agent worked on
 * it; it is done for good and nothing of it is merged.
 */
export function taskDoneByOperator(data: { task_id: string; reason: string }): JournalEvent {
  return event("task_done_by_operator", data);
}

/** `task_waiting` (detail): why a task that could run does not (blocked, owned files, a merge). */
export function taskWaiting(data: { task_id: string; reason: string }): JournalEvent {
  return event("task_waiting", data);
}

/**
 * `task_protected_paths` (detail, DESIGN.md §18): the captured diff touches protected paths, so
 * the work waits for an operator's merge. `error` instead says why its paths could not be read
 * (it waits all the same).
 */
export function taskProtectedPaths(
  data: { task_id: string; paths: string[]; error?: string },
): JournalEvent {
  return event("task_protected_paths", data);
}

/**
 * `task_oversized_files` (detail, DESIGN.md §18): the captured diff adds or grows `files` over
 * `max_landed_file_mb` (`limit_bytes`), sized from git's objects, so the work waits for an
 * operator's merge. At most 200 files are named; `files_total` then counts them all.
 */
export function taskOversizedFiles(
  data: {
    task_id: string;
    files: { path: string; bytes: number }[];
    files_total?: number;
    limit_bytes: number;
  },
): JournalEvent {
  return event("task_oversized_files", data);
}

/**
 * `task_owned_files_exceeded` (detail, DESIGN.md §18): the captured diff changes `paths` outside
 * the task's `owned_files`; `enforced` when `enforce_owned_files` refused it.
 */
export function taskOwnedFilesExceeded(
  data: { task_id: string; paths: string[]; owned_files: string[]; enforced: boolean },
): JournalEvent {
  return event("task_owned_files_exceeded", data);
}

/** `task_rebased` (detail): the agent branch was rebased onto the target's new tip. */
export function taskRebased(
  /** `onto`: the new base the work now stands on; `head`: the rebased branch's new tip. */
  data: { task_id: string; onto: string; head?: string; diff_changed: boolean },
): JournalEvent {
  return event("task_rebased", data);
}

/** `task_log_captured` (detail): the session log was kept in the run directory. */
export function taskLogCaptured(data: {
  task_id: string;
  session_id: string;
  /** `sha256:`-prefixed digest of the stored log bytes. */
  sha256: string;
  bytes: number;
}): JournalEvent {
  return event("task_log_captured", data);
}

/** The data of `task_worktree_prepared` (DESIGN.md §13). */
export interface WorktreePreparedData {
  task_id: string;
  session_id: string;
  /** Files copied from the checkout (the first {@link PREPARED_LIST_MAX}). */
  copied: string[];
  /** How many were copied, when more than the list holds. */
  copied_total?: number;
  /** Paths linked to the checkout's. */
  linked: string[];
  /** The setup commands as they ran, up to the first that failed. */
  setup: { command: string; exit_code: number; ms: number }[];
  ports: number[];
}

/** Items of a list `task_worktree_prepared` holds. */
const PREPARED_LIST_MAX = 200;

/** `task_worktree_prepared` (detail): what an agent's worktree got before its agent started. */
export function taskWorktreePrepared(data: WorktreePreparedData): JournalEvent {
  const many = data.copied.length > PREPARED_LIST_MAX;
  return event("task_worktree_prepared", {
    ...data,
    copied: data.copied.slice(0, PREPARED_LIST_MAX),
    copied_total: many ? data.copied.length : data.copied_total,
    linked: data.linked.slice(0, PREPARED_LIST_MAX),
    setup: data.setup.map((s) => ({ command: s.command, exit_code: s.exit_code, ms: s.ms })),
  });
}

// ---- verification evidence (detail rows; the fold ignores them) ------------------------------

/** The evidence of one completion as the service observed it (DESIGN.md §10). */
export interface VerificationRecordedData {
  task_id: string;
  session_id: string;
  tests_run: boolean;
  quality_gates_run: boolean;
  completion_signals_checked: boolean;
  verified: boolean;
  /** The runner summaries found in the session log (runner and line). */
  test_runs?: { runner: string; outcome: string; line: string }[];
  /** The flags the agent reported itself: a hint only. */
  reported?: {
    tests_run: boolean;
    quality_gates_run: boolean;
    completion_signals_checked: boolean;
  };
}

/** `task_verification_recorded` (detail): the ledger record of a completion, with its sources. */
export function taskVerificationRecorded(data: VerificationRecordedData): JournalEvent {
  return event("task_verification_recorded", data as unknown as Data);
}

/** `task_evidence_sealed` (detail): chains the `bundle_hash` of a task's sealed evidence bundle. */
export function taskEvidenceSealed(
  data: { task_id: string; bundle_hash: string; audit_event_hash?: string },
): JournalEvent {
  return event("task_evidence_sealed", data);
}

/** `task_evidence_unsealed` (detail): producers were declared but their bundle could not be sealed. */
export function taskEvidenceUnsealed(data: { task_id: string; reason: string }): JournalEvent {
  return event("task_evidence_unsealed", data);
}

// ---- pull requests (DESIGN.md §12; detail rows the fold ignores) -----------------------------

/**
 * `task_pr_opened` (detail): the task's pull request (merge request) was opened, or found open
 * for its branch after a restart. `branch` and `base` name its head and base branches.
 */
export function taskPrOpened(data: {
  task_id: string;
  number: number;
  url: string;
  head_sha: string;
  branch?: string;
  base?: string;
}): JournalEvent {
  return event("task_pr_opened", data);
}

/** `task_pr_updated` (detail): new work was pushed to the pull request's head, and why. */
export function taskPrUpdated(
  data: { task_id: string; number: number; head_sha: string; reason: string },
): JournalEvent {
  return event("task_pr_updated", data);
}

/**
 * `task_pr_check_rerun` (detail): a required check failed on the pull request's head and the host
 * was asked to run it again (`rerun` of `of`) before a new attempt is counted.
 */
export function taskPrCheckRerun(
  data: {
    task_id: string;
    number: number;
    head_sha: string;
    check: string;
    rerun: number;
    of: number;
    summary?: string;
  },
): JournalEvent {
  return event("task_pr_check_rerun", data);
}

/** `task_pr_closed` (detail): the pull request was closed unmerged, and why (and by whom). */
export function taskPrClosed(
  data: { task_id: string; number: number; reason: string; by?: string },
): JournalEvent {
  return event("task_pr_closed", data);
}

/** One check of a pull request's head as the host reports it. */
export interface PrCheckData {
  name: string;
  /** `pending`, `success` or `failure`. */
  state: string;
  required: boolean;
  url?: string;
}

/** One reviewer's latest review. */
export interface PrReviewData {
  user: string;
  /** `approved`, `changes_requested`, `commented` or `dismissed`. */
  state: string;
}

/**
 * `task_pr_status` (detail): what the host says of the pull request now — its state, checks,
 * reviews and what it waits for — journaled when it changes, so the page shows it from the run
 * directory alone.
 */
export function taskPrStatus(data: {
  task_id: string;
  number: number;
  state: string;
  head_sha: string;
  checks: PrCheckData[];
  reviews: PrReviewData[];
  waits_for?: string;
}): JournalEvent {
  return event("task_pr_status", data as unknown as Record<string, JsonValue | undefined>);
}

/**
 * `task_ticket_moved` (detail, docs/trackers.md#moving-tickets): what became of moving the task's
 * tracker ticket to the workflow state `move_to` names for `event` (claimed, landed, failed,
 * cancelled):
 * `moved`, `already` there, `left` (a done ticket is never moved back) or `failed` (given up;
 * `detail` says why). The task's own outcome never depends on it.
 */
export function taskTicketMoved(data: {
  task_id: string;
  tracker: string;
  ref: string;
  event: string;
  to: string;
  outcome: "moved" | "already" | "left" | "failed";
  /** The ticket's state now, as the tracker spells it. */
  state?: string;
  detail?: string;
}): JournalEvent {
  return event("task_ticket_moved", data);
}
