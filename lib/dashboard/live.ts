/**
 * The page's subscription to `GET /events` (browser-safe): an EventSource that is replaced with
 * growing back-off when the server refuses it or goes away, and reports each (re)connection so
 * the page can refetch what it may have missed. It opens only once the document has loaded: a
 * stream that never ends, opened earlier, holds the load event in some browsers, and headless
 * screenshots (which wait for it) would never finish.
 */

/** Connection state shown to the operator. */
export type LiveState = "connecting" | "live" | "reconnecting";

/** An activity notice as sent on the stream. */
export interface ActivityNotice {
  kind: string;
  run_id?: string;
  [key: string]: unknown;
}

/** Options of {@link connectActivity}. */
export interface ConnectOptions {
  /** The bearer token, sent as `?access_token=` (EventSource cannot send headers). */
  token?: string;
  onActivity: (notice: ActivityNotice) => void;
  /**
   * Called on every `ready` frame, the first included: the page fetched before the stream
   * opened, so events may have been missed.
   */
  onReady: () => void;
  onState: (state: LiveState) => void;
  /** URL path of the stream (default `/events`). */
  path?: string;
}

/** Open the activity stream; returns the function that closes it for good. */
export function connectActivity(options: ConnectOptions): () => void {
  const url = (options.path ?? "/events") +
    (options.token ? `?access_token=${encodeURIComponent(options.token)}` : "");
  let source: EventSource | undefined;
  let retryTimer: ReturnType<typeof setTimeout> | undefined;
  let delay = 1000;
  let connectedBefore = false;
  let stopped = false;

  const open = () => {
    options.onState(connectedBefore ? "reconnecting" : "connecting");
    const es = new EventSource(url);
    source = es;
    es.addEventListener("ready", () => {
      delay = 1000;
      options.onState("live");
      options.onReady();
      connectedBefore = true;
    });
    es.addEventListener("activity", (event) => {
      try {
        options.onActivity(JSON.parse((event as MessageEvent).data));
      } catch {
        // a frame this page does not understand: ignore it
      }
    });
    es.onerror = () => {
      if (stopped) return;
      options.onState("reconnecting");
      connectedBefore = true;
      if (es.readyState === EventSource.CLOSED) {
        // the browser gave up (refused or not an event stream): retry ourselves, backing off
        es.close();
        retryTimer = setTimeout(open, delay);
        delay = Math.min(delay * 2, 15_000);
      }
    };
  };
  options.onState("connecting");
  if (document.readyState === "complete") open();
  else addEventListener("load", open, { once: true });
  return () => {
    stopped = true;
    removeEventListener("load", open);
    clearTimeout(retryTimer);
    source?.close();
  };
}
