/**
 * The in-process activity hub behind `GET /events`: any subsystem (journal watcher, task
 * store, orchestrator) publishes a small activity notice, every open event stream hears it.
 * Notices say *that* something changed, never *what the board is*: clients refetch the
 * projection, so a lost or duplicated notice costs one refresh, never a wrong board.
 */

/** One activity notice: a snake_case kind and a few plain fields (e.g. `run_id`). */
export interface Activity {
  kind: string;
  detail: Record<string, string | number | boolean>;
}

/** Called synchronously for every published activity; must not throw. */
export type ActivityListener = (activity: Activity) => void;

const KIND = /^[a-z][a-z0-9_.]{0,63}$/;

/** A fan-out of activity notices to the listeners subscribed at publish time. */
export class ActivityHub {
  #listeners = new Set<ActivityListener>();

  /** Add `listener`; returns the function that removes it. */
  subscribe(listener: ActivityListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Number of current listeners. */
  get size(): number {
    return this.#listeners.size;
  }

  /** Deliver `kind` with `detail` to every listener; a throwing listener does not stop the rest. */
  publish(kind: string, detail: Activity["detail"] = {}): void {
    if (!KIND.test(kind)) {
      throw new RangeError(`activity kind ${JSON.stringify(kind)} must match ${KIND.source}`);
    }
    const activity: Activity = { kind, detail: { ...detail } };
    for (const listener of [...this.#listeners]) {
      try {
        listener(activity);
      } catch (e) {
        console.error(`activity listener failed on ${kind}:`, e);
      }
    }
  }
}

/** The process-wide hub that `GET /events` streams. */
export const activityHub: ActivityHub = new ActivityHub();

/** Publish activity on the process-wide hub (e.g. `publishActivity("task_status", {task_id})`). */
export function publishActivity(kind: string, detail: Activity["detail"] = {}): void {
  activityHub.publish(kind, detail);
}
