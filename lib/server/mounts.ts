/** The route groups `serve` mounts beyond the review-board API (each subsystem adds its own). */
import type { CreateAppOptions } from "../../routes/mod.ts";
import { boardPageMount, eventsMount } from "./board_mounts.ts";
import { mountAccessLog } from "../http/access_log.ts";
import { mountTaskApi } from "./task_routes.ts";
import { mountWebhooks } from "./webhook_routes.ts";
import "../status/parts.ts";

/** Route groups of the full server: access log, board page, task API, `/events`. */
export function serverMounts(): CreateAppOptions {
  return {
    publicRoutes: [mountAccessLog, boardPageMount, mountWebhooks],
    routes: [mountTaskApi, eventsMount()],
  };
}

/** Route groups of `gui serve`: the board page and `/events`, but not the task API. */
export function guiMounts(): CreateAppOptions & { taskStore: false } {
  return {
    publicRoutes: [mountAccessLog, boardPageMount],
    routes: [eventsMount()],
    taskStore: false,
  };
}
