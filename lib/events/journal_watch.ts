/**
 * Notice journal appends in any run: `Deno.watchFs` on `.sdd/runs/` (debounced), plus a cheap
 * periodic stat of every `journal.jsonl` as a fallback for file systems that drop or never send
 * notifications. Each change is reported once per run per debounce window, and only when the
 * journal's size or mtime actually moved, so the watcher and the poll never double-report.
 */
import { join, relative, sep } from "node:path";
import { isValidId } from "../ids.ts";

/** Options of {@link watchRunJournals}. */
export interface JournalWatchOptions {
  /** Quiet time before reporting a burst of changes (default 50 ms). */
  debounceMs?: number;
  /** Interval of the stat fallback (default 1000 ms). */
  pollMs?: number;
}

/** A running watch; `close()` resolves once every file handle and timer is released. */
export interface JournalWatch {
  close(): Promise<void>;
}

const JOURNAL = "journal.jsonl";

/** The run id of a path `<runsDir>/<run>/journal.jsonl`, else undefined. */
export function runIdOfJournalPath(runsDir: string, path: string): string | undefined {
  const parts = relative(runsDir, path).split(sep);
  if (parts.length !== 2 || parts[1] !== JOURNAL || !isValidId(parts[0])) return undefined;
  return parts[0];
}

async function signatureOf(path: string): Promise<string | undefined> {
  try {
    const info = await Deno.stat(path);
    return `${info.size}:${info.mtime?.getTime() ?? 0}`;
  } catch {
    return undefined;
  }
}

/** Call `onChange(runId)` after the journal of a run under `runsDir` changes. */
export function watchRunJournals(
  runsDir: string,
  onChange: (runId: string) => void,
  options: JournalWatchOptions = {},
): JournalWatch {
  const debounceMs = options.debounceMs ?? 50;
  const signatures = new Map<string, string | undefined>();
  const pending = new Set<string>();
  const inflight = new Set<Promise<unknown>>();
  let closed = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let watcher: Deno.FsWatcher | undefined;
  let scanning = false;

  const track = (p: Promise<unknown>) => {
    inflight.add(p);
    p.finally(() => inflight.delete(p));
  };

  async function flush(): Promise<void> {
    timer = undefined;
    const runs = [...pending];
    pending.clear();
    for (const runId of runs) {
      const signature = await signatureOf(join(runsDir, runId, JOURNAL));
      if (closed || signature === signatures.get(runId)) continue;
      signatures.set(runId, signature);
      onChange(runId);
    }
  }

  function mark(runId: string): void {
    if (closed) return;
    pending.add(runId);
    timer ??= setTimeout(() => track(flush()), debounceMs);
  }

  function startWatcher(): void {
    try {
      watcher = Deno.watchFs(runsDir, { recursive: true });
    } catch {
      return; // no runs directory yet: the poll starts the watcher once it appears
    }
    const events = watcher;
    track((async () => {
      try {
        for await (const event of events) {
          if (event.kind === "access") continue;
          for (const path of event.paths) {
            const runId = runIdOfJournalPath(runsDir, path);
            if (runId) mark(runId);
          }
        }
      } catch {
        // the watcher was closed or the directory vanished; the poll carries on
      }
    })());
  }

  async function scan(report: boolean): Promise<void> {
    if (scanning || closed) return;
    scanning = true;
    try {
      if (!watcher) startWatcher();
      for await (const entry of Deno.readDir(runsDir)) {
        if (!entry.isDirectory || !isValidId(entry.name)) continue;
        const signature = await signatureOf(join(runsDir, entry.name, JOURNAL));
        if (!report) signatures.set(entry.name, signature);
        else if (signature !== signatures.get(entry.name)) mark(entry.name);
      }
    } catch {
      // runs directory missing or unreadable: nothing to report
    } finally {
      scanning = false;
    }
  }

  track(scan(false));
  const poll = setInterval(() => track(scan(true)), options.pollMs ?? 1000);

  return {
    async close() {
      closed = true;
      clearInterval(poll);
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      try {
        watcher?.close();
      } catch {
        // already closed
      }
      while (inflight.size > 0) await Promise.allSettled([...inflight]);
    },
  };
}
