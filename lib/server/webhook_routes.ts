/** The webhook mount (spec §4, §5): public (no bearer token), one route per tracker name. */
import type { Hono } from "hono";
import type { AppEnv } from "../http/context.ts";
import * as webhook from "../../routes/webhooks/trackers/[adapter_name].ts";

/** Mount `POST /webhooks/trackers/:adapter_name` on `app`. */
export function mountWebhooks(app: Hono<AppEnv>): void {
  app.post("/webhooks/trackers/:adapter_name", webhook.POST);
}
