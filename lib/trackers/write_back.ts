/**
 * Opt-in write-back (`trackers.<name>.comment_on_land: true`): when a task made from a ticket
 * lands (its task goes CLOSED after `task_merged`), the service comments on the ticket through
 * the tracker's API with the merge commit (and the pull request it landed through) and the board link — only ever in the tracker's
 * configured `project` (lib/trackers/scope.ts). The comment goes through the outbox
 * (lib/trackers/outbox.ts): written down first, retried with back-off while the tracker is down,
 * also after a restart, and sent once per landing. It never blocks the run.
 */
import { join } from "node:path";
import { readLine } from "../journal/event_reader.ts";
import { onTaskChange } from "../tasks/changes.ts";
import type { Task } from "../tasks/task.ts";
import type { WorkspacePaths } from "../workspace.ts";
import type { ApiAccess } from "./adapter.ts";
import { HttpApiError } from "../http/api_error.ts";
import { nextCommentTry, Outbox, type OutboxEntry, outboxPath } from "./outbox.ts";
import { writeBackRefusal } from "./scope.ts";
import type { TrackerSettings } from "./settings.ts";
import type { TrackerRuntimeStore } from "./state.ts";

/** The comment posted on a landed ticket (pure). */
export function landingComment(
  o: {
    taskId: string;
    commit?: string;
    /** The pull request it landed through (pull-request landing, docs/landing.md). */
    pr?: string;
    runId?: string;
    boardUrl?: string;
    unreported?: Unreported;
  },
): string {
  const where = (o.commit ? ` in ${o.commit}` : "") + (o.pr ? ` through ${o.pr}` : "");
  const lines = [
    o.unreported === "interrupted"
      ? `Landed without a report: task \`${o.taskId}\`'s agent was interrupted before it reported; ` +
        `every completion signal passed (recovery.land_unreported) and its work was verified and merged${where}.`
      : o.unreported === "exited"
      ? `Landed without a report: task \`${o.taskId}\`'s agent exited without reporting; its work ` +
        `was verified and merged${where}.`
      : `Landed: task \`${o.taskId}\` was verified and merged${where}.`,
  ];
  if (o.boardUrl && o.runId) {
    lines.push(
      `Review board: ${o.boardUrl}/dashboard/review-board?run=${o.runId}&task=${o.taskId}`,
    );
  }
  return lines.join("\n");
}

/** How work no agent reported came to land: it exited on its own, or it was interrupted. */
export type Unreported = "exited" | "interrupted";

/**
 * The run and merge commit of `taskId`'s `task_merged` row, newest run first, and whether the
 * completion it landed came without a report (the `task_completed` row before it).
 */
export async function findMergeCommit(
  paths: WorkspacePaths,
  taskId: string,
): Promise<
  { runId: string; commit?: string; pr?: string; unreported?: Unreported } | undefined
> {
  const runs: string[] = [];
  try {
    for await (const e of Deno.readDir(paths.runs)) if (e.isDirectory) runs.push(e.name);
  } catch {
    return undefined;
  }
  const needle = JSON.stringify(taskId);
  for (const runId of runs.sort().reverse()) {
    let text: string;
    try {
      text = await Deno.readTextFile(join(paths.runs, runId, "journal.jsonl"));
    } catch {
      continue;
    }
    let merged: { runId: string; commit?: string; pr?: string } | undefined;
    for (const line of text.split("\n").reverse()) {
      const wanted = merged ? '"task_completed"' : '"task_merged"';
      if (!line.includes(wanted) || !line.includes(needle)) continue;
      const event = readLine(line); // a torn line, a malformed row: keep looking
      if (!event || !("task_id" in event) || event.task_id !== taskId) continue;
      if (!merged && event.type === "task_merged") {
        merged = { runId, commit: event.commit };
        if (event.pr !== undefined) merged.pr = event.pr;
      } else if (merged && event.type === "task_completed") {
        const unreported: Unreported | undefined = event.interrupted === true
          ? "interrupted"
          : event.recovered === true
          ? "exited"
          : undefined;
        return unreported ? { ...merged, unreported } : merged;
      }
    }
    if (merged) return merged;
  }
  return undefined;
}

/** What write-back needs. */
export interface WriteBackDeps {
  paths: WorkspacePaths;
  settings: TrackerSettings[];
  access: (s: TrackerSettings) => ApiAccess;
  runtime: TrackerRuntimeStore;
  /** The board's base URL (public_url_base, else the running server's). */
  boardUrl: (s: TrackerSettings) => Promise<string | undefined>;
  warn: (line: string) => void;
  /** The clock (ms). */
  now?: () => number;
  /** First retry delay (tests shorten it; default 30 s). */
  firstRetryDelayMs?: number;
}

/**
 * Comment on landed tickets, and send what the outbox still holds, until the returned function
 * is called; it waits for the comment in flight.
 */
