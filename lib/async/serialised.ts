/** Per-key serialisation of async work within one process. */

const queues = new Map<string, Promise<unknown>>();

/**
 * Run `work` after every earlier call with the same `key` has settled (a failure does not stop
 * the queue). Bursts wait on a promise chain, not on parked threads or file locks.
 */
export function serialised<T>(key: string, work: () => Promise<T>): Promise<T> {
  const previous = queues.get(key) ?? Promise.resolve();
  const run = previous.then(work, work);
  const tail = run.then(() => {}, () => {});
  queues.set(key, tail);
  tail.then(() => {
    if (queues.get(key) === tail) queues.delete(key);
  });
  return run;
}
