/**
 * What `service integrations list` shows for each tracker (pure over the configuration, the
 * environment and `.sdd/runtime/trackers.json`): how it ingests, whether its secret and token
 * variables are set (never their values), the URL to register, and the last delivery, poll,
 * comment and ticket move with their outcomes.
 */
import type { ServiceConfig } from "../config/schema.ts";
import type { TrackerAdapter } from "./adapter.ts";
import type { TrackerSettings } from "./settings.ts";
import { apiProblem, ingestMode, startupReplayProblem, trackerSettings } from "./settings.ts";
import type { OutcomeRecord, TrackerRuntimeFile } from "./state.ts";
import type { TicketMoves } from "./move.ts";

/** One row of `integrations list --json`. */
export interface IntegrationRow {
  adapter: string;
  product: string | null;
  configured: boolean;
  /** `polling every 60s`, `webhook`, `polling every 60s + webhook` or `idle: …`. */
  mode: string;
  polling: boolean;
  /** The one project whose tickets are taken and commented on (null: any the secret signs). */
  project: string | null;
  webhook_enabled: boolean;
  /**
   * What becomes of deliveries sent while the service is down: `caught up by polling`,
   * `replayed at start`, or `lost: <why>` (null without a webhook).
   */
  missed_deliveries: string | null;
  secret_env: string | null;
  /** Whether the secret (variable or `<secret_env>_FILE`) is available now. */
  secret_set: boolean;
  token_env: string | null;
  token_set: boolean;
  /** Why polling cannot call the API now (null when it can or does not poll). */
  problem: string | null;
  /** `public_url_base` + `/webhooks/trackers/<name>` (null without a base). */
  webhook_url: string | null;
  comment_on_land: boolean;
  last_delivery: OutcomeRecord | null;
  last_poll: OutcomeRecord | null;
  last_comment: OutcomeRecord | null;
  /** `trackers.<name>.move_to`: the state per event (`{}` when tickets are not moved). */
  move_to: TicketMoves;
  last_move: OutcomeRecord | null;
}

/** What becomes of deliveries sent while the service is down (null without a webhook). */
function missedDeliveries(
  s: TrackerSettings,
  env: (name: string) => string | undefined,
): string | null {
  if (!s.webhook?.enabled) return null;
  if (s.polling) return "caught up by polling";
  const problem = s.adapter
    ? startupReplayProblem(s, env)
    : `${s.name} has no API client to replay them`;
  return problem ? `lost: ${problem}` : "replayed at start";
}

/** The webhook path of a tracker. */
export function webhookPath(name: string): string {
  return `/webhooks/trackers/${name}`;
}

/** What {@link integrationRows} reads besides the configuration. */
export interface IntegrationSources {
  /** The built-in trackers by name. */
  builtins: ReadonlyMap<string, TrackerAdapter>;
  /** The environment (whether a secret or token variable is set). */
  env: (name: string) => string | undefined;
  /** What the running server recorded of each tracker. */
  runtime: TrackerRuntimeFile;
}

/** Rows for the built-in trackers and every configured one, sorted by name. */
export function integrationRows(
  config: ServiceConfig | undefined,
  { builtins, env, runtime }: IntegrationSources,
): IntegrationRow[] {
  const settings = config ? trackerSettings(config, builtins) : [];
  const byName = new Map(settings.map((s) => [s.name, s]));
  const names = [...new Set([...builtins.keys(), ...byName.keys()])].sort();
  return names.map((name) => {
    const s = byName.get(name);
    const secretEnv = s?.webhook?.secretEnv ?? null;
    const facts = runtime[name] ?? {};
    const base = s?.webhook?.publicUrlBase?.replace(/\/+$/, "");
    return {
      adapter: name,
      product: builtins.get(name)?.product ?? null,
      configured: s !== undefined,
      mode: s ? ingestMode(s) : "not configured",
      polling: s?.polling ?? false,
      project: s?.project ?? null,
      webhook_enabled: s?.webhook?.enabled ?? false,
      missed_deliveries: s ? missedDeliveries(s, env) : null,
      secret_env: secretEnv,
      secret_set: secretEnv !== null && Boolean(env(secretEnv) || env(`${secretEnv}_FILE`)),
      token_env: s?.adapter ? s.tokenEnv : null,
      token_set: s?.adapter ? Boolean(env(s.tokenEnv)) : false,
      problem: s?.polling ? apiProblem(s, env) ?? null : null,
      webhook_url: base ? `${base}${webhookPath(name)}` : null,
      comment_on_land: s?.commentOnLand ?? false,
      last_delivery: facts.last_delivery ?? null,
      last_poll: facts.last_poll ?? null,
      last_comment: facts.last_comment ?? null,
      move_to: s?.moveTo ?? {},
      last_move: facts.last_move ?? null,
    };
  });
}
