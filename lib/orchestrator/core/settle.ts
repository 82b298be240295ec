/**
 * Settling (`settle`, decided right after every event that can change what may start, and on each
 * tick): recover strays, note the budget, start what may start, publish why the rest waits, and
 * end the run when nothing can progress (or, once it stops, when nothing runs any more).
 */
import * as ev from "../../journal/events.ts";
import {
  chainOf,
  decideSchedule,
  describeWait,
  type RemoteSlots,
  type SchedulableTask,
  type WaitReason,
} from "../schedule.ts";
import { blockedReasons } from "./blocked.ts";
import { LOST_REASON } from "./on_exit.ts";
import { mergeWaitText } from "./on_landing.ts";
import { attemptFailed, type Out } from "./outcomes.ts";
import { SETUP_FAILED } from "../../worktree_env/spec.ts";
import type { CoreState, Draft, Landing, TaskView } from "./state.ts";
import { durationWords } from "../../util/duration_words.ts";

/** `settle`. */
export function onSettle(d: Draft, out: Out): void {
  if (d.stopping) {
    // Nothing starts any more, but why tasks wait changes as their agents end: keep it true.
    updateWaits(d, out, new Map());
    return finishIfStopped(d, out);
  }
  recoverStrays(d, out);
  noteBudget(d, out);
  const scheduleWaits = schedule(d, out);
  updateWaits(d, out, scheduleWaits);
  finishIfDone(d, out, scheduleWaits);
}

function finishIfStopped(d: Draft, out: Out): void {
  const busy = [...d.landings.values()].some((l) =>
    l.stage === "capturing" || l.stage === "merging" || l.stage === "rebasing"
  );
  if (d.sessions.size > 0 || d.starting.size > 0 || busy || d.verdict) return;
  d.verdict = { status: "stopped", problems: problems(d) };
  out.push({ kind: "finish", verdict: d.verdict });
}

/** ORPHANED tasks nobody handles (a claimant through the task API stopped heartbeating). */
function recoverStrays(d: Draft, out: Out): void {
  for (const task of d.tasks.values()) {
    if (task.status !== "ORPHANED") continue;
    if (d.sessions.has(task.id) || d.landings.has(task.id) || d.starting.has(task.id)) continue;
    attemptFailed(d, out, task, {
      signals: [{ kind: "agent_lost", detail: task.summary ?? LOST_REASON }],
      reason: task.summary ?? LOST_REASON,
      retryable: true,
      resumeFrom: "keep", // the claimant's work is not ours; an earlier interrupted one's stays
    });
  }
}

function noteBudget(d: Draft, out: Out): void {
  if (!d.readOnly || !d.budget || d.budgetNoted) return;
  d.budgetNoted = true;
  const { message, ...data } = d.budget;
  out.journal(ev.budgetExceeded(data));
  out.log(null, message);
}

/** What the scheduler needs of a task. */
export function schedulable(t: TaskView): SchedulableTask {
  return {
    id: t.id,
    role: t.role,
    priority: t.priority,
    seq: t.seq,
    owned_files: t.owned_files,
    depends_on: t.depends_on,
    ...(t.cli ? { cli: t.cli } : {}),
  };
}

/**
 * Work that is done but not merged yet (an operator's completion has none to merge; work this
 * run merged has landed even while the store could not record it).
 */
export function awaitsMerge(d: CoreState, t: TaskView): boolean {
  return t.status === "DONE" && !t.operatorDone && !d.landed.has(t.id);
}

function schedule(d: Draft, out: Out): Map<string, WaitReason> {
  const tasks = [...d.tasks.values()];
  const busyIds = new Set([...d.sessions.keys(), ...d.starting]);
  // A request in the batch lane, or a task on a remote worker (its own slots), holds its owned
  // files but no agent slot of this machine.
  const inBatch = new Set(
    [...busyIds].filter((id) => {
      const s = d.sessions.get(id);
      return s?.batchId !== undefined || s?.worker !== undefined || d.batching.has(id) ||
        d.dispatching.has(id);
    }),
  );
  const views = (ids: Iterable<string>) =>
    [...ids].flatMap((id) => {
      const t = d.tasks.get(id);
      return t ? [schedulable(t)] : [];
    });
  const ready = tasks.filter((t) => t.status === "OPEN" && !busyIds.has(t.id));
  const decision = decideSchedule({
    ready: ready.map(schedulable),
    running: views([...busyIds].filter((id) => !inBatch.has(id))),
    inBatch: views(inBatch),
    unmerged: tasks.filter((t) => awaitsMerge(d, t) && !busyIds.has(t.id)).map(schedulable),
    maxAgents: d.settings.maxAgents,
    roleMaxAgents: d.settings.roleMaxAgents,
    pendingMerge: new Set(tasks.filter((t) => awaitsMerge(d, t)).map((t) => t.id)),
    adapter: d.settings.adapter,
    chains: d.settings.chains,
    parked: d.parked,
    readOnly: d.readOnly,
    batch: new Set(ready.filter((t) => t.batch).map((t) => t.id)),
    workers: connectedWorkers(d),
  });
  sayWorkers(d, out, decision.waiting);
  if (decision.batch.length > 0) {
    for (const id of decision.batch) {
      d.starting.add(id);
      d.batching.add(id);
    }
    out.push({ kind: "batch", taskIds: decision.batch });
  }
  for (const id of decision.start) {
    const adapter = decision.adapters.get(id) ?? d.settings.adapter;
    const task = d.tasks.get(id);
    const first = task
      ? chainOf(schedulable(task), { chains: d.settings.chains, adapter: d.settings.adapter })[0]
      : d.settings.adapter;
    if (adapter !== first) out.log(id, `${first} is parked; starting with fallback ${adapter}`);
    d.starting.add(id);
    out.push({ kind: "spawn", taskId: id, adapter, note: d.notes.get(id) });
  }
  return decision.waiting;
}

