/**
 * What happened to each task of a run, folded from every row of its journal — the board's
 * events and the detail rows the board ignores (spec §2.7, §9.3). The board page reads it for
 * what the five columns cannot say: planned tasks that have not started, why a task waits, each
 * attempt with its outcome and reason, and the session logs kept in the run directory. It never
 * changes the projection: the board is folded by `fold.ts` alone.
 *
 * Pure, like the board fold: `type` and `data` only, never `ts` or the host.
 */
import type { JsonValue } from "../journal/canonical_json.ts";
import type { JournalEvent } from "../journal/row.ts";
import type { RowSink } from "../journal/incremental.ts";
import {
  type EventType,
  type MalformedRow,
  type ReadEvent,
  type ReadOf,
  readRow,
} from "../journal/event_reader.ts";
import type {
  AlreadyLanded,
  Attempt,
  AttemptPrepared,
  AttemptVerification,
  BatchTry,
  IgnoredRow,
  OutlineTask,
  Signal,
  TaskActivity,
} from "./activity_types.ts";

/** The activity of a run's journal (mutable while folding). */
export interface ActivityState {
  tasks: Map<string, TaskActivity>;
  /** Task ids in first-seen order (plan order for planned tasks). */
  order: string[];
  already_landed: AlreadyLanded[];
  /** The first rows that count for nothing (malformed: the board ignores them too). */
  ignored: IgnoredRow[];
  /** How many rows count for nothing (more than {@link ActivityState.ignored} may list). */
  ignored_count: number;
}

/** An empty activity. */
export function initialActivity(): ActivityState {
  return { tasks: new Map(), order: [], already_landed: [], ignored: [], ignored_count: 0 };
}

function task(state: ActivityState, id: string): TaskActivity {
  let t = state.tasks.get(id);
  if (!t) {
    t = {
      task_id: id,
      depends_on: [],
      planned: false,
      state: "queued",
      attempts: [],
      rebases: 0,
      merge_decided: false,
    };
    state.tasks.set(id, t);
    state.order.push(id);
  }
  return t;
}

function current(t: TaskActivity): Attempt | undefined {
  return t.attempts.at(-1);
}

function signalsOf(v: JsonValue[] | undefined): Signal[] {
  if (!v) return [];
  return v.filter((s): s is Signal =>
    s !== null && typeof s === "object" && !Array.isArray(s) && typeof s.kind === "string"
  ).map((s) => ({ ...s, detail: typeof s.detail === "string" ? s.detail : String(s.detail) }));
}

function reasonOf(signals: Signal[]): string {
  return signals.map((s) => `${s.kind}: ${s.detail}`).join("; ");
}

/** Row types that can be the first a journal says about a task. */
const INTRODUCES = new Set<EventType>([
  "task_claimed",
  "task_completed",
  "task_verification_failed",
  "task_retried",
  "task_merged",
  "task_failed",
  "task_cancelled",
  "task_done_by_operator",
  "task_waiting",
  // Sent once the store holds the task as running, which can be before its claim row is written.
  "task_follow_up",
]);

/**
 * The number of `taskId`'s next attempt: one more than the claims the run's journal holds for
 * it. Attempts are numbered by claim — 1, 2, 3… — by the terminal, `status`, the card and the
 * task detail alike, whether or not an attempt counted against the retry limit.
 */
export function nextAttemptNumber(state: ActivityState, taskId: string): number {
  return (state.tasks.get(taskId)?.attempts.length ?? 0) + 1;
}

/**
 * Fold the row at 0-based line `index` into `state`. Rows of unknown types and rows without a
 * task id change nothing; rows that count for nothing (lib/journal/event_reader.ts says which,
 * the board ignores them too) are only listed in {@link ActivityState.ignored}.
 */
export function foldActivity(state: ActivityState, row: JournalEvent, index: number): void {
  const event = readRow(row);
  if (!event) return;
  if (!("type" in event)) return noteIgnored(state, event, index);
  if (event.type === "run_started") return foldPlan(state, event);
  if (!("task_id" in event)) return;
  // Attachment and detail rows describe a task the journal already knows, never introduce one.
  if (!state.tasks.has(event.task_id) && !INTRODUCES.has(event.type)) return;
  const t = task(state, event.task_id);
  ON_TASK[event.type]?.(t, event as never, { state, index, attempt: current(t) });
}

/** Rows listed in {@link ActivityState.ignored}; the rest are only counted. */
const IGNORED_LISTED = 20;

