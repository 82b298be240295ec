/** Bounds of what an operator sends from the board (the islands import this; it has no I/O). */

/** Longest follow-up, in characters. */
export const MAX_FOLLOW_UP = 4000;
