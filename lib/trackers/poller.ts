/**
 * Polling, the default ingestion path (spec §1, §4.2 rule 7): each tracker with a `project` is
 * polled on its interval through its own API, and the tickets go to the same sink as the
 * webhook route. The first poll after boot is {@link replayRecentViaPoll}: tickets not newer
 * than the polls' cursor (`last_polled_ts`, else `last_processed_ts`) are dropped. Failures back
 * off (429, 5xx, network) and honour Retry-After and exhausted rate-limit windows; a 4xx stops
 * nothing but says what to fix.
 * A webhook-only tracker (`polling: false`) with API access runs that startup poll alone
 * ({@link TrackerPoller.startBootReplay}), so deliveries sent while the service was down are not
 * lost either.
 */
import { type ApiAccess, MAX_POLL_PAGES, type PollResult, type TrackerAdapter } from "./adapter.ts";
import { ConditionalCache } from "../http/conditional_cache.ts";
import { HttpApiError } from "../http/api_error.ts";
import { nextPollDelay } from "../http/backoff.ts";
import { apiAccess, apiProblem, type TrackerSettings } from "./settings.ts";
import type { OutcomeRecord, TrackerRuntimeStore } from "./state.ts";
import type { Ticket, TicketSink } from "./ticket.ts";

/**
 * Tickets of a boot replay worth feeding (pure): those newer than `lastProcessedTs`; a ticket
 * without `raw.updated_at` cannot be compared, so it is kept when open (spec §4.2 rule 7).
 */
export function replayFilter(tickets: Ticket[], lastProcessedTs: string | undefined): Ticket[] {
  if (!lastProcessedTs) return tickets;
  const cursor = Date.parse(lastProcessedTs);
  return tickets.filter((t) => {
    const at = t.raw.updated_at ? Date.parse(t.raw.updated_at) : NaN;
    return Number.isNaN(at) ? t.state === "open" : at > cursor;
  });
}

/** Dependencies of a poller (tests inject fetch and the clock). */
export interface PollerDeps {
  fetch: typeof fetch;
  now: () => number;
  env: (name: string) => string | undefined;
  sink: TicketSink;
  runtime: TrackerRuntimeStore;
  warn: (line: string) => void;
}

/** Polls one tracker until stopped. */
export class TrackerPoller {
  readonly #s: TrackerSettings;
  readonly #adapter: TrackerAdapter;
  readonly #d: PollerDeps;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #running: Promise<void> | undefined;
  #failures = 0;
  #stopped = false;
  /** Webhook-only: stop after the first successful poll. */
  #bootOnly = false;
  #caughtUp = false;
  /** The last answers of this tracker's poll URLs: an unchanged page is asked for by its ETag. */
  readonly #cache = new ConditionalCache(2 * MAX_POLL_PAGES);

  constructor(settings: TrackerSettings, adapter: TrackerAdapter, deps: PollerDeps) {
    this.#s = settings;
    this.#adapter = adapter;
    this.#d = deps;
  }

  /** Run the boot replay now, then poll on the interval. */
  start(): void {
    this.#schedule(0);
  }

  /**
   * Webhook-only mode: the startup poll of spec §4.2 rule 7 and no interval polling; a failed
   * replay is retried with back-off until one succeeds. On the first start there is no cursor
   * and nothing was missed: the cursor starts now, so later starts replay what changed since.
   */
  startBootReplay(): void {
    this.#bootOnly = true;
    if (this.#d.runtime.get(this.#s.name).last_processed_ts === undefined) {
      const now = new Date(this.#d.now()).toISOString();
      this.#d.runtime.update(this.#s.name, { last_processed_ts: now, last_polled_ts: now });
      this.#record({
        outcome: "ok",
        detail: "webhook only: the replay cursor starts now; each later start replays the " +
          "tickets that changed while the service was down",
      });
      return;
    }
    this.#schedule(0);
  }

  /** Stop polling; waits for a poll in flight. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    await this.#running;
  }

  /**
   * One poll: tickets updated after the newest one the last poll fed (`last_polled_ts`, else
   * `last_processed_ts`; all open tickets when there is neither) fed to the sink. Records the
   * outcome; returns when to poll next (ms).
   */
  async pollOnce(): Promise<number> {
    const name = this.#s.name;
    const intervalMs = this.#s.pollIntervalS * 1000;
    const problem = apiProblem(this.#s, this.#d.env);
    if (problem) {
      this.#record({ outcome: "not_polling", detail: problem });
      return intervalMs;
    }
    // Not `last_processed_ts` alone: a delivery about a later change moves that past a change
    // whose delivery was lost, and polling is the safety net for exactly that.
    const known = this.#d.runtime.get(name);
    const since = known.last_polled_ts ?? known.last_processed_ts;
    try {
      const result = await replayRecentViaPoll(
        this.#adapter,
        { ...apiAccess(this.#s, this.#d.env, this.#d), cache: this.#cache },
        since,
      );
      const outcomes = await this.#d.sink(result.tickets);
      const newest = result.tickets.map((t) => t.raw.updated_at ?? "")
        .reduce((a, b) => (b > a ? b : a), since ?? "");
      if (newest) this.#d.runtime.update(name, { last_polled_ts: newest });
      this.#failures = 0;
      this.#caughtUp = !result.truncated; // a replay cut by the page cap goes on
      const created = outcomes.filter((o) => o.action === "created").length;
      this.#record({
        outcome: "ok",
        detail: (this.#bootOnly ? "startup replay (webhook only): " : "") +
          `${result.tickets.length} ticket(s), ${created} new task(s)` +
          (result.truncated ? "; page cap reached, continuing next poll" : ""),
      });
      return nextPollDelay({ intervalMs, nowMs: this.#d.now(), failures: 0, rate: result.rate });
    } catch (e) {
      const error = e instanceof HttpApiError ? e : new HttpApiError(String(e), { status: 0 });
      this.#failures++;
      const hint = error.retryable ? "will retry with back-off" : "fix the configuration or token";
      this.#record({ outcome: "failed", detail: `${error.message} (${hint})` });
      this.#d.warn(`tracker ${name}: poll failed: ${error.message} (${hint})`);
      return nextPollDelay({
        intervalMs,
        nowMs: this.#d.now(),
        failures: error.retryable ? this.#failures : 1,
        rate: error.rate,
      });
    }
  }

  #record(r: Omit<OutcomeRecord, "at">): void {
    const at = new Date(this.#d.now()).toISOString();
    this.#d.runtime.update(this.#s.name, { last_poll: { at, ...r } });
  }

  #schedule(ms: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#running = this.pollOnce().then((next) => {
        this.#running = undefined;
        if (!(this.#bootOnly && this.#caughtUp)) this.#schedule(next);
      });
    }, ms);
  }
}

/**
 * Spec §4.2 rule 7: one poll of `adapter` for tickets updated since `lastProcessedTs`, minus
 * those not newer than it (every open ticket when there is no cursor).
 */
async function replayRecentViaPoll(
  adapter: TrackerAdapter,
  access: ApiAccess,
  lastProcessedTs: string | undefined,
): Promise<PollResult> {
  const result = await adapter.poll(access, lastProcessedTs);
  return { ...result, tickets: replayFilter(result.tickets, lastProcessedTs) };
}
