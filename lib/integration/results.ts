/**
 * What integrating finished work can come to (the decision core takes these as they are): a
 * merge-in or a pull request's landing, a rebase onto the target's new tip, and what the service
 * found a captured diff to touch.
 */
import type { FailedSignal } from "../journal/events.ts";

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
  /**
   * Files it adds or grows over `max_landed_file_mb` (sized from git's objects): the work never
   * lands unattended. Absent or empty: none (or no limit).
   */
  oversized?: { path: string; bytes: number }[];
  /** The limit `oversized` was judged by, in bytes (`max_landed_file_mb`). */
  limitBytes?: number;
  /** Why its paths could not be read (it waits for an operator all the same). */
  error?: string;
}

/** The outcome of rebasing an agent branch onto the target's new tip. */
export type RebaseResult =
  /** `protected`: the protected paths of the rebased branch's diff, judged again. */
  /** `tip`: the rebased branch's new head; `onto`: the new base it was rebased onto. */
  | {
    kind: "rebased";
    tip: string;
    onto: string;
    diffChanged: boolean;
    protected?: string[];
    /** The files over `max_landed_file_mb` the rebased branch's diff adds or grows. */
    oversized?: { path: string; bytes: number }[];
  }
  | { kind: "conflict"; files: string[]; otherChange: string };
