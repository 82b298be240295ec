/**
 * Hands back to the system the heap a burst of work grew. V8 grows its young generation while
 * many objects survive (a fold of a large journal, the start-up warm-up) and keeps it, touched
 * and resident, for as long as the process lives: it shrinks it only in a collection made while
 * little is being allocated, and an idle server makes none. One full, memory-reducing
 * collection returns it (lib/board/warm_up.ts: ~17 MB of a server's resident memory).
 *
 * V8 offers that collection to scripts only as `gc`, which exists in contexts created while the
 * `--expose-gc` flag is set: the flag is set for the moment one context of its own (node:vm) is
 * created, and cleared again, so the function is never installed on this program's global
 * object nor on any context or worker created later.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

let collect: (() => void) | null | undefined;

/**
 * Run a full, memory-reducing garbage collection now (tens of milliseconds on a server's heap:
 * for moments when nothing waits, such as before a server takes connections). Returns false
 * where the runtime does not offer it.
 */
export function releaseHeap(): boolean {
  if (collect === undefined) {
    try {
      setFlagsFromString("--expose-gc");
      let gc: unknown;
      try {
        gc = runInNewContext("gc");
      } finally {
        setFlagsFromString("--no-expose-gc");
      }
      collect = typeof gc === "function" ? () => gc() : null;
    } catch {
      collect = null;
    }
  }
  collect?.();
  return collect !== null;
}
