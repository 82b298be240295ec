/**
 * Pull-request landing (DESIGN.md §12), as the run loop wires it: the settings and host checked
 * before the run ({@link prepareLanding}), and the landing of the run's finished work
 * ({@link pullRequestLanding}).
 */
import { type LandingWork, PullRequestLanding } from "./pull_requests.ts";
import type { PreparedLanding } from "./setup.ts";

export { type LandingWork, PullRequestLanding } from "./pull_requests.ts";
export { type PreparedLanding, prepareLanding } from "./setup.ts";

/** What the run gives its pull-request landing besides the prepared settings and host. */
export interface LandingWiring {
  /** The workspace. */
  root: string;
  runId: string;
  journalPath: string;
  work: LandingWork;
  /** The review board's base URL when `server.public_url` is not set. */
  serverUrl: string;
  /** Told when something changed for `taskId` on the host (or its retry is due). */
  onChange: (taskId: string) => void;
  warn: (line: string) => void;
  now: () => number;
}

/** The run's pull-request landing, linking the board at `server.public_url` when it is set. */
export function pullRequestLanding(
  prepared: PreparedLanding,
  wiring: LandingWiring,
): PullRequestLanding {
  const { serverUrl, ...rest } = wiring;
  return new PullRequestLanding({
    ...rest,
    settings: prepared.settings,
    host: prepared.host,
    boardUrl: prepared.publicUrl ?? serverUrl,
  });
}
