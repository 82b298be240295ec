/**
 * Worker: walks and folds one segment of a large first read of a journal, posting back the
 * walker state and the fold state as plain data. It warms up first (lib/board/warm_up.ts), then
 * says `{ready: true}`: a server loads its warm workers before it takes connections, and a board
 * request then finds them at full speed.
 */
/// <reference lib="deno.worker" />
import { walkSegment } from "../journal/incremental.ts";
import { BOARD_FOLD_SINK } from "./sink.ts";
import { warmUpFold } from "./warm_up.ts";

self.onmessage = (event: MessageEvent<{ bytes: Uint8Array; startLine: number }>) => {
  const { walker, state } = walkSegment(BOARD_FOLD_SINK, event.data.bytes, event.data.startLine);
  self.postMessage({ walker: walker.toState(), state });
};

warmUpFold();
self.postMessage({ ready: true });
