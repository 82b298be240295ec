/** Bounds of what an operator sends from the board (the islands and lib/operator import this). */

/** Longest follow-up, in characters. */
export const MAX_FOLLOW_UP = 4000;
