/**
 * The ticket sink (spec §4.2 rule 7): webhook deliveries and polls of every tracker feed tickets
 * here, and each becomes at most one task, idempotent by (adapter, ticket key). An open ticket
 * creates its task or revises it while it has not started; a closed ticket cancels its task
 * until its work has landed (a running agent is stopped, verified work is not merged), and
 * reopening the ticket brings that task back (a new attempt, as `service retry` gives); a failed
 * task whose ticket is edited to ask for something else gets a new attempt at it. Tickets
 * outside the tracker's project, or whose fields have the wrong types, are ignored. The routing
 * policy (label filter, label→role map, default role) is
 * {@link routeTicket}, pure.
 */
import { Bounded } from "../async/bounded.ts";
import { ConflictError } from "../errors.ts";
import { isValidId } from "../ids.ts";
import { CANCELLABLE, NOT_STARTED, type TaskStatus } from "../tasks/lifecycle.ts";
import type { TaskStore } from "../tasks/store.ts";
import { type Task, TaskInputSchema, type TaskSource } from "../tasks/task.ts";
import { type Ticket, type TicketOutcome, ticketProblem, type TicketSink } from "./ticket.ts";
import { ticketGoal } from "./ticket_goal.ts";

/** How one tracker's tickets become tasks (`trackers.<name>.role`, `labels`, `label_roles`). */
export interface TicketRouting {
  /** Default role. */
  role: string;
  /** Only tickets carrying at least one of these labels become tasks. */
  labels?: string[];
  /** Label → role, in configuration order: the first listed label the ticket carries wins. */
  labelRoles: [label: string, role: string][];
}

/** The role a ticket's task gets, or why it gets none (pure). */
function routeTicket(
  ticket: Ticket,
  routing: TicketRouting,
): { role: string } | { ignored: string } {
  const carried = new Set(ticket.labels.map((l) => l.toLowerCase()));
  if (routing.labels && !routing.labels.some((l) => carried.has(l.toLowerCase()))) {
    return { ignored: `carries none of the labels ${routing.labels.join(", ")}` };
  }
  for (const [label, role] of routing.labelRoles) {
    if (carried.has(label.toLowerCase())) return { role };
  }
  return { role: routing.role };
}

/** A task id derived from the ticket (`tracker_b-octo-app-42`), or undefined if none fits. */
function ticketTaskId(ticket: Ticket): string | undefined {
  const id = `${ticket.tracker}-${ticket.ref || ticket.key}`.replace(/[^A-Za-z0-9._-]+/g, "-")
    .replace(/\.{2,}/g, ".").replace(/-+/g, "-").replace(/-$/, "").slice(0, 120);
  return isValidId(id) ? id : undefined;
}

/** Statuses a ticket without its wanted labels cancels: before the work started, or failed. */
const UNLABEL_CANCELS: ReadonlySet<TaskStatus> = new Set([...NOT_STARTED, "FAILED"]);
/** Tickets applied at once (each writes and syncs a task spec). */
const MAX_SIDE_BY_SIDE = 64;

/** Options of {@link createTicketSink}. */
export interface TicketSinkOptions {
  store: TaskStore;
  /** Routing of a tracker's tickets (undefined: the tracker is not configured; ignore them). */
  routing: (tracker: string) => TicketRouting | undefined;
  /** Why a ticket is outside its tracker's project (lib/trackers/scope.ts), if it is. */
  outside?: (ticket: Ticket) => string | undefined;
}

/**
 * A sink over `store`. Tickets about one ticket (adapter, key) are applied one at a time, in the
 * order they came (two deliveries about one ticket never create two tasks); tickets about
 * different tickets are applied side by side, so their task specs share the disk's syncs (a
 * burst of new issues costs a few group commits, not one sync after another). The (adapter,
 * key) → task index is built from the store once.
 */
