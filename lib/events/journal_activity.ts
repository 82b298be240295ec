/**
 * Journal appends as hub activity: one shared {@link watchRunJournals} per runs directory,
 * running only while at least one event stream is open.
 */
import { type ActivityHub, activityHub } from "./hub.ts";
import { type JournalWatch, type JournalWatchOptions, watchRunJournals } from "./journal_watch.ts";

/** The activity kind published when a run's journal grows or changes. */
const JOURNAL_ACTIVITY = "journal_appended";

interface Shared {
  users: number;
  watch: JournalWatch;
}

// One watch per hub and runs directory, so two apps with their own hubs never cross-publish.
const watches = new WeakMap<ActivityHub, Map<string, Shared>>();

/** Options of {@link retainJournalActivity}. */
export interface JournalActivityOptions extends JournalWatchOptions {
  hub?: ActivityHub;
}

/**
 * Make sure journal changes under `runsDir` are published on the hub; returns the release
 * function (the watch stops when its last user releases it).
 */
export function retainJournalActivity(
  runsDir: string,
  options: JournalActivityOptions = {},
): () => Promise<void> {
  const hub = options.hub ?? activityHub;
  let shared = watches.get(hub);
  if (!shared) watches.set(hub, shared = new Map());
  let entry = shared.get(runsDir);
  if (!entry) {
    const watch = watchRunJournals(
      runsDir,
      (runId) => hub.publish(JOURNAL_ACTIVITY, { run_id: runId }),
      options,
    );
    entry = { users: 0, watch };
    shared.set(runsDir, entry);
  }
  entry.users++;
  let released = false;
  const mine = entry;
  return async () => {
    if (released) return;
    released = true;
    if (--mine.users > 0) return;
    if (shared.get(runsDir) === mine) shared.delete(runsDir);
    await mine.watch.close();
  };
}
