/**
 * Whether a run takes remote workers at all (docs/workers.md "Tokens"): only when the user
 * configured a token of scope `worker` in `auth.tokens`. Without one, `service worker`
 * processes that happen to reach the server — another workspace's, polling the same loopback
 * port after their own run ended — are refused before they can register, claim, heartbeat or
 * report, so a solo run never hands its tasks to machines it never meant to use.
 */
import { DomainError } from "../errors.ts";
import type { TokenSpec } from "../auth/tokens.ts";

/** True when `specs` (the token specs in force, or `auth.tokens`) hold a worker token (pure). */
export function workersConfigured(specs: readonly TokenSpec[]): boolean {
  return specs.some((spec) => spec.scope === "worker");
}

/** The refusal a worker gets from a server whose run takes no remote workers. */
export const WORKERS_NOT_CONFIGURED =
  "this server takes no remote workers: its service.yaml configures no worker token " +
  "(auth.tokens with scope: worker); a worker of another workspace may be polling this port";

/** What {@link admitWorker} needs of the server. */
export interface WorkerAdmissionServer {
  /** The token specs in force. */
  tokenSpecs: () => TokenSpec[];
}

/**
 * Admit a worker's registration or claim: 403 `workers_not_configured` unless a worker token is
 * configured (the roster then binds its name to its principal: lib/workers/roster.ts). A
 * session's heartbeat and report need the capability only a claim hands out.
 */
export function admitWorker(server: WorkerAdmissionServer): void {
  if (!workersConfigured(server.tokenSpecs())) {
    throw new DomainError("forbidden", "workers_not_configured", WORKERS_NOT_CONFIGURED);
  }
}