function noteIgnored(state: ActivityState, row: MalformedRow, index: number): void {
  state.ignored_count++;
  if (state.ignored.length >= IGNORED_LISTED) return;
  state.ignored.push({
    index,
    type: row.malformed,
    reason: row.reason,
    ...(row.task_id === undefined ? {} : { task_id: row.task_id }),
  });
}

function foldPlan(state: ActivityState, event: ReadOf<"run_started">): void {
  for (const p of event.planned) {
    const t = task(state, p.task_id);
    t.planned = true;
    t.title ??= p.title;
    t.role ??= p.role;
    t.stage ??= p.stage;
    t.depends_on = p.depends_on;
    if (t.attempts.length === 0) t.state = "planned";
  }
  for (const l of event.already_landed) {
    state.already_landed.push({
      task_id: l.task_id,
      run_id: l.run_id ?? "",
      commit: l.commit ?? "",
    });
  }
}

/** Where a task row is folded: the run's activity, the row's index, the task's latest attempt. */
interface At {
  state: ActivityState;
  index: number;
  attempt: Attempt | undefined;
}

type TaskEventType = Extract<ReadEvent, { task_id: string }>["type"];

/** What each task event does to its task's activity (events not listed change nothing). */
const ON_TASK: {
  [T in TaskEventType]?: (t: TaskActivity, event: ReadOf<T>, at: At) => void;
} = {
  task_claimed(t, e, { state, index }) {
    t.title = e.title ?? t.title;
    t.role = e.role ?? t.role;
    const batch: BatchTry | undefined = e.lane === "batch" ? {} : undefined;
    t.attempts.push({
      session_id: e.session_id ?? "",
      number: nextAttemptNumber(state, t.task_id),
      role: e.role,
      model: e.model,
      ...(e.isolation ? { isolation: e.isolation } : {}),
      ...(e.adapter ? { adapter: e.adapter } : {}),
      ...(e.worker ? { worker: e.worker } : {}),
      ...(batch ? { batch } : {}),
      outcome: "running",
    });
    t.isolation = e.isolation;
    t.batch = batch; // the same object: the batch rows below fill both
    t.protected_paths = undefined; // what a diff touched is the attempt's
    t.protected_error = undefined;
    t.oversized_files = undefined;
    t.owned_files_exceeded = undefined;
    t.state = "running";
    t.reason = undefined;
    t.current_since = index;
  },
  task_batch_submitted(_t, e, { attempt }) {
    if (!attempt?.batch) return;
    attempt.batch.provider = e.provider;
    attempt.batch.batch_id = e.batch_id;
  },
  task_batch_result(_t, e, { attempt }) {
    if (!attempt?.batch || (e.batch_id && e.batch_id !== attempt.batch.batch_id)) return;
    attempt.batch.outcome = e.outcome;
    attempt.batch.reason = e.reason;
  },
  task_completed(t, e, { attempt }) {
    if (attempt) {
      attempt.outcome = "completed";
      attempt.summary = e.summary ?? attempt.summary;
      if (e.recovered === true) attempt.unreported = e.interrupted ? "interrupted" : "exited";
    }
    t.state = "needs_review";
    t.reason = undefined;
  },
  task_verification_failed(t, e, { index, attempt }) {
    const signals = signalsOf(e.signals);
    if (attempt) {
      attempt.outcome = "gated";
      attempt.signals = signals;
    }
    t.state = "gated";
    if (e.signals) t.gated_index = index;
    t.reason = reasonOf(signals);
    t.merge_decided = false;
    const conflicts = signals.filter((s) => s.kind === "merge_conflict").map((s) => s.detail);
    if (conflicts.length > 0) t.conflict_files = conflicts;
  },
  task_retried(t, e, { attempt }) {
    if (attempt) {
      attempt.retried_because = e.reason;
      if (attempt.outcome === "running") attempt.outcome = "interrupted";
    }
    t.state = "queued";
    t.reason = e.reason;
  },
  task_merged(t, e, { attempt }) {
    if (attempt) attempt.outcome = "merged";
    t.state = "merged";
    t.reason = undefined;
    t.merged = { commit: e.commit, ...(e.pr ? { pr: e.pr } : {}) };
    if (t.pull_request && e.pr === t.pull_request.url) {
      t.pull_request = { ...t.pull_request, state: "merged", waits_for: undefined };
    }
  },
  task_follow_up(t, e, { index }) {
    (t.follow_ups ??= []).push({
      ...(e.seq !== undefined ? { seq: e.seq } : {}),
      ...(e.principal ? { principal: e.principal } : {}),
      text: e.text,
      index,
    });
  },
  task_files_kept_out(_t, e, { attempt }) {
    if (!attempt) return;
    attempt.kept_out = {
      paths: e.paths,
      ...(e.paths_total !== undefined ? { paths_total: e.paths_total } : {}),
      rewritten_commits: e.rewritten_commits ?? 0,
    };
  },
  task_unchanged(t, _e, { attempt }) {
    if (attempt) attempt.outcome = "unchanged";
    t.state = "unchanged";
    t.reason = "no changes: the work changes nothing on the target branch, so nothing was " +
      "merged; the task is closed";
  },
  task_pr_opened(t, e) {
    t.pull_request = {
      number: e.number,
      url: e.url ?? "",
      state: "open",
      head_sha: e.head_sha,
      checks: [],
      reviews: [],
    };
  },
  task_pr_updated(t, e) {
    if (t.pull_request?.number === e.number) t.pull_request.head_sha = e.head_sha;
  },
  task_pr_status(t, e) {
    if (t.pull_request?.number !== e.number) return;
    t.pull_request = {
      ...t.pull_request,
      state: e.state ?? t.pull_request.state,
      head_sha: e.head_sha ?? t.pull_request.head_sha,
      checks: e.checks.map((c) => ({
        name: c.name ?? "",
        state: c.state ?? "",
        required: c.required === true,
        ...(c.url ? { url: c.url } : {}),
      })),
      reviews: e.reviews.map((r) => ({ user: r.user ?? "", state: r.state ?? "" })),
      waits_for: e.waits_for,
    };
  },
  task_pr_closed(t, e) {
    if (t.pull_request?.number !== e.number) return;
    t.pull_request = {
      ...t.pull_request,
      state: "closed",
      waits_for: undefined,
      closed_reason: e.reason,
    };
  },
  task_review_decision(t, e, { index, attempt }) {
    // Like the board: a merge decision puts the task under merged until its landing says otherwise.
    if (e.decision === "merge") {
      t.merge_decided = true;
      t.state = "merged";
      // Until its task_merged row, the merge is decided, not done: say so.
      t.reason = `merge decided by ${e.principal}; pending until it lands`;
    }
    if (!attempt) return;
    const { decision, principal, note } = e;
    (attempt.reviews ??= []).push({ decision, principal, index, ...(note ? { note } : {}) });
  },
  task_evidence_sealed(t, e) {
    t.evidence_sealed = e.bundle_hash;
  },
  task_diff_captured(t, e, { index, attempt }) {
    // A diff that replaces one an operator already reviewed (a rebase) starts a new story.
    const reviewed = attempt?.reviews?.some((r) => r.index > (t.current_since ?? -1));
    if (reviewed && t.diff_sha256 !== undefined && e.sha256 !== t.diff_sha256) {
      t.current_since = index;
    }
    t.diff_sha256 = e.sha256;
    t.diff_index = index;
    t.diff_truncated = e.truncated;
  },
  task_failed(t, e, { attempt }) {
    if (attempt && attempt.outcome === "running") attempt.outcome = "failed";
    t.state = "failed";
    t.reason = e.reason;
    if (e.files.length > 0) t.conflict_files = e.files;
  },
  task_cancelled(t, e, { attempt }) {
    if (attempt && attempt.outcome === "running") attempt.outcome = "cancelled";
    t.state = "cancelled";
    t.reason = e.reason;
  },
  task_done_by_operator(t, e) {
    t.state = "done";
    t.reason = e.reason;
  },
  task_waiting(t, e) {
    // A wait only describes a task that has not started (or whose landing waits).
    t.reason = e.reason;
    if (t.state === "planned" || t.state === "queued" || t.state === "blocked") {
      t.state = t.reason?.startsWith("blocked") ? "blocked" : "waiting";
    }
  },
  agent_exited(t, e) {
    const a = attemptOf(t, e.session_id);
    if (!a) return;
    a.exit = { exit_code: e.exit_code, duration_ms: e.duration_ms, ended_by: e.ended_by };
    if (e.lease_lost) a.exit.lease_lost = true;
  },
  task_log_captured(t, e) {
    const a = attemptOf(t, e.session_id);
    if (a) a.log = { sha256: e.sha256, bytes: e.bytes };
  },
  task_worktree_prepared(t, e) {
    const a = attemptOf(t, e.session_id);
    if (a) a.prepared = preparedOf(e);
  },
  task_verification_recorded(t, e) {
    const a = attemptOf(t, e.session_id);
    if (a) a.verification = verificationOf(e);
  },
  merge_conflict(t, e) {
    if (e.files.length > 0) t.conflict_files = e.files;
  },
  task_protected_paths(t, e, { attempt }) {
    t.protected_paths = e.paths;
    t.protected_error = e.error;
    if (attempt) attempt.protected_paths = t.protected_paths;
  },
  task_oversized_files(t, e, { attempt }) {
    t.oversized_files = {
      files: e.files,
      ...(e.files_total !== undefined ? { files_total: e.files_total } : {}),
      ...(e.limit_bytes !== undefined ? { limit_bytes: e.limit_bytes } : {}),
    };
    if (attempt) attempt.oversized_files = t.oversized_files;
  },
  task_owned_files_exceeded(t, e, { attempt }) {
    t.owned_files_exceeded = {
      paths: e.paths,
      owned_files: e.owned_files,
      enforced: e.enforced === true,
    };
    if (attempt) attempt.owned_files_exceeded = t.owned_files_exceeded;
  },
  task_rebased(t) {
    t.rebases++;
  },
};

