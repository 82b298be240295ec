/**
 * The end of a container's output when its runtime's command outlives it. With podman's
 * `passthrough` log driver the container writes straight into the service's pipes, so once the
 * container is dead (lib/container/death_watch.ts) every byte it wrote is already in them; but
 * `podman run` holds the same pipes open while it tears the container down, so their end comes
 * only with its exit. The service therefore writes a marker of its own — random, written only
 * after the container is dead, so nothing inside can have known it — into each pipe (through
 * `/proc/<pid>/fd/<n>` of the runtime's command), and reads each stream up to its marker.
 */
import { PipeReader } from "../process/pipe_reader.ts";

/** A fresh marker (random; never shown to the container). */
export function newEndMarker(): Uint8Array {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  const hex = [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
  return new TextEncoder().encode(`\u0000service-output-end-${hex}\u0000`);
}

/** Finds a marker in a stream of chunks, across chunk boundaries (pure). */
export class MarkerScanner {
  readonly #marker: Uint8Array;
  /** Bytes held back: they may be the start of the marker. */
  #held = new Uint8Array(0);

  constructor(marker: Uint8Array) {
    this.#marker = marker;
  }

  /**
   * The bytes of `chunk` that are output for sure, and whether the marker ended the stream
   * (then `bytes` are all the output left before it).
   */
  push(chunk: Uint8Array): { bytes: Uint8Array; ended: boolean } {
    const all = new Uint8Array(this.#held.length + chunk.length);
    all.set(this.#held);
    all.set(chunk, this.#held.length);
    const at = indexOf(all, this.#marker);
    if (at >= 0) {
      this.#held = new Uint8Array(0);
      return { bytes: all.subarray(0, at), ended: true };
    }
    // Keep the longest tail that is a start of the marker.
    let keep = Math.min(this.#marker.length - 1, all.length);
    while (keep > 0 && !startsWith(this.#marker, all.subarray(all.length - keep))) keep--;
    this.#held = all.slice(all.length - keep);
    return { bytes: all.subarray(0, all.length - keep), ended: false };
  }

  /** What was held back, once the stream has ended without the marker. */
  flush(): Uint8Array {
    const held = this.#held;
    this.#held = new Uint8Array(0);
    return held;
  }
}

function indexOf(haystack: Uint8Array, needle: Uint8Array): number {
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

function startsWith(whole: Uint8Array, part: Uint8Array): boolean {
  for (let j = 0; j < part.length; j++) if (whole[j] !== part[j]) return false;
  return true;
}

/**
 * `stream` up to `marker` (a byte stream, for BYOB readers). After the marker the rest of
 * `stream` is still read, and dropped, so its writer never meets a closed pipe; cancelling the
 * returned stream cancels `stream`.
 */
export function untilMarker(
  stream: ReadableStream<Uint8Array>,
  marker: Uint8Array,
): ReadableStream<Uint8Array> {
  const reader = new PipeReader(stream); // no 64 KiB buffer left behind per read
  const scanner = new MarkerScanner(marker);
  const drain = async () => {
    try {
      while (await reader.read()) { /* dropped */ }
    } catch { /* cancelled */ }
  };
  return new ReadableStream({
    type: "bytes",
    async pull(controller: ReadableByteStreamController) {
      for (;;) {
        const value = await reader.read();
        if (!value) {
          const rest = scanner.flush();
          if (rest.length > 0) controller.enqueue(rest);
          controller.close();
          controller.byobRequest?.respond(0);
          return;
        }
        const { bytes, ended } = scanner.push(value);
        if (bytes.length > 0) controller.enqueue(bytes); // a fresh array each time
        if (ended) {
          controller.close();
          controller.byobRequest?.respond(0);
          drain();
          return;
        }
        if (bytes.length > 0) return;
      }
    },
    cancel() {
      return reader.cancel();
    },
  });
}

/**
 * Write `marker` into the pipes the host process `pid` has as its stdout and stderr; a process
 * already gone is skipped (its pipes end by themselves).
 */
export async function writeEndMarkers(pid: number, marker: Uint8Array): Promise<void> {
  for (const fd of [1, 2]) {
    try {
      const pipe = await Deno.open(`/proc/${pid}/fd/${fd}`, { write: true });
      try {
        let written = 0;
        while (written < marker.length) written += await pipe.write(marker.subarray(written));
      } finally {
        pipe.close();
      }
    } catch { /* gone: the stream ends with it */ }
  }
}
