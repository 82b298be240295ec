/**
 * The goal of a ticket's task (pure): its title, then its body, cut to at most
 * {@link TICKET_GOAL_MAX_BYTES} of UTF-8. An agent CLI takes its prompt (role templates and the
 * goal) as one command-line argument, and Linux refuses an argument over 128 KiB
 * (`MAX_ARG_STRLEN`, E2BIG): a longer ticket would make a task no agent can ever start. The cut
 * keeps whole characters and tells the agent where the rest of the ticket is.
 */
import type { Ticket } from "./ticket.ts";

/** The most UTF-8 bytes of a ticket's text a task's goal holds (half an argument's limit). */
export const TICKET_GOAL_MAX_BYTES = 64 * 1024;

const UTF8 = new TextEncoder();

/** The goal of `ticket`'s task: `title\n\nbody`, cut at {@link TICKET_GOAL_MAX_BYTES}. */
export function ticketGoal(ticket: Pick<Ticket, "title" | "body" | "url" | "ref">): string {
  const body = ticket.body.trim();
  const goal = body ? `${ticket.title}\n\n${body}` : ticket.title;
  const bytes = UTF8.encode(goal).length;
  if (bytes <= TICKET_GOAL_MAX_BYTES) return goal;
  const note =
    `\n\n[The ticket's text is cut here: it is ${bytes} bytes, and a task takes at most ` +
    `${TICKET_GOAL_MAX_BYTES} of it. The whole ticket: ${ticket.url || ticket.ref}]`;
  const room = new Uint8Array(Math.max(0, TICKET_GOAL_MAX_BYTES - UTF8.encode(note).length));
  // encodeInto writes whole characters only: `read` ends on a character's boundary.
  const { read } = UTF8.encodeInto(goal, room);
  return goal.slice(0, read) + note;
}
