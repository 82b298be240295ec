/** Route groups of the review board page: the HTML page and its bundle, and `/events`. */
import { bearerAuth } from "../auth/middleware.ts";
import type { RouteMount } from "../../routes/mod.ts";
import * as page from "../../routes/dashboard/review-board.ts";
import * as bundle from "../../routes/static/[file].ts";
import { eventsHandler, type EventsOptions } from "../../routes/events.ts";

/** The board page and its static bundle: no data in either, so no token (DESIGN.md §6). */
export const boardPageMount: RouteMount = (app) => {
  app.get("/dashboard/review-board", page.GET);
  app.get("/dashboard/review-board/", page.GET);
  app.get("/static/:file", bundle.GET);
};

/** `GET /events`, behind bearer auth that also accepts `?access_token=` (EventSource). */
export function eventsMount(options: EventsOptions = {}): RouteMount {
  return (app, ctx) => {
    app.use("/events", bearerAuth({ specs: ctx.tokenSpecs, queryParam: "access_token" }));
    app.get("/events", eventsHandler(options));
  };
}