function attemptOf(t: TaskActivity, sessionId: string): Attempt | undefined {
  return t.attempts.find((x) => x.session_id === sessionId);
}

function preparedOf(e: ReadOf<"task_worktree_prepared">): AttemptPrepared {
  return {
    copied: e.copied,
    ...(e.copied_total === undefined ? {} : { copied_total: e.copied_total }),
    linked: e.linked,
    setup: e.setup.map((s) => ({
      command: s.command,
      exit_code: s.exit_code ?? -1,
      ms: s.ms ?? 0,
    })),
    ports: e.ports,
  };
}

function verificationOf(e: ReadOf<"task_verification_recorded">): AttemptVerification {
  return {
    tests_run: e.tests_run === true,
    quality_gates_run: e.quality_gates_run === true,
    completion_signals_checked: e.completion_signals_checked === true,
    verified: e.verified === true,
    test_runs: e.test_runs.map((r) => ({
      runner: r.runner,
      outcome: r.outcome ?? "",
      line: r.line ?? "",
    })),
  };
}

/** Deep copy (the incremental view hands out snapshots while it keeps folding). */
function cloneActivity(state: ActivityState): ActivityState {
  return structuredClone(state);
}

/** The activity fold as an incremental journal sink. */
export const ACTIVITY_SINK: RowSink<ActivityState> = {
  init: initialActivity,
  apply: foldActivity,
  clone: cloneActivity,
};

