/**
 * The `WebhookHandler` contract (spec §4.2 rules 3 and 6): how one tracker signs its deliveries,
 * which header names a delivery, and what a verified payload carries. It is generic over what a
 * handler yields, so this folder needs nothing from the trackers: theirs yield tickets
 * (lib/trackers/ticket.ts). Every handler, built-in or not, is registered through
 * `registerHandler` in `registry.ts`.
 */
import type { SignatureScheme } from "./signature.ts";

/** What a handler is told about the tracker it serves (from `trackers.<name>`). */
export interface HandlerContext {
  /** The adapter name the delivery arrived under. */
  tracker: string;
  /** `trackers.<name>.project`, when configured. */
  project?: string;
  /** `trackers.<name>.api_url` (or the tracker's default). */
  apiUrl?: string;
}

/** One tracker's webhook format; `T` is what a delivery yields (a ticket, for the trackers). */
export interface WebhookHandler<T = unknown> {
  /** How the signature header proves the body. */
  scheme: SignatureScheme;
  /** Header(s) carrying the signature or token, first present wins (spec name first). */
  signatureHeaders: string[];
  /** Header(s) naming the delivery; without one the dedup key is the body's SHA-256. */
  deliveryHeaders: string[];
  /**
   * What a verified, parsed payload carries (a tracker's tickets); `[]` for events that carry
   * nothing, such as a tracker's non-issue events (they are accepted and ignored). Must not throw
   * on odd payloads: return `[]` instead.
   */
  tickets(payload: unknown, headers: Headers, context: HandlerContext): T[];
  /**
   * A code host's event about a pull request (merge request), its checks or reviews: which
   * repository it concerns, so the pull-request landing looks again at once instead of at its
   * next poll (lib/landing). Undefined for other events.
   */
  hostEvent?(payload: unknown, headers: Headers): HostEvent | undefined;
}

/** The activity kind a code host's pull-request event is announced under (lib/landing listens). */
export const HOST_EVENT_ACTIVITY = "host_pull_request";

/** A code host's pull-request event, announced as {@link HOST_EVENT_ACTIVITY}. */
export interface HostEvent {
  [key: string]: string | number;
  provider: "github" | "gitlab";
  /** `owner/name` or the GitLab project path. */
  repo: string;
  /** GitLab's numeric project id (a project may be configured by it). */
  project_id: number;
}

/** The first of `names` present in `headers`. */
export function firstHeader(headers: Headers, names: readonly string[]): string | null {
  for (const name of names) {
    const value = headers.get(name);
    if (value !== null) return value;
  }
  return null;
}
