/**
 * How one landing step ended, for the run loop's decision core (lib/orchestrator/core): the
 * outcomes of a merge into the local branch, and those only a pull request has — it waits on
 * the host, its base moved, a required check failed, a reviewer requested changes, a person
 * closed it. Plain data, shared by the landing (which produces it) and the core (which decides).
 */
import type { FailedSignal } from "../journal/events.ts";

/** What only a pull request can say. */
export type PullRequestOutcome =
  /** It waits on the host: checks, reviews, the merge queue, or the host itself (down, 5xx). */
  | { kind: "pending"; reason: string }
  /** The remote base moved past the work: rebase onto `onto`, gates again, push with lease. */
  | { kind: "base_moved"; onto: string; reason: string }
  /** A required check failed on the pushed head. */
  | { kind: "check_failed"; check: string; summary: string; url?: string; pr: string }
  /** A reviewer requested changes on the host; `comments` is what they wrote. */
  | { kind: "changes_requested"; by: string[]; comments: string; pr: string }
  /** A person closed it unmerged; `reason` says who and what they said. */
  | { kind: "closed"; reason: string };

/** The outcome of a landing step. */
export type LandingOutcome =
  /**
   * Landed: `commit` is the new tip (the host's merge commit; `pr` its URL). `empty`: the work
   * changes nothing on the base, so no pull request was opened (`commit` is the base's tip).
   */
  | { kind: "merged"; commit: string; pr?: string; empty?: boolean }
  /** Its merge would change nothing on the base: no pull request, nothing lands. */
  | { kind: "unchanged" }
  | { kind: "gates_failed"; signals: FailedSignal[] }
  | { kind: "conflict"; files: string[] }
  /** The local merge waits (the user's checkout, a moved branch); retried on the clock. */
  | { kind: "waiting"; reason: string }
  | PullRequestOutcome;
