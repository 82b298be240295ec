/** The route groups `serve` mounts beyond the review-board API (each subsystem adds its own). */
import type { CreateAppOptions } from "../../routes/mod.ts";

/** Route groups of the full server. */
export function serverMounts(): CreateAppOptions {
  return { publicRoutes: [], routes: [] };
}