/**
 * One task as the outline shows it (pure). A planned task whose dependencies have not landed is
 * shown blocked on them. A journaled "blocked" is re-read against the journal as it is now: the
 * orchestrator journals a wait only when it changes, so after a dependency is cancelled or
 * retried (perhaps with no orchestrator running) the last reason would tell an old story. It
 * stands while a dependency is still stuck on a FAILED task (it names the way out).
 */
export function outlineTask(state: ActivityState, t: TaskActivity): OutlineTask {
  const { attempts, ...rest } = t;
  const item: OutlineTask = { ...rest, attempts: attempts.length };
  // Only a planned task's dependencies are known (`run_started.planned`).
  if (t.state !== "planned" && !(t.state === "blocked" && t.planned)) return item;
  const pending = pendingDependencies(state, t);
  if (pending.length === 0) {
    if (t.state === "blocked") {
      item.state = "planned";
      item.reason = "nothing blocks it any more: it starts when the run goes on";
    }
    return item;
  }
  item.state = "blocked";
  const words = `waits on ${
    pending.map((p) => `${p} (${state.tasks.get(p)?.state ?? "not in this run"})`).join(", ")
  }`;
  if (t.state === "planned") item.reason ??= words;
  else if (!pending.some((p) => stuck(state, p, new Set()))) item.reason = `blocked: ${words}`;
  return item;
}

/** `t`'s dependencies that have neither landed (here or in an earlier run) nor been cancelled. */
function pendingDependencies(state: ActivityState, t: TaskActivity): string[] {
  return t.depends_on.filter((dep) => {
    const other = state.tasks.get(dep);
    if (!other) return !state.already_landed.some((l) => l.task_id === dep);
    return !["merged", "unchanged", "cancelled", "done"].includes(other.state);
  });
}

/** True when `id` FAILED, or waits on a task that did. */
function stuck(state: ActivityState, id: string, seen: Set<string>): boolean {
  const t = state.tasks.get(id);
  if (!t || seen.has(id)) return false;
  if (t.state === "failed") return true;
  if (t.state !== "blocked" && t.state !== "planned") return false;
  seen.add(id);
  return pendingDependencies(state, t).some((dep) => stuck(state, dep, seen));
}

/** Every task of the run in plan order (see {@link outlineTask}). */
export function outline(state: ActivityState): OutlineTask[] {
  return state.order.map((id) => outlineTask(state, state.tasks.get(id)!));
}