/**
 * The workers heard from within a lease (cordoned and draining ones marked closed), once the
 * server has told of any; undefined before (a run that never saw a worker).
 */
function connectedWorkers(d: Draft): RemoteSlots[] | undefined {
  if (!d.workers) return undefined;
  const lease = d.settings.heartbeatTimeoutS ?? 45;
  return d.workers.filter((w) => d.now - w.seen < lease * 1000).map((w) => ({
    name: w.name,
    ...(w.roles ? { roles: w.roles } : {}),
    slots: w.slots,
    free: w.free,
    ...(w.closed ? { closed: true } : {}),
  }));
}

/**
 * With every agent left to workers, the run says when none is connected while tasks are ready
 * ("no worker connected (3 tasks ready)"), once, and again after one was.
 */
function sayWorkers(d: Draft, out: Out, waiting: ReadonlyMap<string, WaitReason>): void {
  const none = [...waiting.values()].filter((w) => w.kind === "no_worker").length;
  if (none > 0 && !d.noWorkerSaid) {
    d.noWorkerSaid = true;
    out.log(
      null,
      `no worker connected (${none} task${none === 1 ? "" : "s"} ready): with max_agents: 0 ` +
        "every task waits for one — start `service worker --server <this server's URL>` on a " +
        "machine, or set max_agents above 0",
    );
  } else if (none === 0 && d.noWorkerSaid && (d.workers ?? []).length > 0) {
    d.noWorkerSaid = false;
  }
}

/** Wait kinds worth a journal row (the others change by the second or are obvious). */
const JOURNALED: ReadonlySet<WaitReason["kind"]> = new Set([
  "owned_files",
  "dependency_merge",
  "no_worker",
  "no_worker_for_role",
]);

function updateWaits(d: Draft, out: Out, scheduled: Map<string, WaitReason>): void {
  const waits = new Map<string, string>();
  const toJournal = new Map<string, string>();
  for (const [id, reason] of scheduled) {
    waits.set(id, describeWait(reason));
    if (JOURNALED.has(reason.kind)) toJournal.set(id, describeWait(reason));
  }
  for (const [id, b] of blockedReasons(d.tasks)) {
    waits.set(id, b.reason);
    if (b.stuck) toJournal.set(id, b.reason);
  }
  for (const l of d.landings.values()) {
    if (l.stage !== "waiting") {
      waits.set(l.taskId, l.reason);
      continue;
    }
    waits.set(l.taskId, mergeWaitText(l.reason));
    toJournal.set(l.taskId, mergeWaitText(l.reason));
  }
  for (const [id, reason] of toJournal) {
    if (d.journaledWaits.get(id) === reason) continue;
    d.journaledWaits.set(id, reason);
    out.journal(ev.taskWaiting({ task_id: id, reason }));
  }
  // Forget a journaled wait once the task no longer waits at all (a merge being retried still does).
  for (const id of d.journaledWaits.keys()) {
    if (!waits.has(id)) d.journaledWaits.delete(id);
  }
  if (!sameEntries(waits, d.waits)) {
    d.waits = waits;
    out.push({ kind: "publish_waits", waits: Object.fromEntries(waits) });
  }
}

function sameEntries(a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) if (b.get(k) !== v) return false;
  return true;
}

/** Only merges that wait for the user are left: true once they were given their time. */
function waitedLongEnough(d: Draft, out: Out, stuck: Landing[]): boolean {
  if (d.endsAt === undefined) {
    const waitMs = d.settings.stuckMergeWaitMs ?? 60_000;
    d.endsAt = d.now + waitMs;
    if (waitMs > 0) {
      out.log(
        null,
        `only merges that wait for you are left (${stuck.map((l) => l.taskId).join(", ")}): ` +
          `the run ends in ${durationWords(waitMs / 1000)} unless they can land by then ` +
          "(`service run` resumes them later)",
      );
    }
  }
  return d.now >= d.endsAt;
}

