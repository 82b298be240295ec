/**
 * A built-in tracker: its REST/GraphQL client for polling and write-back, its project scope and
 * its webhook handler. Each lives in one folder here (`jira/` for tracker_a, `github/` for
 * tracker_b, `gitlab/` for tracker_c, `linear/` for tracker_d, `plane/` for tracker_e):
 * `adapter.ts` implements this interface and `webhook.ts` reads the tracker's webhooks.
 */
import type { WebhookHandler } from "../webhooks/handler.ts";
import { createHttpClient, type HttpClient } from "../http/client.ts";
import type { ConditionalCache } from "../http/conditional_cache.ts";
import type { RateLimit } from "../http/rate_limit.ts";
import type { Ticket, TicketIdentity, TicketRef } from "./ticket.ts";
import type { MoveResult, TicketMove } from "./move.ts";

/** Where and as whom a tracker's API is called. */
export interface ApiAccess {
  fetch: typeof fetch;
  now: () => number;
  /** Time limit of one request (default 20 s). */
  timeoutMs?: number;
  /** The tracker's API base URL (`trackers.<name>.api_url` or the default). */
  apiUrl: string;
  /** What to poll: `trackers.<name>.project`. */
  project: string;
  /** The token from `token_env` ("" when unset: only public GitHub/GitLab projects work). */
  token: string;
  /** Jira Cloud's account e-mail from `email_env` (Basic auth); unset means a bearer token. */
  email?: string;
  /** Pages fetched per poll at most (default 10). */
  maxPages?: number;
  /**
   * The answers of earlier polls (the poller keeps one per tracker): an unchanged list is asked
   * for by its `ETag` and answers 304, which GitHub does not charge to the rate limit.
   */
  cache?: ConditionalCache;
}

/** The HTTP client (lib/http/client.ts) that calls `product`'s API with `access`. */
export function apiClient(access: ApiAccess, product: string): HttpClient {
  return createHttpClient({
    service: product,
    fetch: access.fetch,
    now: access.now,
    ...(access.timeoutMs ? { timeoutMs: access.timeoutMs } : {}),
    ...(access.cache ? { cache: access.cache } : {}),
  });
}

/** One poll's tickets. */
export interface PollResult {
  tickets: Ticket[];
  /** Rate-limit facts of the last response. */
  rate: RateLimit;
  /** True when the page cap stopped the walk (the next poll continues from the newest ticket). */
  truncated: boolean;
}

/** A built-in tracker adapter. */
export interface TrackerAdapter {
  name: string;
  /** The product it speaks to, for messages and docs. */
  product: string;
  /** Default `api_url` (none for self-hosted-only products like Jira). */
  defaultApiUrl?: string;
  /** What `project` means here (shown in errors). */
  projectHint: string;
  /** Whether polling works without a token (public projects). */
  tokenOptional: boolean;
  /** Its webhook handler (`<tracker>/webhook.ts`), registered with the receiver by builtin.ts. */
  webhook: WebhookHandler<Ticket>;
  /**
   * Tickets updated after `since` (ISO 8601), or every open ticket when `since` is undefined,
   * oldest update first.
   */
  poll(access: ApiAccess, since: string | undefined): Promise<PollResult>;
  /**
   * The project a ticket belongs to, named as `trackers.<name>.project` names it (the repository,
   * the project key, the team key, the project id); "" when its ref and ids do not say.
   */
  projectOf(ticket: TicketIdentity): string;
  /** Whether `ticket` belongs to the configured `project` (pure; see lib/trackers/scope.ts). */
  inProject(project: string, ticket: TicketIdentity): boolean;
  /**
   * Post `text` (Markdown) as a comment on the ticket identified by `ids`, in `access.project`
   * (the caller checked the ticket belongs to it).
   */
  comment(access: ApiAccess, ids: TicketRef, text: string): Promise<void>;
  /**
   * Move the ticket identified by `ids`, in `access.project`, to the workflow state `move.to`
   * (lib/trackers/move.ts: matched case-insensitively, never moved twice, a done ticket never
   * moved back but by a landing). An unknown state throws an `UnknownStateError`.
   */
  moveTicket(access: ApiAccess, ids: TicketRef, move: TicketMove): Promise<MoveResult>;
}

/** Two project names are the same (the trackers' names are case-insensitive); "" never matches. */
export function sameProject(a: string, b: string): boolean {
  return a !== "" && a.toLowerCase() === b.toLowerCase();
}

/** The project key of a `KEY-123` reference (Jira issue keys, Linear identifiers), or "". */
export function keyPrefix(ref: string): string {
  return /^([A-Za-z][A-Za-z0-9_]*)-\d+$/.exec(ref)?.[1] ?? "";
}

/** Default page cap of a poll. */
export const MAX_POLL_PAGES = 10;

/** Sort tickets oldest update first (tickets without `updated_at` first). */
export function byUpdate(tickets: Ticket[]): Ticket[] {
  return tickets.sort((a, b) => (a.raw.updated_at ?? "").localeCompare(b.raw.updated_at ?? ""));
}
