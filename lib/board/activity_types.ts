/**
 * What the board page shows of each task beyond its card (lib/board/activity.ts folds it): the
 * task's state and why, and every attempt with its outcome. Types only, importing nothing but
 * lib/json.ts, so the browser bundle names them without reaching the journal
 * (lib/import_graph_test.ts keeps it so).
 */
import type { JsonValue } from "../json.ts";

/** A failed check or failure reason (at least `kind` and `detail`). */
export type Signal = { kind: string; detail: string; [extra: string]: JsonValue };

/**
 * How an attempt ended (`running` while it has not; `interrupted`: its agent was stopped, lost
 * with the orchestrator or rate limited, and a new attempt follows without counting it).
 */
export type AttemptOutcome =
  | "running"
  | "interrupted"
  | "completed"
  | "gated"
  | "merged"
  | "unchanged"
  | "failed"
  | "cancelled";

/** One claim of a task and what came of it. */
export interface Attempt {
  session_id: string;
  /** 1-based, in claim order within this run (`nextAttemptNumber` in lib/board/activity.ts). */
  number: number;
  role?: string;
  model?: string;
  /** Where its agent ran: `worktree` or `container:<runtime>:<image id>` (DESIGN.md §14). */
  isolation?: string;
  /** The agent CLI that ran it (a fallback while the configured one was parked). */
  adapter?: string;
  /** The remote worker it ran on (`service worker`, DESIGN.md §16); absent: the orchestrator's machine. */
  worker?: string;
  /** It was a request to a provider's batch API, not an agent (DESIGN.md §15). */
  batch?: BatchTry;
  outcome: AttemptOutcome;
  /** The failed signals when the attempt was gated (agent failure, gates, merge conflict …). */
  signals?: Signal[];
  /** Why a new attempt followed (the `task_retried` reason). */
  retried_because?: string;
  /** The agent's own summary, from its completion. */
  summary?: string;
  /**
   * Its work was completed without a report: its agent exited 0 on its own (`exited`), or it
   * was interrupted and `recovery.land_unreported` landed it (`interrupted`).
   */
  unreported?: "exited" | "interrupted";
  /** How its agent ended; `lease_lost`: its worker went silent, no exit seen (no code to show). */
  exit?: { exit_code: number; duration_ms: number; ended_by?: string; lease_lost?: boolean };
  /** The session log kept in the run directory (`logs/<session_id>.log`). */
  log?: { sha256: string; bytes: number };
  /** What its worktree got before its agent started (`task_worktree_prepared`, DESIGN.md §13). */
  prepared?: AttemptPrepared;
  /** What the service observed of this completion (`task_verification_recorded`). */
  verification?: AttemptVerification;
  /** The operators' review decisions taken while this attempt was the latest. */
  reviews?: AttemptReview[];
  /**
   * Ignored or copied files kept out of its commits, and how many of the agent's commits were
   * rewritten into one because they held any (`task_files_kept_out`).
   */
  kept_out?: { paths: string[]; paths_total?: number; rewritten_commits: number };
  /** Protected paths its diff touches (`task_protected_paths`, DESIGN.md §18). */
  protected_paths?: string[];
  /** Files over `max_landed_file_mb` its diff adds or grows (`task_oversized_files`). */
  oversized_files?: OversizedFiles;
  /** Paths its diff changes outside the task's owned_files (`task_owned_files_exceeded`). */
  owned_files_exceeded?: OwnedFilesExceeded;
}

/**
 * Files a diff adds or grows over `max_landed_file_mb` (`task_oversized_files`, DESIGN.md §18):
 * the first 200 with their sizes, how many in all when more, and the limit in bytes.
 */
export interface OversizedFiles {
  files: { path: string; bytes: number }[];
  files_total?: number;
  limit_bytes?: number;
}

/** A diff that left its task's owned_files, and whether `enforce_owned_files` refused it. */
export interface OwnedFilesExceeded {
  paths: string[];
  owned_files: string[];
  enforced: boolean;
}

/** What an attempt's worktree environment gave it. */
export interface AttemptPrepared {
  copied: string[];
  /** How many files were copied, when more than `copied` lists. */
  copied_total?: number;
  linked: string[];
  /** The setup commands as they ran, up to the first that failed. */
  setup: { command: string; exit_code: number; ms: number }[];
  ports: number[];
}

/** A batch request: where it went, and what came of it once its batch ended. */
export interface BatchTry {
  provider?: string;
  batch_id?: string;
  /** `applied`, `not_applied`, `errored`, `expired`, `canceled`, `not_submitted`, `dropped`. */
  outcome?: string;
  reason?: string;
}

