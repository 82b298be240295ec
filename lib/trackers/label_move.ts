/**
 * GitHub and GitLab issues have two states, open and closed; teams show "in progress" with a
 * label. So on these two a move to `closed` closes the issue, and a move to any other name adds
 * the repository's (project's) label of that name — matched case-insensitively against the labels
 * that exist, never created — and removes the labels the other `move_to` events name. Pure: the
 * adapters read the issue and the labels, ask {@link planLabelMove}, then write what it says.
 */
import {
  findState,
  type MoveResult,
  sameState,
  type TicketMove,
  UnknownStateError,
} from "./move.ts";

/** The state name that closes an issue. */
export const CLOSED = "closed";

/** What to write for a move of an open/closed issue carrying labels. */
export type LabelMovePlan =
  | { done: MoveResult }
  | {
    /** The label to add (as the repository spells it). */
    add?: string;
    /** Labels the issue carries that other `move_to` events name. */
    remove: string[];
    close: boolean;
    /** What the ticket is in once written. */
    result: MoveResult;
  };

/**
 * Plan `move` of an issue (`closed`, its `labels`) in a repository whose labels are `known`
 * (pure). An unknown label throws {@link UnknownStateError} naming `closed` and the labels.
 */
export function planLabelMove(
  o: {
    product: string;
    ref: string;
    closed: boolean;
    labels: string[];
    known: string[];
    move: TicketMove;
  },
): LabelMovePlan {
  const toClose = sameState(o.move.to, CLOSED);
  const label = toClose ? undefined : findState(o.known.map((name) => ({ name })), o.move.to)?.name;
  if (!toClose && label === undefined) {
    throw new UnknownStateError({
      product: o.product,
      ref: o.ref,
      wanted: o.move.to,
      available: [CLOSED, ...o.known],
    });
  }
  if (o.closed && !toClose && o.move.event !== "landed") {
    return { done: { outcome: "left", state: CLOSED } };
  }
  const add = label !== undefined && !o.labels.some((l) => sameState(l, label)) ? label : undefined;
  const remove = o.labels.filter((l) =>
    o.move.others.some((other) => sameState(other, l)) && !(label && sameState(l, label))
  );
  const close = toClose && !o.closed;
  const state = label ?? CLOSED;
  if (add === undefined && remove.length === 0 && !close) {
    return { done: { outcome: "already", state } };
  }
  return { add, remove, close, result: { outcome: "moved", state } };
}
