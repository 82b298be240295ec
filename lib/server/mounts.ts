/** The route groups `serve` mounts beyond the review-board API (each subsystem adds its own). */
import type { CreateAppOptions } from "../../routes/mod.ts";
import { boardPageMount, eventsMount } from "./board_mounts.ts";

/** Route groups of the full server. */
export function serverMounts(): CreateAppOptions {
  return { publicRoutes: [boardPageMount], routes: [eventsMount()] };
}

/** Route groups of `gui serve`: the board page and `/events`, but not the task API. */
export function guiMounts(): CreateAppOptions {
  return { publicRoutes: [boardPageMount], routes: [eventsMount()] };
}
