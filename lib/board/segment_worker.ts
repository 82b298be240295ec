/**
 * Worker: walks and folds one segment of a large first read of a journal, posting back the
 * walker state and the fold state as plain data. It says `{ready: true}` once loaded, so a
 * server can have its warm workers loaded before it takes connections.
 */
/// <reference lib="deno.worker" />
import { walkSegment } from "../journal/incremental.ts";
import { BOARD_FOLD_SINK } from "./sink.ts";

self.onmessage = (event: MessageEvent<{ bytes: Uint8Array; startLine: number }>) => {
  const { walker, state } = walkSegment(BOARD_FOLD_SINK, event.data.bytes, event.data.startLine);
  self.postMessage({ walker: walker.toState(), state });
};
self.postMessage({ ready: true });