export function createTicketSink(options: TicketSinkOptions): TicketSink {
  const { store } = options;
  const index = new Map<string, string>();
  for (const task of store.list()) {
    if (task.source) index.set(slot(task.source.tracker, task.source.key), task.id);
  }
  const applyOne = async (ticket: Ticket): Promise<TicketOutcome> => {
    const refused = ticketProblem(ticket) ?? options.outside?.(ticket);
    if (refused) return ignored(ticket, refused);
    const existingId = index.get(slot(ticket.tracker, ticket.key));
    const existing = existingId ? store.get(existingId) : undefined;
    const routing = options.routing(ticket.tracker);
    if (!routing) return ignored(ticket, `trackers.${ticket.tracker} is not configured`);
    const route = routeTicket(ticket, routing);
    if (existing) {
      // An event that named no labels leaves the task's role and label filter as they were.
      return await update(
        store,
        existing,
        ticket,
        ticket.labelsUnknown ? { role: existing.role } : route,
      );
    }
    if (ticket.state === "closed") return ignored(ticket, "closed ticket without a task");
    if ("ignored" in route) return ignored(ticket, route.ignored);
    const input = TaskInputSchema.parse({
      id: ticketTaskId(ticket),
      title: (ticket.title || ticket.ref || ticket.key).slice(0, 500),
      goal: ticketGoal(ticket),
      role: route.role,
      source: sourceOf(ticket),
    });
    if (input.id && store.get(input.id)) delete input.id; // taken by another task: the store picks
    let task: Task;
    try {
      [task] = await store.create([input]);
    } catch (e) {
      // Another ticket whose id reads the same is being created beside this one: pick another.
      if (!(input.id && e instanceof ConflictError && e.code === "duplicate_id")) throw e;
      delete input.id;
      [task] = await store.create([input]);
    }
    index.set(slot(ticket.tracker, ticket.key), task.id);
    return { ref: ticket.ref, action: "created", task_id: task.id };
  };
  /** The last queued ticket of each (adapter, key). */
  const queues = new Map<string, Promise<unknown>>();
  // A first poll may bring thousands of tickets at once: a bounded number are written at a time.
  const writers = new Bounded(MAX_SIDE_BY_SIDE);
  const inTurn = (ticket: Ticket): Promise<TicketOutcome> => {
    const key = slot(ticket.tracker, ticket.key);
    const run = (queues.get(key) ?? Promise.resolve()).then(() =>
      writers.run(() => applyOne(ticket))
    );
    const tail = run.catch(() => {});
    queues.set(key, tail);
    tail.then(() => {
      if (queues.get(key) === tail) queues.delete(key);
    });
    return run;
  };
  return (tickets) => Promise.all(tickets.map(inTurn));
}

