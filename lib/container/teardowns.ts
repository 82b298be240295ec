/**
 * Runtime commands still tearing down a container that is already dead (lib/container/
 * death_watch.ts): its task went on without waiting for them, and the end of a run waits for
 * them here, so no container of the run is listed after it. One per container that ran, so
 * as many at once as the run had agents; a service killed meanwhile leaves them running to their
 * end (they remove their container), and the next run's sweep removes what one left.
 */

const pending = new Set<Promise<unknown>>();

/** Keep `status` (a runtime command's exit) until it settles. */
export function trackTeardown(status: Promise<unknown>): void {
  const p = status.then(() => {}, () => {}).finally(() => pending.delete(p));
  pending.add(p);
}

/**
 * Resolves once every tracked runtime command has exited, or after `limitMs` (a runtime command
 * that hangs does not hold the run's end; the next run's sweep removes its container).
 */
export async function teardownsDone(limitMs = 60_000): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const limit = new Promise<void>((r) => timer = setTimeout(r, limitMs));
  const all = (async () => {
    while (pending.size > 0) await Promise.all([...pending]);
  })();
  try {
    await Promise.race([all, limit]);
  } finally {
    clearTimeout(timer);
  }
}
