/**
 * A task's title as a card shows it: at most {@link CARD_TITLE_CHARS} characters (the task's
 * detail shows it whole), so one task whose title is a 10 kB paragraph neither stretches its
 * card down the page nor makes the card's accessible name a recital; its reordering controls
 * shown, not obeyed (lib/dashboard/bidi_controls.ts), and inside `<bdi>`, so its direction cannot
 * reorder the role and the diff summary beside it.
 */
import { showBidiControls } from "../../lib/dashboard/bidi_controls.ts";

/** The longest title a card shows. */
export const CARD_TITLE_CHARS = 160;

/** `title` cut to {@link CARD_TITLE_CHARS} characters (never inside a surrogate pair), with "…". */
export function shortTitle(title: string): string {
  const chars = Array.from(title);
  return chars.length > CARD_TITLE_CHARS ? `${chars.slice(0, CARD_TITLE_CHARS).join("")}…` : title;
}

/** Props of {@link CardTitle}. */
export interface CardTitleProps {
  title: string;
}

/** The title of a card, short and isolated. */
export function CardTitle({ title }: CardTitleProps) {
  return <bdi class="title">{showBidiControls(shortTitle(title))}</bdi>;
}
