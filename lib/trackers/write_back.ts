/**
 * Opt-in write-back. `trackers.<name>.comment_on_land: true`: when a task made from a ticket
 * lands (its task goes CLOSED after `task_merged`), the service comments on the ticket through
 * the tracker's API with the merge commit (and the pull request it landed through) and the board
 * link. `trackers.<name>.move_to`: when the task is claimed, lands, fails for good or is
 * cancelled by an operator or its pull request (CLAIMED, CLOSED, FAILED, CANCELLED), the ticket moves to the workflow state named for it (lib/trackers/move.ts,
 * ticket_moves.ts). Only ever in the tracker's configured `project` (lib/trackers/scope.ts).
 * Comments and moves go through the outbox (lib/trackers/outbox.ts): written down first, retried
 * with back-off while the tracker is down, also after a restart, and sent once per event. It
 * never blocks the run, and a failed move never fails a task.
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
import { type MoveEvent, type MoveResult, movesTickets, UnknownStateError } from "./move.ts";
import { journalMove, moveEntry, moveWords } from "./ticket_moves.ts";
import { cancelledByItsTicket } from "./sink.ts";
import type { TaskStatus } from "../tasks/lifecycle.ts";
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
    deps.settings.filter((s) => (s.commentOnLand || movesTickets(s.moveTo)) && s.adapter)
      .map((s) => [s.name, s]),
  );
  if (byName.size === 0) return () => Promise.resolve();
  const outbox = await Outbox.open(outboxPath(deps.paths));
  const now = deps.now ?? Date.now;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  // Two chains: events are written down one at a time, in order, the moment they happen; calls
  // to the tracker go one at a time on the other. A call the tracker holds (down, timing out)
  // never keeps a later landing from being on disk, so a kill meanwhile loses nothing.
  let recording: Promise<void> = Promise.resolve();
  let chain: Promise<void> = Promise.resolve();
  const warnOf = (e: unknown) => deps.warn(`tracker write-back: ${(e as Error).message}`);
  const enqueue = (work: () => Promise<void>) => {
    chain = chain.then(work).catch(warnOf);
  };
  const record = (work: () => Promise<void>) => {
    recording = recording.then(work).catch(warnOf);
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
      if (entry.state !== "pending") continue; // superseded meanwhile by a later move
      const s = byName.get(entry.tracker);
      if (s) await send(deps, s, outbox, entry, now);
    }
    schedule();
  };
  const unsubscribe = onTaskChange((change) => {
    const event = MOVED_ON[change.to];
    if (!event || change.workspace !== deps.paths.root) return;
    if (change.from === change.to) return; // an update that moved nothing
    // The person who closed or unlabelled the ticket already put it where they want it.
    if (event === "cancelled" && cancelledByItsTicket(change.task)) return;
    const s = change.task.source && byName.get(change.task.source.tracker);
    if (!s) return;
    const task = structuredClone(change.task);
    record(async () => {
      const at = new Date(now()).toISOString();
      const move = moveEntry(s, task, { event, at });
      let added = false;
      if (move) {
        // The latest move wins: a claim's move still being retried never lands after this one.
        await outbox.supersedeMoves(move, at);
        added = await outbox.add(move);
      }
      if (event === "landed" && s.commentOnLand) {
        added = await outbox.add(await landingEntry(deps, s, task, now)) || added;
      }
      if (added) enqueue(sendDue);
    });
  });
  enqueue(sendDue); // what an earlier process left
  return async () => {
    stopped = true;
    unsubscribe();
    if (timer !== undefined) clearTimeout(timer);
    await recording;
    await chain;
  };
}

/** The task statuses that move a ticket, and the `move_to` event each is. */
const MOVED_ON: Partial<Record<TaskStatus, MoveEvent>> = {
  CLAIMED: "claimed",
  CLOSED: "landed",
  FAILED: "failed",
  CANCELLED: "cancelled",
};

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

/** What one try of an entry calls, and where its outcome is recorded. */
interface EntryKind {
  /** `last_comment` or `last_move` in `.sdd/runtime/trackers.json`. */
  field: "last_comment" | "last_move";
  /** `comment on` or `move`, as messages say it. */
  verb: string;
  /** Call the tracker; the words of success and the move's result. */
  call(): Promise<{ words: string; result?: MoveResult }>;
  /** A final outcome (sent, or given up) is journaled for a move. */
  settled(
    o: { outcome: "moved" | "already" | "left" | "failed"; state?: string; detail?: string },
  ): Promise<void>;
}