async function update(
  store: TaskStore,
  task: Task,
  ticket: Ticket,
  route: { role: string } | { ignored: string },
): Promise<TicketOutcome> {
  const base = { ref: ticket.ref, task_id: task.id };
  const known = task.source?.updated_at;
  if (known && ticket.raw.updated_at && ticket.raw.updated_at < known) {
    return { ...base, action: "unchanged", reason: "older than the ticket the task was made from" };
  }
  // Where the task is when the change is written (a claim or a landing may be on its way).
  const now = () => store.get(task.id)?.status ?? task.status;
  const unchanged = (why = `task is ${now()}`): TicketOutcome => ({
    ...base,
    action: "unchanged",
    reason: why,
  });
  if (ticket.state === "closed") {
    // Closed before its work landed: not to be done (its agent is stopped, nothing merges).
    // Landed work stays landed; an operator's cancel stays the operator's.
    if (!(await store.cancelWhile(task.id, closedReason(ticket), CANCELLABLE))) return unchanged();
    return { ...base, action: "cancelled" };
  }
  if ("ignored" in route) {
    // A maintainer took the wanted label off before the work started, or after it failed: it is
    // not to be done. Work under way or landed is left alone.
    const reason = `${unlabelledPrefix(ticket)} ${route.ignored}`;
    if (!(await store.cancelWhile(task.id, reason, UNLABEL_CANCELS))) return unchanged();
    return { ...base, action: "cancelled", reason: route.ignored };
  }
  const fields = ticketFields(task, ticket, route);
  const asked = fields.title !== task.title || fields.goal !== task.goal ||
    fields.role !== task.role;
  const back = task.status === "CANCELLED" && cancelledByTicket(task, ticket);
  if (back || (task.status === "FAILED" && asked)) {
    // Only a cancel the ticket made is undone (an operator's stays); a failed task whose ticket
    // asks for something else gets a new attempt at it, as `service retry` gives.
    const how = !back
      ? "edited"
      : task.summary === closedReason(ticket)
      ? "reopened"
      : "labelled again";
    try {
      // The ticket as it is now, and its time, in the same write: a late copy is then older.
      const reason = `ticket ${ticket.ref} was ${how} in ${ticket.tracker}`;
      await store.retry(task.id, reason, { fields, from: task.status });
    } catch (e) {
      // An operator acted meanwhile (a retry, a cancel): theirs stands.
      if (e instanceof ConflictError) return unchanged();
      throw e;
    }
    return { ...base, action: back ? "reopened" : "retried" };
  }
  if (task.status === "FAILED") return unchanged(FAILED_UNCHANGED);
  if (!NOT_STARTED.has(task.status)) return unchanged();
  if (!asked && fields.source.url === task.source?.url) return unchanged("no change");
  try {
    await store.revise(task.id, fields);
  } catch (e) {
    // A claim on its way to disk meanwhile wins: a started task is left alone.
    if (e instanceof ConflictError && e.code === "task_started") return unchanged();
    throw e;
  }
  return { ...base, action: "updated" };
}

/** Why a FAILED task's ticket that asks for nothing new leaves it as it is. */
const FAILED_UNCHANGED = "task is FAILED: a new attempt follows an edit of the ticket's title " +
  "or text, a reopening after a close, or `service retry`";

/** How a cancel made by a ticket that lost its wanted labels begins. */
function unlabelledPrefix(ticket: Pick<Ticket, "ref" | "tracker">): string {
  return `ticket ${ticket.ref} in ${ticket.tracker}`;
}

/**
 * Whether `task` was cancelled by its own ticket (closed, or without a wanted label), not by an
 * operator or its pull request: such a cancel moves the ticket nowhere (lib/trackers/move.ts).
 */
export function cancelledByItsTicket(task: Task): boolean {
  return task.status === "CANCELLED" && task.source !== undefined &&
    cancelledByTicket(task, task.source);
}

/** Whether `task` was cancelled by `ticket`: closed, or without a wanted label. */
function cancelledByTicket(task: Task, ticket: Pick<Ticket, "ref" | "tracker">): boolean {
  const summary = task.summary ?? "";
  return summary === closedReason(ticket) ||
    summary.startsWith(`${unlabelledPrefix(ticket)} carries none of the labels `);
}

/** A task's fields as `ticket` says them now. */
function ticketFields(task: Task, ticket: Ticket, route: { role: string } | { ignored: string }) {
  return {
    title: (ticket.title || task.title).slice(0, 500),
    goal: ticketGoal(ticket),
    role: "role" in route ? route.role : task.role,
    source: sourceOf(ticket),
  };
}

/** Why a ticket's closing cancelled its task (also how a reopen recognises that cancel). */
function closedReason(ticket: Pick<Ticket, "ref" | "tracker">): string {
  return `ticket ${ticket.ref} was closed in ${ticket.tracker}`;
}

function sourceOf(ticket: Ticket): TaskSource {
  return {
    tracker: ticket.tracker,
    key: ticket.key.slice(0, 500),
    ref: ticket.ref.slice(0, 500),
    url: ticket.url.slice(0, 2000),
    ...(ticket.raw.updated_at ? { updated_at: ticket.raw.updated_at } : {}),
    ...(ticket.raw.ids ? { ids: ticket.raw.ids } : {}),
  };
}

function ignored(ticket: Ticket, reason: string): TicketOutcome {
  return { ref: ticket.ref, action: "ignored", reason };
}

function slot(tracker: string, key: string): string {
  return `${tracker}\u0000${key}`;
}
