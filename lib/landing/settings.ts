/**
 * The `landing` block of service.yaml (DESIGN.md §12) as the run uses it (pure): defaults filled
 * in (the host's public API, its usual token variable, the workspace's branch as the base), the
 * remote-tracking ref the work is cut from and gated against, and whether the tracker webhook of
 * the same host is configured (then it tells of changes, and polling is only a safety net, five
 * times slower).
 */
import type { ServiceConfig } from "../config/schema.ts";
import { trackingRef } from "../git/remote.ts";

/** A host pull requests are opened on. */
export type Provider = "github" | "gitlab";

/** The public API of each host (`api_url` overrides it: GitHub Enterprise, self-managed GitLab). */
const DEFAULT_API_URL: Readonly<Record<Provider, string>> = {
  github: "https://api.github.com",
  gitlab: "https://gitlab.com/api/v4",
};

/** The variable the token is read from unless `token_env` names another. */
const DEFAULT_TOKEN_ENV: Readonly<Record<Provider, string>> = {
  github: "GITHUB_TOKEN",
  gitlab: "GITLAB_TOKEN",
};

/** The tracker adapter whose webhook receives the same host's events (lib/trackers/builtin.ts). */
const WEBHOOK_TRACKER: Readonly<Record<Provider, string>> = {
  github: "tracker_b",
  gitlab: "tracker_c",
};

/** With the host's webhook configured, polling is a safety net this many times slower. */
const WEBHOOK_SLOWER = 5;

/** A waiting landing's whole step runs again at least this often (ms; see `retryMs`). */
const SAFETY_RETRY_MS = 30_000;

/** Landing through pull requests, resolved. */
export interface LandingSettings {
  provider: Provider;
  /** `GitHub` or `GitLab`. */
  product: string;
  remote: string;
  apiUrl: string;
  repo: string;
  tokenEnv: string;
  /** The base branch pull requests target. */
  base: string;
  /** `refs/remotes/<remote>/<base>`: worktrees are cut from it and gates run against it. */
  trackingRef: string;
  method: "merge" | "squash" | "rebase";
  draft: boolean;
  labels: string[];
  deleteBranch: boolean;
  onCiFailure: "retry" | "fail";
  /** Re-runs of a failed required check on the same head before `onCiFailure` applies. */
  rerunFailedChecks: number;
  /**
   * Between looks at a pull request that just changed (five times longer when a webhook tells of
   * changes); the interval grows to {@link LandingSettings.pollMaxIntervalMs} while nothing does.
   */
  pollIntervalMs: number;
  /** The longest time between two looks at an unchanged pull request. */
  pollMaxIntervalMs: number;
  /**
   * How often a landing that waits is taken through its whole step again whatever the looks say
   * (a safety net: the looks, webhooks and the base's moves wake it sooner).
   */
  retryMs: number;
  /** The tracker webhook of the same host is enabled (`trackers.tracker_b` for GitHub …). */
  webhooks: boolean;
}

/** The landing settings of `config`, or undefined in merge mode. */
export function landingSettings(
  config: ServiceConfig,
  workspaceBranch: string,
): LandingSettings | undefined {
  const l = config.landing;
  if (l.mode !== "pull_request" || !l.provider || !l.repo) return undefined;
  const base = l.base ?? workspaceBranch;
  const webhooks = config.trackers[WEBHOOK_TRACKER[l.provider]]?.webhook?.enabled === true;
  const slower = webhooks ? WEBHOOK_SLOWER : 1;
  const interval = l.poll_interval_s * 1000 * slower;
  const max = Math.max(l.poll_max_interval_s, l.poll_interval_s) * 1000 * slower;
  return {
    provider: l.provider,
    product: l.provider === "github" ? "GitHub" : "GitLab",
    remote: l.remote,
    apiUrl: (l.api_url ?? DEFAULT_API_URL[l.provider]).replace(/\/+$/, ""),
    repo: l.repo,
    tokenEnv: l.token_env ?? DEFAULT_TOKEN_ENV[l.provider],
    base,
    trackingRef: trackingRef(l.remote, base),
    method: l.method,
    draft: l.draft,
    labels: l.labels,
    deleteBranch: l.delete_branch,
    onCiFailure: l.on_ci_failure,
    rerunFailedChecks: l.rerun_failed_checks,
    pollIntervalMs: interval,
    pollMaxIntervalMs: max,
    retryMs: Math.max(SAFETY_RETRY_MS * slower, max),
    webhooks,
  };
}
