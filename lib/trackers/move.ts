/**
 * Moving a ticket through its tracker's workflow (`trackers.<name>.move_to`): the pure rules
 * every adapter follows. A state is named as the tracker shows it and matched case-insensitively
 * against the tracker's real states; a ticket already there is not moved again; a ticket that is
 * done (closed, in a done category) is never moved back by a claim or a failure — only the
 * landing moves a done ticket, and a person who reopens it makes it movable again.
 */

/**
 * When a ticket moves: its task was claimed by an agent, its work landed, it failed for good, or
 * it was cancelled by the service's side (an operator, a pull request closed by hand) — a cancel
 * the ticket itself made (closed, its wanted labels taken off) moves nothing.
 */
export const MOVE_EVENTS = ["claimed", "landed", "failed", "cancelled"] as const;
/** One of {@link MOVE_EVENTS}. */
export type MoveEvent = typeof MOVE_EVENTS[number];

/** `trackers.<name>.move_to`: the state to move to per event (an absent event moves nothing). */
export type TicketMoves = Partial<Record<MoveEvent, string>>;

/** A move asked of an adapter. */
export interface TicketMove {
  event: MoveEvent;
  /** The configured state name. */
  to: string;
  /**
   * The other configured state names: on GitHub and GitLab, where a state other than `closed`
   * is a label, the labels a move replaces (an "in progress" label goes when the issue closes).
   */
  others: string[];
}

/** What a move did. */
export interface MoveResult {
  /** `moved`; `already` there (nothing written); `left` alone (a done ticket, see the header). */
  outcome: "moved" | "already" | "left";
  /** The state the ticket is in now, as the tracker spells it. */
  state: string;
}

/** Two state names are the same: trimmed, case-insensitive. */
export function sameState(a: string, b: string): boolean {
  return a.trim().toLowerCase() === b.trim().toLowerCase();
}

/** The state of `states` named `wanted` (case-insensitively), if any. */
export function findState<T extends { name: string }>(states: T[], wanted: string): T | undefined {
  return states.find((s) => sameState(s.name, wanted));
}

/**
 * A configured state the tracker does not have (or cannot reach from where the ticket is): the
 * move is given up at once — trying again cannot help until the configuration or the workflow
 * changes. Its message names the states there are.
 */
export class UnknownStateError extends Error {
  /** The states the tracker offered, as it spells them. */
  readonly available: string[];
  constructor(
    o: { product: string; ref: string; wanted: string; available: string[]; from?: string },
  ) {
    const names = [...new Set(o.available)];
    const where = o.from ? ` from "${o.from}"` : "";
    super(
      `${o.product} has no state "${o.wanted}" that ${o.ref} can move to${where}; its states: ` +
        (names.length > 0 ? names.join(", ") : "none"),
    );
    this.name = "UnknownStateError";
    this.available = names;
  }
}

/** What to do with a ticket in state `current` (pure): move it, or why not. */
export type MoveDecision =
  | { act: "move" }
  | { act: "already" }
  | { act: "left"; reason: string };

/**
 * Decide a move of a ticket now in `current` (`currentDone`: closed or in a done category) to
 * `target` for `event` (pure): already there → nothing; done and not a landing → left alone.
 */
export function decideMove(
  o: { event: MoveEvent; current: string; currentDone: boolean; target: string },
): MoveDecision {
  if (sameState(o.current, o.target)) return { act: "already" };
  if (o.currentDone && o.event !== "landed") {
    return {
      act: "left",
      reason: `it is ${o.current}: a done ticket is moved back only by a person reopening it`,
    };
  }
  return { act: "move" };
}

/** The moves `moves` configures, as asked of an adapter for `event` (undefined: none). */
export function moveFor(moves: TicketMoves, event: MoveEvent): TicketMove | undefined {
  const to = moves[event];
  if (to === undefined) return undefined;
  const others = MOVE_EVENTS.filter((e) => e !== event).map((e) => moves[e])
    .filter((s): s is string => s !== undefined && !sameState(s, to));
  return { event, to, others };
}

/** Whether `moves` moves tickets at all. */
export function movesTickets(moves: TicketMoves): boolean {
  return MOVE_EVENTS.some((e) => moves[e] !== undefined);
}
