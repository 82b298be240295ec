/**
 * Worker: walks and folds one segment of a journal (the later half of a large first read),
 * posting back the walker state and the fold state as plain data.
 */
/// <reference lib="deno.worker" />
import { walkSegment } from "../journal/incremental.ts";
import { BOARD_FOLD_SINK } from "./sink.ts";

self.onmessage = (event: MessageEvent<{ bytes: Uint8Array; startLine: number }>) => {
  const { walker, state } = walkSegment(BOARD_FOLD_SINK, event.data.bytes, event.data.startLine);
  self.postMessage({ walker: walker.toState(), state });
};
