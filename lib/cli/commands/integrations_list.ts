/** `service integrations list`: tracker adapters and the state of their webhooks. */
import { parseArgs } from "node:util";
import { colour, type Command } from "../command.ts";
import { loadConfig } from "../../config/load.ts";

/** The built-in tracker adapters (spec §4.2). */
const TRACKER_ADAPTERS = ["tracker_a", "tracker_b", "tracker_c", "tracker_d", "tracker_e"];

export const integrationsListCommand: Command = {
  name: "integrations list",
  summary: "tracker adapters and their webhook configuration",
  help: `Usage: service integrations list [--json] [--root DIR]

Lists the tracker adapters with their webhook state from service.yaml
(trackers.<adapter>.webhook): enabled or not, the secret variable and whether it is set now,
and the advisory public URL. Polling is the default; webhooks are opt-in per adapter.

Options:
  --json   print JSON`,
  async run(args, ctx) {
    const { values } = parseArgs({ args, options: { json: { type: "boolean", default: false } } });
    const config = await loadConfig(ctx.root);
    const names = [...new Set([...TRACKER_ADAPTERS, ...Object.keys(config?.trackers ?? {})])]
      .sort();
    const rows = names.map((name) => {
      const webhook = config?.trackers[name]?.webhook;
      return {
        adapter: name,
        configured: Boolean(config?.trackers[name]),
        webhook_enabled: webhook?.enabled ?? false,
        secret_env: webhook?.secret_env ?? null,
        secret_set: webhook ? Boolean(Deno.env.get(webhook.secret_env)) : false,
        public_url: webhook?.public_url_base
          ? `${webhook.public_url_base.replace(/\/+$/, "")}/webhooks/trackers/${name}`
          : null,
      };
    });
    if (values.json) {
      ctx.stdout(JSON.stringify({ integrations: rows }, null, 2));
      return 0;
    }
    for (const r of rows) {
      let state = r.webhook_enabled ? colour.green("webhook enabled") : "polling (webhook off)";
      if (r.webhook_enabled && !r.secret_set) {
        state = colour.yellow(`webhook enabled but ${r.secret_env} is empty: deliveries get 503`);
      }
      ctx.stdout(`${r.adapter.padEnd(10)}  ${state}${r.public_url ? `  ${r.public_url}` : ""}`);
    }
    return 0;
  },
};
