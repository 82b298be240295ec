/**
 * What the service needs of a code host to land work through pull requests (DESIGN.md §12),
 * in the host's own terms turned plain: a pull request (GitHub) or merge request (GitLab), the
 * checks on its head, its reviews, and what its base branch requires. `github.ts` and
 * `gitlab.ts` beside this file speak each host's REST API; `decide.ts` reads these shapes.
 */

/** A pull request (GitHub) or merge request (GitLab). */
export interface PullRequest {
  /** GitHub's number, GitLab's iid. */
  number: number;
  /** The page a person opens. */
  url: string;
  state: "open" | "closed" | "merged";
  headBranch: string;
  headSha: string;
  baseBranch: string;
  draft: boolean;
  /** False: it conflicts with its base; null: the host has not computed it yet. */
  mergeable: boolean | null;
  /** The host's merge commit once merged (GitLab: the squash commit, or the head when fast-forwarded). */
  mergeCommit?: string;
  /** GitHub's GraphQL node id (enqueueing into a merge queue needs it). */
  nodeId?: string;
}

/** One check of a head commit: a check run, a commit status, or GitLab's pipeline. */
export interface Check {
  name: string;
  state: "pending" | "success" | "failure";
  /** What the check said (a check run's output, a status's description, the failed jobs). */
  summary: string;
  url?: string;
  /** The base branch requires it. */
  required: boolean;
  /**
   * How the host re-runs it without a new push, when it can: a check run of an app
   * (`check_run`: rerequested), a GitHub Actions job (`actions_job`), GitLab's pipeline
   * (`pipeline`: its failed jobs retried). A commit status has none: whoever posted it owns it.
   */
  rerun?: { kind: "check_run" | "actions_job" | "pipeline"; id: number };
  /** When it completed, as the host says (tells a re-run's result from the one re-run). */
  completedAt?: string;
}

/** One reviewer's latest review. */
export interface Review {
  /** The host's id of the review (GitHub) or the reviewer (GitLab). */
  id: string;
  user: string;
  state: "approved" | "changes_requested" | "commented" | "dismissed";
  body: string;
  /** The head commit the review was given on, when the host says. */
  commitId?: string;
}

/** What the base branch requires before a pull request may merge. */
export interface Requirements {
  /** Required check names (GitLab: `pipeline` when it must succeed). */
  checks: string[];
  /** Approving reviews required. */
  approvals: number;
  /** Only approvals of the current head count (stale reviews are dismissed on push). */
  dismissStale: boolean;
  /** Merges go through a merge queue (GitHub) or merge train (GitLab). */
  queue: boolean;
  /**
   * A pull request must hold the base's tip before it merges (GitHub's strict required status
   * checks; GitLab's fast-forward or semi-linear merge method): only then is it rebased when the
   * base moves. Otherwise the host merges it as it is and a rebase only costs a CI run.
   */
  upToDate: boolean;
  /** Which rule requires it (`branch protection`, `the ruleset`, `GitLab's ff merge method`). */
  upToDateSource?: string;
  /** Where they were read from (`branch protection`, `rulesets`, `project settings` …). */
  sources: string[];
  /** Rules the token could not read: the host's own answer to a merge decides them. */
  unread: string[];
}

/** Everything the host says of one pull request now. */
export interface Snapshot {
  pr: PullRequest;
  /** Checks of its head (required or not). */
  checks: Check[];
  /** Each reviewer's latest review. */
  reviews: Review[];
  /** Approvals still missing as the host counts them (GitLab's approval rules); else computed. */
  approvalsLeft?: number;
  /** Its place in the merge queue or train, when it is in one. */
  queue?: { position?: number; state: string };
  /** Closed unmerged: who closed it and what they said last. */
  closedBy?: string;
  closeComment?: string;
}

/** A pull request to open. */
export interface OpenRequest {
  branch: string;
  base: string;
  title: string;
  body: string;
  draft: boolean;
  labels: string[];
  /** Ask the host to delete the branch once merged (GitLab). */
  deleteBranch: boolean;
  squash: boolean;
}

/** How a merge through the API went. */
export type MergeAnswer =
  | { merged: true; commit: string }
  /**
   * Refused; `queue`: the base requires its merge queue; `behind`: the base requires it to be up
   * to date with its tip; `status` the HTTP status.
   */
  | { merged: false; reason: string; status: number; queue?: boolean; behind?: boolean };

/** One problem found before a run, with its fix (preflight and `doctor`). */
export interface HostProblem {
  problem: string;
  fix: string;
}

/** One host's API as the landing needs it. */
export interface PullRequestHost {
  /** `GitHub` or `GitLab`. */
  readonly product: string;
  /** `pull request` or `merge request`. */
  readonly noun: string;
  /** `#12` or `!12`. */
  ref(number: number): string;
  /** What `base` requires, read from its protection rules. */
  requirements(base: string): Promise<Requirements>;
  /** The newest pull request (any state) whose head is `branch`. */
  findByHead(branch: string): Promise<PullRequest | undefined>;
  open(request: OpenRequest): Promise<PullRequest>;
  /**
   * The pull request, its checks and reviews now. `head`, the head the service pushed, lets the
   * host ask for the pull request and its head's checks side by side (one round trip).
   */
  snapshot(number: number, requirements: Requirements, head?: string): Promise<Snapshot>;
  /** The commit `base` points at on the host now. */
  baseTip(base: string): Promise<string>;
  /** Merge with the head SHA as the guard. */
  merge(pr: PullRequest, sha: string, method: "merge" | "squash" | "rebase"): Promise<MergeAnswer>;
  /** Put it in the base's merge queue (train), guarded by the head SHA. */
  enqueue(pr: PullRequest, sha: string, method: "merge" | "squash" | "rebase"): Promise<void>;
  /** Ask the host to run `check` again on the same head (its {@link Check.rerun} says how). */
  rerun(check: Check): Promise<void>;
  /** Comment, then close it unmerged. */
  close(pr: PullRequest, comment: string): Promise<void>;
  /** The review comments of `reviews` (inline ones with their file and line), for a prompt. */
  reviewComments(pr: PullRequest, reviews: Review[]): Promise<string>;
  /** Delete the head branch on the host once merged (if the host did not). */
  deleteBranch(branch: string): Promise<void>;
  /** Problems with the token and its permissions, each with its fix. */
  preflight(base: string): Promise<HostProblem[]>;
}