/** The kind of `entry`: a landing comment, or a ticket move. */
function kindOf(deps: WriteBackDeps, s: TrackerSettings, entry: OutboxEntry): EntryKind {
  if (!entry.move) {
    return {
      field: "last_comment",
      verb: "comment on",
      call: async () => {
        await s.adapter!.comment(deps.access(s), entry.ids, entry.text);
        return { words: `${entry.ref}: ${entry.task_id} landed` };
      },
      settled: () => Promise.resolve(),
    };
  }
  const move = entry.move;
  return {
    field: "last_move",
    verb: "move",
    call: async () => {
      const result = await s.adapter!.moveTicket(deps.access(s), entry.ids, move);
      return { words: moveWords(entry, result), result };
    },
    settled: (o) =>
      journalMove(deps.paths, entry, o).catch((e) =>
        deps.warn(
          `tracker ${s.name}: cannot journal the move of ${entry.ref}: ${(e as Error).message}`,
        )
      ),
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
  const kind = kindOf(deps, s, entry);
  const record = (outcome: string, detail: string) =>
    deps.runtime.update(s.name, { [kind.field]: { at: at(), outcome, detail } });
  const refused = writeBackRefusal(s, { ref: entry.ref, ids: entry.ids });
  if (refused) {
    await outbox.update(entry.key, { state: "abandoned", last_error: refused, done_at: at() });
    deps.warn(
      `tracker ${s.name}: not ${
        kind.verb === "move" ? "moving" : "commenting on"
      } ${entry.ref}: ${refused}`,
    );
    record("refused", `${entry.ref}: ${refused}`);
    await kind.settled({ outcome: "failed", detail: refused });
    return;
  }
  const attempts = entry.attempts + 1;
  let done: { words: string; result?: MoveResult };
  try {
    done = await kind.call();
  } catch (e) {
    await failed(deps, { s, outbox, entry, now, kind, record }, attempts, e);
    return;
  }
  await outbox.update(entry.key, { attempts, state: "sent", done_at: at() });
  record(done.result?.outcome ?? "ok", done.words);
  if (done.result) {
    await kind.settled({
      outcome: done.result.outcome,
      state: done.result.state,
      detail: done.words,
    });
  }
}

/** A failed try: rescheduled with back-off, or given up (an unknown state at once). */
async function failed(
  deps: WriteBackDeps,
  o: {
    s: TrackerSettings;
    outbox: Outbox;
    entry: OutboxEntry;
    now: () => number;
    kind: EntryKind;
    record: (outcome: string, detail: string) => void;
  },
  attempts: number,
  e: unknown,
): Promise<void> {
  const { s, entry, now } = o;
  const base = `cannot ${o.kind.verb} ${entry.ref}${
    entry.move ? ` to "${entry.move.to}" (${entry.move.event})` : ""
  } (try ${attempts})`;
  if (e instanceof UnknownStateError) {
    const why = `${e.message} (set trackers.${s.name}.move_to.${entry.move!.event} to one of them)`;
    await o.outbox.update(entry.key, {
      attempts,
      state: "abandoned",
      last_error: why,
      done_at: new Date(now()).toISOString(),
    });
    deps.warn(`tracker ${s.name}: ${base}: ${why}`);
    o.record("failed", `${base}: ${why}`);
    await o.kind.settled({ outcome: "failed", detail: why });
    return;
  }
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
  const said = `${base}: ${error.message}`;
  if (verdict.retry) {
    const next = new Date(verdict.atMs).toISOString();
    await o.outbox.update(entry.key, { attempts, next_at: next, last_error: error.message });
    deps.warn(`tracker ${s.name}: ${said}; trying again at ${next}`);
    o.record("pending", `${said}; trying again at ${next}`);
    return;
  }
  await o.outbox.update(entry.key, {
    attempts,
    state: "abandoned",
    last_error: error.message,
    done_at: new Date(now()).toISOString(),
  });
  deps.warn(`tracker ${s.name}: ${said}; gave up: ${verdict.reason}`);
  o.record("failed", `${said}; gave up: ${verdict.reason}`);
  await o.kind.settled({
    outcome: "failed",
    detail: `${error.message}; gave up: ${verdict.reason}`,
  });
}
