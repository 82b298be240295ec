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

/**
 * A code host's pull-request event, announced as {@link HOST_EVENT_ACTIVITY}: its repository, and
 * which pull requests it concerns (space-separated lists, `""` when the event names none: a check
 * suite or a commit status names only its head SHA, a pipeline its SHA and ref).
 */
export interface HostEvent {
  [key: string]: string | number;
  provider: "github" | "gitlab";
  /** `owner/name` or the GitLab project path. */
  repo: string;
  /** GitLab's numeric project id (a project may be configured by it). */
  project_id: number;
  /** Pull request numbers (GitLab: merge request iids). */
  numbers: string;
  /** Head commit SHAs. */
  shas: string;
  /** Head branch names. */
  branches: string;
  /** The base branch a pull request was just merged into, or `""`. */
  merged_into: string;
}

/** What an event names, before it is checked and joined into a {@link HostEvent}'s lists. */
export interface HostEventKeys {
  numbers?: unknown[];
  shas?: unknown[];
  branches?: unknown[];
  mergedInto?: unknown;
}

/** At most this many of each key are kept (a check suite may list many pull requests). */
const MAX_KEYS = 20;

/** A git branch name as a host sends it (no spaces or control characters; bounded). */
const BRANCH = /^[^\s\p{Cc}]{1,255}$/u;

/** The lists of a {@link HostEvent}: only well-formed numbers, SHAs and branch names are kept. */
export function hostEventKeys(
  keys: HostEventKeys,
): Pick<HostEvent, "numbers" | "shas" | "branches" | "merged_into"> {
  const keep = (values: unknown[] | undefined, ok: (v: string) => boolean) =>
    [...new Set(values ?? [])].filter((v): v is string => typeof v === "string" && ok(v))
      .slice(0, MAX_KEYS).join(" ");
  const branch = typeof keys.mergedInto === "string" && BRANCH.test(keys.mergedInto)
    ? keys.mergedInto
    : "";
  return {
    numbers: keep(
      keys.numbers?.map((n) => Number.isSafeInteger(n) ? String(n) : n),
      (v) => /^[1-9][0-9]{0,9}$/.test(v),
    ),
    shas: keep(keys.shas, (v) => /^[0-9a-f]{7,64}$/.test(v)),
    branches: keep(keys.branches, (v) => BRANCH.test(v)),
    merged_into: branch,
  };
}

/** The first of `names` present in `headers`. */
export function firstHeader(headers: Headers, names: readonly string[]): string | null {
  for (const name of names) {
    const value = headers.get(name);
    if (value !== null) return value;
  }
  return null;
}
