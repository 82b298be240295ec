/** The route groups `serve` mounts beyond the review-board API (each subsystem adds its own). */
import type { CreateAppOptions } from "../../routes/mod.ts";
import { mountAccessLog } from "../http/access_log.ts";
import { mountTaskApi } from "./task_routes.ts";
import "../status/parts.ts";

/** Route groups of the full server. */
export function serverMounts(): CreateAppOptions {
  return { publicRoutes: [mountAccessLog], routes: [mountTaskApi] };
}