export async function startWriteBack(deps: WriteBackDeps): Promise<() => Promise<void>> {
  const byName = new Map(
    deps.settings.filter((s) => s.commentOnLand && s.adapter).map((s) => [s.name, s]),
  );
  if (byName.size === 0) return () => Promise.resolve();
  const outbox = await Outbox.open(outboxPath(deps.paths));
  const now = deps.now ?? Date.now;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  // One chain: landings are written down and comments sent one at a time, in order.
  let chain: Promise<void> = Promise.resolve();
  const enqueue = (work: () => Promise<void>) => {
    chain = chain.then(work).catch((e) => deps.warn(`tracker write-back: ${(e as Error).message}`));
  };
  const schedule = () => {
    if (stopped) return;
    if (timer !== undefined) clearTimeout(timer);
    const next = outbox.pending().find((e) => byName.has(e.tracker));
    if (!next) return;
    timer = setTimeout(() => {
      timer = undefined;
      enqueue(sendDue);
    }, Math.max(0, Date.parse(next.next_at) - now()));
  };
  const sendDue = async () => {
    for (const entry of outbox.pending()) {
      if (stopped || Date.parse(entry.next_at) > now()) break;
      const s = byName.get(entry.tracker);
      if (s) await send(deps, s, outbox, entry, now);
    }
    schedule();
  };
  const unsubscribe = onTaskChange((change) => {
    if (change.to !== "CLOSED" || change.workspace !== deps.paths.root) return;
    const s = change.task.source && byName.get(change.task.source.tracker);
    if (!s) return;
    const task = structuredClone(change.task);
    enqueue(async () => {
      if (await outbox.add(await landingEntry(deps, s, task, now))) await sendDue();
    });
  });
  enqueue(sendDue); // what an earlier process left
  return async () => {
    stopped = true;
    unsubscribe();
    if (timer !== undefined) clearTimeout(timer);
    await chain;
  };
}

/** The outbox entry of `task`'s landing. */
async function landingEntry(
  deps: WriteBackDeps,
  s: TrackerSettings,
  task: Task,
  now: () => number,
): Promise<OutboxEntry> {
  const merged = await findMergeCommit(deps.paths, task.id);
  const at = new Date(now()).toISOString();
  return {
    key: `${s.name}/${task.id}/${task.revision}`,
    tracker: s.name,
    task_id: task.id,
    ref: task.source!.ref,
    ids: task.source!.ids ?? {},
    text: landingComment({
      taskId: task.id,
      commit: merged?.commit,
      pr: merged?.pr,
      runId: merged?.runId,
      unreported: merged?.unreported,
      boardUrl: await deps.boardUrl(s),
    }),
    landed_at: at,
    state: "pending",
    attempts: 0,
    next_at: at,
  };
}

/** One try of `entry`: sent, rescheduled with back-off, or given up; recorded either way. */
async function send(
  deps: WriteBackDeps,
  s: TrackerSettings,
  outbox: Outbox,
  entry: OutboxEntry,
  now: () => number,
): Promise<void> {
  const at = () => new Date(now()).toISOString();
  const record = (outcome: string, detail: string) =>
    deps.runtime.update(s.name, { last_comment: { at: at(), outcome, detail } });
  const refused = writeBackRefusal(s, { ref: entry.ref, ids: entry.ids });
  if (refused) {
    await outbox.update(entry.key, { state: "abandoned", last_error: refused, done_at: at() });
    deps.warn(`tracker ${s.name}: not commenting on ${entry.ref}: ${refused}`);
    record("refused", `${entry.ref}: ${refused}`);
    return;
  }
  const attempts = entry.attempts + 1;
  try {
    await s.adapter!.comment(deps.access(s), entry.ids, entry.text);
  } catch (e) {
    const error = e instanceof HttpApiError ? e : new HttpApiError(String(e), { status: 0 });
    const verdict = nextCommentTry(
      {
        attempts,
        landedMs: Date.parse(entry.landed_at),
        nowMs: now(),
        firstDelayMs: deps.firstRetryDelayMs,
      },
      { retryable: error.retryable, retryAfterMs: error.retryAfterMs },
    );
    const base = `cannot comment on ${entry.ref} (try ${attempts}): ${error.message}`;
    if (verdict.retry) {
      const next = new Date(verdict.atMs).toISOString();
      await outbox.update(entry.key, { attempts, next_at: next, last_error: error.message });
      deps.warn(`tracker ${s.name}: ${base}; trying again at ${next}`);
      record("pending", `${base}; trying again at ${next}`);
    } else {
      await outbox.update(entry.key, {
        attempts,
        state: "abandoned",
        last_error: error.message,
        done_at: at(),
      });
      deps.warn(`tracker ${s.name}: ${base}; gave up: ${verdict.reason}`);
      record("failed", `${base}; gave up: ${verdict.reason}`);
    }
    return;
  }
  await outbox.update(entry.key, { attempts, state: "sent", done_at: at() });
  record("ok", `${entry.ref}: ${entry.task_id} landed`);
}
