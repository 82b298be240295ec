/**
 * The worker that folds the later half of a large first read (lib/journal/incremental.ts).
 * Starting a worker costs ~150 ms on this class of machine — as much as the half it would
 * fold — so a server holds one warm from start-up; elsewhere (a CLI command, or while the warm
 * one is busy) a one-shot worker is started. Every worker is ended after its answer. Where no worker can
 * start (a single-file bundle has no module to load), the segment is folded on this thread.
 */
import { walkSegment } from "../journal/incremental.ts";
import type { WalkerState } from "../journal/verify.ts";
import type { FoldState } from "./fold.ts";
import { BOARD_FOLD_SINK } from "./sink.ts";

type SegmentResult = { walker: WalkerState; state: FoldState };

let warm: { worker: Worker; holders: number; busy: boolean } | undefined;

function spawn(): Worker | undefined {
  try {
    return new Worker(new URL("./segment_worker.ts", import.meta.url), { type: "module" });
  } catch {
    return undefined;
  }
}

/** Keep a fold worker warm until the returned release is called (once per holder). */
export function holdFoldWorker(): () => void {
  if (!warm) {
    const worker = spawn();
    if (!worker) return () => {};
    warm = { worker, holders: 0, busy: false };
  }
  warm.holders++;
  let released = false;
  return () => {
    if (released || !warm) return;
    released = true;
    if (--warm.holders === 0) {
      warm.worker.terminate();
      warm = undefined;
    }
  };
}

/** Walk and fold `bytes` (complete lines from line `startLine`) off this thread when possible. */
export function foldSegmentInWorker(bytes: Uint8Array, startLine: number): Promise<SegmentResult> {
  const inThread = (): SegmentResult => {
    const { walker, state } = walkSegment(BOARD_FOLD_SINK, bytes, startLine);
    return { walker: walker.toState(), state };
  };
  const held = warm && !warm.busy ? warm : undefined;
  const worker = held?.worker ?? spawn();
  if (!worker) return Promise.resolve(inThread());
  if (held) held.busy = true;
  // A used worker is ended either way: its heap still holds the half it parsed. The warm one
  // is replaced by a fresh one, which starts up while the server is idle.
  const done = () => {
    worker.terminate();
    if (held && warm === held) {
      const fresh = spawn();
      if (fresh) warm = { worker: fresh, holders: held.holders, busy: false };
      else warm = undefined;
    }
  };
  return new Promise((resolve) => {
    worker.onmessage = (event) => {
      done();
      resolve(event.data);
    };
    worker.onerror = (event) => {
      event.preventDefault();
      done();
      resolve(inThread());
    };
    // Shared memory crosses without a copy; an ordinary buffer is cut down to the segment.
    const shared = bytes.buffer instanceof SharedArrayBuffer;
    worker.postMessage({ bytes: shared ? bytes : bytes.slice(), startLine });
  });
}
