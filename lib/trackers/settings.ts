/**
 * `trackers.<name>` resolved with its defaults, and the one rule of how a tracker ingests:
 * polling when it names a `project` (and `polling` is not false), webhooks when
 * `webhook.enabled`; both may be on.
 */
import type { ServiceConfig } from "../config/schema.ts";
import type { ApiAccess, TrackerAdapter } from "./adapter.ts";
import type { TicketMoves } from "./move.ts";

/** Default seconds between polls. */
const DEFAULT_POLL_INTERVAL_S = 60;

/** One tracker's settings with defaults applied. */
export interface TrackerSettings {
  name: string;
  /** The built-in adapter, when the name is one. */
  adapter?: TrackerAdapter;
  webhook?: { enabled: boolean; secretEnv: string; publicUrlBase?: string };
  /** Interval polling is on. */
  polling: boolean;
  pollIntervalS: number;
  project?: string;
  apiUrl?: string;
  tokenEnv: string;
  emailEnv?: string;
  /** Role of tasks without a matching `label_roles` entry. */
  role: string;
  labels?: string[];
  labelRoles: [label: string, role: string][];
  commentOnLand: boolean;
  /** The workflow state a ticket moves to when its task is claimed, lands or fails for good. */
  moveTo: TicketMoves;
  module?: string;
}

/** The default token variable of a tracker: `tracker_b` → `TRACKER_B_TOKEN`. */
function defaultTokenEnv(name: string): string {
  return `${name.toUpperCase()}_TOKEN`;
}

/** Every configured tracker's settings. */
export function trackerSettings(
  config: ServiceConfig,
  builtins: ReadonlyMap<string, TrackerAdapter>,
): TrackerSettings[] {
  const firstRole = Object.keys(config.roles)[0];
  return Object.entries(config.trackers).map(([name, t]) => {
    const adapter = builtins.get(name);
    return {
      name,
      adapter,
      webhook: t.webhook && {
        enabled: t.webhook.enabled,
        secretEnv: t.webhook.secret_env,
        publicUrlBase: t.webhook.public_url_base,
      },
      polling: t.polling !== false && t.project !== undefined && adapter !== undefined,
      pollIntervalS: t.poll_interval_s ?? DEFAULT_POLL_INTERVAL_S,
      project: t.project,
      apiUrl: t.api_url ?? adapter?.defaultApiUrl,
      tokenEnv: t.token_env ?? defaultTokenEnv(name),
      emailEnv: t.email_env,
      role: t.role ?? firstRole,
      labels: t.labels,
      labelRoles: Object.entries(t.label_roles ?? {}),
      commentOnLand: t.comment_on_land,
      moveTo: { ...t.move_to },
      module: t.module,
    };
  });
}

/** How a tracker ingests, in words (`integrations list`). */
export function ingestMode(s: TrackerSettings): string {
  const parts: string[] = [];
  if (s.polling) parts.push(`polling every ${s.pollIntervalS}s`);
  if (s.webhook?.enabled) parts.push("webhook");
  if (parts.length > 0) return parts.join(" + ");
  if (!s.adapter && !s.module) return "idle: not a built-in tracker and no module";
  return s.adapter
    ? `idle: set project (${s.adapter.projectHint}) to poll, or enable the webhook`
    : "idle: enable the webhook";
}

/** Why a tracker cannot call its API now (undefined when it can). */
export function apiProblem(
  s: TrackerSettings,
  env: (name: string) => string | undefined,
): string | undefined {
  if (!s.adapter) return `${s.name} is not a built-in tracker: it has no API client`;
  if (!s.project) return `trackers.${s.name}.project is not set (${s.adapter.projectHint})`;
  if (!s.apiUrl) return `trackers.${s.name}.api_url is not set (${s.adapter.projectHint})`;
  if (!s.adapter.tokenOptional && !env(s.tokenEnv)) return `${s.tokenEnv} is empty`;
  if (s.emailEnv && !env(s.emailEnv)) return `${s.emailEnv} is empty`;
  return undefined;
}

/**
 * Why a webhook-only tracker (`polling: false`, webhook on) cannot run the startup poll that
 * recovers deliveries sent while the service was down, or undefined when it can: it needs the
 * API (`project`, `api_url`) and a token. Trackers that poll need no such replay.
 */
export function startupReplayProblem(
  s: TrackerSettings,
  env: (name: string) => string | undefined,
): string | undefined {
  if (s.polling || !s.webhook?.enabled) return undefined;
  const problem = apiProblem(s, env);
  if (problem) return problem;
  return env(s.tokenEnv) ? undefined : `${s.tokenEnv} is empty`;
}

/** Whether `s` is webhook-only with what the startup replay needs. */
export function replaysAtStartup(
  s: TrackerSettings,
  env: (name: string) => string | undefined,
): boolean {
  return !s.polling && Boolean(s.webhook?.enabled) && startupReplayProblem(s, env) === undefined;
}

/** How `s`'s API is called now (the token is read per call, so rotation needs no restart). */
export function apiAccess(
  s: TrackerSettings,
  env: (name: string) => string | undefined,
  io: { fetch: typeof fetch; now: () => number } = { fetch: globalThis.fetch, now: Date.now },
): ApiAccess {
  return {
    fetch: io.fetch,
    now: io.now,
    apiUrl: s.apiUrl ?? "",
    project: s.project ?? "",
    token: env(s.tokenEnv) ?? "",
    email: s.emailEnv ? env(s.emailEnv) : undefined,
  };
}
