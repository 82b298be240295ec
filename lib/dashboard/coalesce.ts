/**
 * Coalesced refresh (browser-safe): however often it is triggered, at most one run is in
 * flight and at most one more is queued behind it, so a burst of activity costs two fetches at
 * most and the last trigger is always followed by a fresh fetch.
 */

/** A trigger that runs `task` now, or once more after the run in flight when it is busy. */
export interface Coalesced {
  (): void;
  /** Resolves when no run is in flight or queued. */
  idle(): Promise<void>;
}

/** Wrap `task` so overlapping triggers coalesce. Errors are passed to `onError`. */
export function coalesce(
  task: () => Promise<void>,
  onError: (error: unknown) => void = () => {},
): Coalesced {
  let running: Promise<void> | undefined;
  let again = false;
  const run = (): Promise<void> =>
    task().catch(onError).finally(() => {
      if (again) {
        again = false;
        running = run();
      } else {
        running = undefined;
      }
    });
  const trigger = (() => {
    if (running) again = true;
    else running = run();
  }) as Coalesced;
  trigger.idle = async () => {
    while (running) await running;
  };
  return trigger;
}