/** One review decision on an attempt's work, as its journal row says. */
export interface AttemptReview {
  decision: string;
  principal: string;
  note?: string;
  /** 0-based row index of the decision. */
  index: number;
}

/** The evidence flags of one completion and the test runs its log showed. */
export interface AttemptVerification {
  tests_run: boolean;
  quality_gates_run: boolean;
  completion_signals_checked: boolean;
  verified: boolean;
  test_runs: { runner: string; outcome: string; line: string }[];
}

/**
 * Where a task stands, in words the page shows (the board column where it has a card); `done`:
 * an operator marked it done while no agent worked on it (nothing merged; its card is gated);
 * `unchanged`: its completed work changed nothing, so nothing was merged and it closed (its card
 * stays under needs review: the board's fold has no row that moves it).
 */
export type TaskState =
  | "planned"
  | "blocked"
  | "waiting"
  | "queued"
  | "running"
  | "gated"
  | "needs_review"
  | "merged"
  | "unchanged"
  | "failed"
  | "cancelled"
  | "done";

/** A task's pull request as the `task_pr_*` rows tell it (the board's fold ignores them). */
export interface PullRequestView {
  number: number;
  url: string;
  /** `open`, `draft`, `queued`, `closed` or `merged`. */
  state: string;
  head_sha?: string;
  checks: { name: string; state: string; required: boolean; url?: string }[];
  reviews: { user: string; state: string }[];
  /** What it waits for ("waits for required check `ci/test`"), while it waits. */
  waits_for?: string;
  /** Why it was closed unmerged. */
  closed_reason?: string;
}

/** Everything the journal says about one task. */
export interface TaskActivity {
  task_id: string;
  title?: string;
  role?: string;
  stage?: string;
  depends_on: string[];
  /** In the run's plan (`run_started.planned`). */
  planned: boolean;
  state: TaskState;
  /** Why it waits or stopped (the latest wait, failure or cancel reason); absent otherwise. */
  reason?: string;
  attempts: Attempt[];
  /** Files of the latest merge conflicts. */
  conflict_files?: string[];
  rebases: number;
  merge_decided: boolean;
  merged?: { commit?: string; pr?: string };
  /** Its latest pull request (landing through a host, DESIGN.md §12). */
  pull_request?: PullRequestView;
  /**
   * 0-based row index where the card's current story starts: the latest claim, or a later diff
   * capture that replaced reviewed work (a rebase). The projection keeps older gates and
   * verdicts on the card (DESIGN.md §5); the page shows them only in the task detail.
   */
  current_since?: number;
  /** Where the latest claim's agent ran (`task_claimed.isolation`, DESIGN.md §14). */
  isolation?: string;
  /** 0-based row index of the latest `task_verification_failed` (the card's gates). */
  gated_index?: number;
  /** `sha256` and 0-based row index of the latest `task_diff_captured`. */
  diff_sha256?: string;
  diff_index?: number;
  /** The latest diff was too large to store whole: the whole patch's bytes and files. */
  diff_truncated?: { bytes: number; files: number };
  /** `bundle_hash` of the latest `task_evidence_sealed` (the card checks that bundle). */
  evidence_sealed?: string;
  /** The current attempt is a batch request (the card says "batch"). */
  batch?: BatchTry;
  /** Follow-ups operators sent its agent from the board (`task_follow_up`), oldest first. */
  follow_ups?: { seq?: number; principal?: string; text: string; index: number }[];
  /**
   * Protected paths the current attempt's diff touches: it lands only on an operator's merge
   * (DESIGN.md §18). Empty with `protected_error` when its paths could not be read.
   */
  protected_paths?: string[];
  protected_error?: string;
  /** Files over `max_landed_file_mb` the current attempt's diff adds or grows (held the same way). */
  oversized_files?: OversizedFiles;
  /** The current attempt's diff left the task's owned_files. */
  owned_files_exceeded?: OwnedFilesExceeded;
}

/** A task of the outline: where it stands and why (no attempts). */
export type OutlineTask = Omit<TaskActivity, "attempts"> & { attempts: number };

/** A planned task that an earlier run already landed (`run_started.already_landed`). */
export interface AlreadyLanded {
  task_id: string;
  run_id: string;
  commit: string;
}

/**
 * A journal row of a known type that counts for nothing, and why (the page lists it; the
 * journal's typed reader, lib/journal/event_reader.ts, decides which).
 */
export interface IgnoredRow {
  /** 0-based row index. */
  index: number;
  /** Its event type. */
  type: string;
  reason: string;
  task_id?: string;
}
