/**
 * The workers that fold the segments of a large first read (lib/journal/incremental.ts).
 * Starting a worker costs ~150 ms on this class of machine — as much as the segment it would
 * fold — so a server holds one warm per core from start-up; elsewhere (a CLI command, or while
 * the warm ones are busy) a one-shot worker is started. Every worker is ended after its answer,
 * because its heap still holds what it parsed, and a warm one is replaced by a fresh one that
 * starts up while the server is idle. Where no worker can start (a single-file bundle has no
 * module to load), the segment is folded on this thread.
 */
import { walkSegment } from "../journal/incremental.ts";
import type { WalkerState } from "../journal/verify.ts";
import type { FoldState } from "./fold.ts";
import { BOARD_FOLD_SINK } from "./sink.ts";
import { warmUpFold } from "./warm_up.ts";

type SegmentResult = { walker: WalkerState; state: FoldState };

/** Segments of a large first read: one per core, the first folded by the requesting thread. */
export const FOLD_SEGMENTS = Math.max(2, Math.min(navigator.hardwareConcurrency || 2, 8));
const WARM_WORKERS = FOLD_SEGMENTS - 1;

let holders = 0;
const idle: Worker[] = [];
/** Resolves when a worker has loaded its module (true) or failed to (false). */
const loaded = new WeakMap<Worker, Promise<boolean>>();

const WORKER_MODULE = new URL("./segment_worker.ts", import.meta.url);
let unavailable = false;

// A bundle carries no worker module beside it; an error while a worker idles must not end the
// process either, so an idle worker that fails is dropped and no more are started.
function spawn(): Worker | undefined {
  if (unavailable) return undefined;
  try {
    if (WORKER_MODULE.protocol === "file:") Deno.statSync(WORKER_MODULE);
    const worker = new Worker(WORKER_MODULE, { type: "module" });
    loaded.set(
      worker,
      new Promise((resolve) => {
        worker.onmessage = (event) => resolve(event.data?.ready === true);
        worker.onerror = (event) => {
          event.preventDefault();
          unavailable = true;
          const at = idle.indexOf(worker);
          if (at !== -1) idle.splice(at, 1);
          worker.terminate();
          resolve(false);
        };
      }),
    );
    return worker;
  } catch {
    unavailable = true;
    return undefined;
  }
}

// The replacement loads and warms up (~0.2 s of CPU) a little later, not while the request that
// used the worker is still being answered and the next ones arrive.
const REFILL_DELAY_MS = 3000;
let refillTimer: number | undefined;

function refillLater(): void {
  if (refillTimer !== undefined || holders === 0) return;
  const timer = setTimeout(() => {
    refillTimer = undefined;
    refill();
  }, REFILL_DELAY_MS) as unknown as number;
  Deno.unrefTimer(timer);
  refillTimer = timer;
}

function refill(): void {
  while (holders > 0 && idle.length < WARM_WORKERS) {
    const worker = spawn();
    if (!worker) return;
    idle.push(worker);
  }
}

/**
 * Keep fold workers warm until the returned release is called (once per holder). Resolves once
 * they have loaded (at most `waitMs`), so a server can take connections only after that: a
 * worker still loading its module when the descriptors run out would fail noisily.
 */
export async function holdFoldWorkers(waitMs = 5000): Promise<() => void> {
  holders++;
  refill();
  if (holders === 1) warmUpFold(); // this thread folds the first segment: warm it too
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    Promise.all(idle.map((w) => loaded.get(w))),
    new Promise((resolve) => timer = setTimeout(resolve, waitMs)),
  ]);
  clearTimeout(timer);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    if (--holders === 0) { for (const worker of idle.splice(0)) worker.terminate(); }
  };
}

/** Walk and fold `bytes` (complete lines from line `startLine`) off this thread when possible. */
export function foldSegmentInWorker(bytes: Uint8Array, startLine: number): Promise<SegmentResult> {
  const inThread = (): SegmentResult => {
    const { walker, state } = walkSegment(BOARD_FOLD_SINK, bytes, startLine);
    return { walker: walker.toState(), state };
  };
  const worker = idle.pop() ?? spawn();
  if (!worker) return Promise.resolve(inThread());
  const done = () => {
    worker.terminate();
    refillLater();
  };
  return new Promise((resolve) => {
    worker.onmessage = (event) => {
      if (event.data?.ready) return; // a one-shot worker announcing itself first
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