/** A ready task that waits for a merge (its dependency's, or one holding its owned files). */
function waitsForMerge(wait: WaitReason | undefined): boolean {
  return wait?.kind === "dependency_merge" || wait?.kind === "owned_files";
}

function finishIfDone(d: Draft, out: Out, scheduled: ReadonlyMap<string, WaitReason>): void {
  if (d.settings.continuous || d.verdict) return;
  const endsAt = d.endsAt;
  d.endsAt = undefined; // set again below while only merges that wait for the user are left
  if (d.sessions.size > 0 || d.starting.size > 0) return;
  // A landing under way, or one that waits for what comes by itself (a branch that moved, the
  // host's checks and reviews), keeps the run; one only a person can end (`stuck`) does so for a
  // while (they may be at the keyboard), then no longer.
  const landings = [...d.landings.values()];
  const forTheUser = (l: Landing) => l.stuck && (l.stage === "waiting" || l.stage === "merging");
  if (!landings.every(forTheUser)) return;
  // Done work that cannot land now: what waits for its merge cannot progress either.
  const unlandable = [...d.tasks.values()].some((t) => awaitsMerge(d, t));
  const blocked = blockedReasons(d.tasks);
  for (const t of d.tasks.values()) {
    switch (t.status) {
      case "BLOCKED":
        if (blocked.get(t.id)?.stuck || d.readOnly) break;
        if (unlandable && t.depends_on.every((id) => d.tasks.has(id))) break;
        return;
      case "OPEN":
        if (!d.readOnly && !(unlandable && waitsForMerge(scheduled.get(t.id)))) return;
        break;
      case "CLAIMED":
      case "IN_PROGRESS":
      case "ORPHANED":
        return;
    }
  }
  d.endsAt = endsAt;
  if (landings.some((l) => l.stage === "merging")) return; // tried again now: its outcome decides
  if (landings.length > 0 && !waitedLongEnough(d, out, landings)) return;
  // An operator's word settles a task as a landing does (a cancel, or a completion of a task
  // nobody worked on); a FAILED task or unlanded work fails the run.
  const landed = [...d.tasks.values()].every((t) =>
    t.status === "CLOSED" || t.status === "CANCELLED" || (t.status === "DONE" && t.operatorDone)
  );
  d.verdict = { status: landed ? "completed" : "failed", problems: problems(d) };
  out.push({ kind: "finish", verdict: d.verdict });
}

/** One line per task that did not land, with what to do about it. */
function problems(d: Draft): string[] {
  const blocked = blockedReasons(d.tasks);
  const lines: string[] = [];
  for (const t of d.tasks.values()) {
    switch (t.status) {
      case "CLOSED":
        break;
      case "FAILED":
        lines.push(
          `${t.id}: FAILED — ${t.summary ?? "no reason recorded"} (${
            // The environment failed, not the agent: a retry alone fails the same way.
            t.summary?.startsWith(`${SETUP_FAILED}:`)
              ? "fix worktree.setup, then "
              : ""}\`service retry ${t.id}\`)`,
        );
        break;
      case "CANCELLED":
        // Its reason says who cancelled it (a person who closed its pull request, a tracker);
        // without one, an operator did.
        lines.push(
          t.summary ? `${t.id}: CANCELLED — ${t.summary}` : `${t.id}: CANCELLED by an operator`,
        );
        break;
      case "BLOCKED":
        // "BLOCKED — waits on …": the reason's own "blocked: " would say it twice.
        lines.push(
          `${t.id}: BLOCKED — ${
            blocked.get(t.id)?.reason.replace(/^blocked: /, "") ?? "waits on a dependency"
          }`,
        );
        break;
      case "OPEN":
        lines.push(
          d.readOnly
            ? `${t.id}: not started — budget reached (raise budget_usd, then \`service run\`)`
            : `${t.id}: not started (\`service run\` resumes the run)`,
        );
        break;
      case "DONE":
        if (t.operatorDone) {
          lines.push(`${t.id}: DONE by an operator (nothing merged)`);
          break;
        }
        lines.push(
          d.landings.has(t.id)
            ? `${t.id}: DONE, not merged yet — ${
              d.landings.get(t.id)!.reason
            } (\`service run\` resumes)`
            : d.landed.has(t.id)
            ? `${t.id}: merged, but the task store could not record it (it still says DONE); ` +
              "the next `service run` closes it from the journal"
            : `${t.id}: DONE outside this run (through the task API); not merged by the service`,
        );
        break;
      default: {
        const batch = d.batchesLeft.get(t.id);
        lines.push(
          batch
            ? `${t.id}: ${t.status} — its batch request (${batch}) stays with the provider ` +
              "(`service run` polls it)"
            : `${t.id}: ${t.status} (\`service run\` resumes the run)`,
        );
      }
    }
  }
  return lines;
}
