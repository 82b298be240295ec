/**
 * GET /events — a server-sent event stream that signals activity (spec §6.3); the board page
 * refetches its projection when it hears one. Frames:
 *
 * - `event: ready` once on connect (with `retry: 1000`): a client that reconnects refetches.
 * - `event: activity`, `data: {"kind": "journal_appended", "run_id": "…"}` (or any kind another
 *   subsystem publishes with `publishActivity`). Notices queued while the client reads are
 *   coalesced, so a burst of appends costs one frame per run.
 * - `: heartbeat` comment every 15 s so proxies keep the connection open.
 *
 * Behind the same bearer auth as the JSON routes; EventSource cannot send headers, so this
 * route alone also accepts the token as `?access_token=`.
 */
import { type SSEStreamingApi, streamSSE } from "hono/streaming";
import type { Ctx } from "../lib/http/context.ts";
import { HttpError } from "../lib/http/errors.ts";
import { type Activity, type ActivityHub, activityHub } from "../lib/events/hub.ts";
import {
  type JournalActivityOptions,
  retainJournalActivity,
} from "../lib/events/journal_activity.ts";
import { routePolicy } from "../lib/http/route_policy.ts";

/** Who may call it: readers; also with `?access_token=` (EventSource sends no headers). */
export const policy = routePolicy({ GET: "reader" }, { queryToken: true });

/** Options of {@link eventsHandler}. */
export interface EventsOptions {
  hub?: ActivityHub;
  /** Interval of the keep-alive comment (default 15 000 ms). */
  heartbeatMs?: number;
  /** Tuning of the journal watch (debounce, poll interval). */
  watch?: Omit<JournalActivityOptions, "hub">;
  /** Called once a stream has ended and released its journal watch (tests, metrics). */
  onStreamEnd?: () => void;
  /** Most streams open at once (default `server.max_event_streams`, else 64); 503 beyond. */
  maxStreams?: number;
}

function frameOf(activity: Activity): string {
  return JSON.stringify({ ...activity.detail, kind: activity.kind });
}

/** The handler of `GET /events` over `options.hub` (default the process-wide hub). */
export function eventsHandler(options: EventsOptions = {}): (c: Ctx) => Response {
  const hub = options.hub ?? activityHub;
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  // Streams open per server (one context per server, several servers in a test process).
  const openBy = new WeakMap<object, { open: number }>();
  return function eventsStream(c: Ctx): Response {
    const app = c.get("app");
    const max = options.maxStreams ?? app.maxEventStreams ?? 64;
    let count = openBy.get(app);
    if (!count) openBy.set(app, count = { open: 0 });
    const counter = count;
    if (counter.open >= max) {
      throw new HttpError(
        503,
        "too_many_streams",
        `${counter.open} event streams are open, the most this server keeps (server.max_event_streams ` +
          `is ${max}); retry later or close other board tabs`,
        { "Retry-After": "5" },
      );
    }
    counter.open++;
    const run = async (stream: SSEStreamingApi) => {
      const queued = new Set<string>();
      let wake: (() => void) | undefined;
      let done = false;
      const finish = () => {
        done = true;
        wake?.();
      };
      const release = retainJournalActivity(app.paths.runs, { ...options.watch, hub });
      const unsubscribe = hub.subscribe((activity) => {
        queued.add(frameOf(activity));
        wake?.();
      });
      stream.onAbort(finish);
      app.closing?.addEventListener("abort", finish);
      if (app.closing?.aborted) finish();
      let id = 0;
      try {
        await stream.writeSSE({ event: "ready", data: "{}", retry: 1000 });
        while (!done) {
          if (queued.size === 0) {
            let timer: ReturnType<typeof setTimeout> | undefined;
            await new Promise<void>((resolve) => {
              wake = resolve;
              timer = setTimeout(resolve, heartbeatMs);
            });
            clearTimeout(timer);
            wake = undefined;
            if (done) break;
            if (queued.size === 0) {
              await stream.write(": heartbeat\n\n");
              continue;
            }
          }
          const frames = [...queued];
          queued.clear();
          for (const data of frames) {
            await stream.writeSSE({ event: "activity", id: String(++id), data });
          }
        }
      } finally {
        unsubscribe();
        app.closing?.removeEventListener("abort", finish);
        await release();
        options.onStreamEnd?.();
      }
    };
    return streamSSE(c, async (stream) => {
      try {
        await run(stream);
      } finally {
        counter.open--;
      }
    });
  };
}

/** `GET /events` over the process-wide activity hub (the route the manifest mounts). */
export const GET = eventsHandler();
