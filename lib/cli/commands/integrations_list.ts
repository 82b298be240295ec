/** `service integrations list`: each tracker, how it ingests, its variables and its last events. */
import { colour, type Command } from "../command.ts";
import { loadConfig } from "../../config/load.ts";
import { BUILTIN_TRACKERS } from "../../trackers/builtin.ts";
import { type IntegrationRow, integrationRows, webhookPath } from "../../trackers/integrations.ts";
import { readTrackerRuntime } from "../../trackers/state.ts";
import type { OutcomeRecord } from "../../trackers/state.ts";
import { workspacePaths } from "../../workspace.ts";
import { parseOptions } from "./_options.ts";
import { printable } from "../../util/printable.ts";

/**
 * `service integrations list`: each tracker's polling or webhook, its variables, the URL to
 * register, its last delivery and poll.
 */
export const integrationsListCommand: Command = {
  name: "integrations list",
  summary: "trackers: polling or webhook, variables set, URL to register, last delivery and poll",
  help: `Usage: service integrations list [--json] [--root DIR]

Lists the tracker adapters (tracker_a Jira, tracker_b GitHub, tracker_c GitLab, tracker_d Linear,
tracker_e Plane, and any added with trackers.<name>.module) with how each takes work: polling
(the default, when trackers.<name>.project is set) and/or webhooks (trackers.<name>.webhook).
For each: whether its secret and token variables are set (never their values), the URL to
register with the tracker (webhook.public_url_base + ${webhookPath("<name>")}), and the last
delivery, poll and write-back comment with their outcomes (.sdd/runtime/trackers.json).
See docs/trackers.md.

Options:
  --json   print JSON ({"integrations": [...]})`,
  async run(args, ctx) {
    const values = parseOptions("integrations list", args, { json: { type: "boolean" } });
    const config = await loadConfig(ctx.root);
    const runtime = await readTrackerRuntime(workspacePaths(ctx.root).trackerState);
    const rows = integrationRows(config, {
      builtins: BUILTIN_TRACKERS,
      env: (n) => Deno.env.get(n),
      runtime,
    });
    if (values.json) {
      ctx.stdout(JSON.stringify({ integrations: rows }, null, 2));
      return 0;
    }
    for (const r of rows) for (const line of describe(r)) ctx.stdout(line);
    return 0;
  },
};

function describe(r: IntegrationRow): string[] {
  const head = `${r.adapter}${r.product ? ` (${r.product})` : ""}`;
  if (!r.configured) {
    return [
      `${head}: ${colour.dim("not configured (trackers." + r.adapter + " in service.yaml)")}`,
    ];
  }
  const lines = [
    `${head}: ${r.mode.startsWith("idle") ? colour.yellow(r.mode) : colour.green(r.mode)}`,
  ];
  if (r.webhook_enabled) {
    lines.push(
      r.secret_set
        ? `  webhook secret ${r.secret_env}: set`
        : colour.yellow(`  webhook secret ${r.secret_env}: EMPTY — deliveries get 503; set it`),
    );
    lines.push(
      r.webhook_url
        ? `  register: ${r.webhook_url}`
        : `  register: <public URL>${
          webhookPath(r.adapter)
        } (set webhook.public_url_base, or use \`service preview\`)`,
    );
  } else if (r.secret_env) {
    lines.push(`  webhook: disabled (deliveries get 503)`);
  }
  if (r.token_env) {
    lines.push(`  token ${r.token_env}: ${r.token_set ? "set" : "not set"}`);
  }
  if (r.product) {
    lines.push(
      r.project
        ? `  project: ${r.project} (tickets of other projects are ignored)`
        : colour.yellow("  project: not set — tickets of any project its secret signs are taken"),
    );
  }
  if (r.missed_deliveries) {
    const text = `  deliveries sent while the service is down: ${r.missed_deliveries}`;
    lines.push(r.missed_deliveries.startsWith("lost") ? colour.yellow(text) : text);
  }
  if (r.problem) lines.push(colour.yellow(`  cannot poll: ${printable(r.problem)}`));
  if (r.comment_on_land) lines.push("  comments on tickets when their task lands");
  const moves = Object.entries(r.move_to ?? {});
  if (moves.length > 0) {
    lines.push(`  moves tickets: ${printable(moves.map(([e, s]) => `${e} → ${s}`).join(", "))}`);
  }
  lines.push(`  last delivery: ${outcome(r.last_delivery)}`);
  if (r.polling) lines.push(`  last poll: ${outcome(r.last_poll)}`);
  else if (r.last_poll) lines.push(`  last startup replay: ${outcome(r.last_poll)}`);
  if (r.comment_on_land) lines.push(`  last comment: ${outcome(r.last_comment)}`);
  if (moves.length > 0) lines.push(`  last move: ${outcome(r.last_move)}`);
  return lines;
}

function outcome(o: OutcomeRecord | null): string {
  if (!o) return "none yet";
  const status = o.status ? ` ${o.status}` : "";
  // The detail quotes the tracker (a ticket's reference, its API's error): escaped.
  const text = printable(`${o.at}${status} ${o.outcome}${o.detail ? ` — ${o.detail}` : ""}`);
  return o.outcome === "failed" || (o.status ?? 200) >= 400 ? colour.red(text) : text;
}
