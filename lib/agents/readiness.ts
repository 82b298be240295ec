/**
 * What `service agents` shows: each agent adapter's readiness (binary on PATH, an API-key
 * variable set, rate-limit cooldown) and the live agent sessions (PID files plus heartbeats).
 * `adapterReadiness` and `sessionView` are pure; `collectAdapters` and `collectSessions` read the
 * environment, PATH and `.sdd/runtime/`. Key values are never read into the result, only names.
 */
import { join } from "node:path";
import type { AgentAdapter } from "./adapters/types.ts";
import { adapterByName, availableAdapters, BUILTIN_ADAPTERS } from "./adapters/mod.ts";
import { loadCooldowns } from "./cooldown.ts";
import { headlessProblem, missingApiKey, resolveBinary } from "./preflight.ts";
import { type HeartbeatRecord, type PidRecord, readHeartbeat } from "./runtime_files.ts";
import { readPidFiles } from "./pid_files.ts";
import type { WorkspacePaths } from "../workspace.ts";
import { type Quietness, quietness } from "./progress_watch.ts";

/** One adapter's readiness. */
export interface AdapterReadiness {
  name: string;
  /** True for the adapter `cli:` in service.yaml names. */
  configured: boolean;
  builtin: boolean;
  binary: string;
  /** Absolute path the PATH lookup found, or null when the binary is not on PATH. */
  binary_path: string | null;
  /** The provider key variables; any one is enough (empty: no key needed). */
  api_key_env: string[];
  /** Names (never values) of the key variables that are set. */
  api_keys_set: string[];
  /** True when a key is set, or none is needed, or a gateway key with its endpoint is set. */
  api_key_ok: boolean;
  /**
   * Why the CLI would still fail to start headless (auth selection, endpoint, trust), or null:
   * checked by the adapter against what the CLI itself requires.
   */
  headless_problem: string | null;
  /** Seconds until spawns are allowed again after a rate-limit hit (0: not blocked). */
  cooldown_remaining_s: number;
  /** Binary found, key present, headless start possible, not cooling down. */
  ready: boolean;
  /** What to do when not ready (first problem only), else null. */
  fix: string | null;
}

/** What was found for one adapter on this host. */
export interface AdapterFacts {
  binaryPath: string | undefined;
  env: Record<string, string>;
  cooldownRemainingS: number;
  configured: boolean;
  builtin: boolean;
}

/** The readiness row of `adapter` given the facts. Pure. */
export function adapterReadiness(adapter: AgentAdapter, facts: AdapterFacts): AdapterReadiness {
  const set = (k: string) => (facts.env[k] ?? "") !== "";
  const gatewayKeys = Object.entries(adapter.gatewayKeyEnv ?? {})
    .filter(([endpoint]) => set(endpoint))
    .flatMap(([endpoint, keys]) => [endpoint, ...keys]);
  const keysSet = [...new Set([...adapter.apiKeyEnv, ...gatewayKeys])].filter(set);
  const keyOk = missingApiKey(adapter, facts.env) === undefined;
  const cooldown = Math.max(0, Math.ceil(facts.cooldownRemainingS));
  const headless = keyOk ? headlessProblem(adapter, facts.env) : undefined;
  let fix: string | null = null;
  if (!facts.binaryPath) {
    fix = `install the ${adapter.name} CLI (${adapter.binary}) or add its directory to PATH`;
  } else if (!keyOk) {
    fix = `export ${adapter.apiKeyEnv[0]}=…` +
      (adapter.apiKeyEnv.length > 1 ? ` (or ${adapter.apiKeyEnv.slice(1).join(", ")})` : "");
  } else if (headless) {
    fix = headless.fix;
  } else if (cooldown > 0) {
    fix = `parked by a rate or usage limit for ${cooldown} s: lower max_agents, or name ` +
      "fallback_adapters in service.yaml so tasks start with another adapter meanwhile";
  }
  return {
    name: adapter.name,
    configured: facts.configured,
    builtin: facts.builtin,
    binary: adapter.binary,
    binary_path: facts.binaryPath ?? null,
    api_key_env: [...adapter.apiKeyEnv],
    api_keys_set: keysSet,
    api_key_ok: keyOk,
    headless_problem: headless?.problem ?? null,
    cooldown_remaining_s: cooldown,
    ready: fix === null,
    fix,
  };
}

/** Options of {@link collectAdapters}. */
export interface CollectAdaptersOptions {
  /** The configured adapter (from service.yaml), when there is a usable config. */
  configured?: AgentAdapter;
  env?: Record<string, string>;
  /** Now, in epoch seconds. */
  now?: number;
}

/**
 * Readiness of every built-in and registered adapter, plus the configured one when it is not
 * among them (a `generic` CLI), sorted by name.
 */
export async function collectAdapters(
  paths: WorkspacePaths,
  options: CollectAdaptersOptions = {},
): Promise<AdapterReadiness[]> {
  const env = options.env ?? Deno.env.toObject();
  const now = options.now ?? Date.now() / 1000;
  const cooldowns = await loadCooldowns(paths.rateLimits);
  const builtin = new Set(BUILTIN_ADAPTERS.map((a) => a.name));
  const adapters = availableAdapters().filter((n) => n !== "generic").map((n) => adapterByName(n));
  const configured = options.configured;
  if (configured && !adapters.some((a) => a.name === configured.name)) adapters.push(configured);
  const rows = await Promise.all(adapters.map(async (a) =>
    adapterReadiness(a, {
      binaryPath: await resolveBinary(a.binary, env),
      env,
      cooldownRemainingS: cooldowns.remaining(a.name, now),
      configured: a.name === configured?.name,
      builtin: builtin.has(a.name),
    })
  ));
  return rows.sort((a, b) => a.name.localeCompare(b.name));
}

/** One agent session as `service agents` shows it. */
export interface SessionView {
  session_id: string;
  task_id: string | null;
  run_id: string | null;
  adapter: string | null;
  pid: number | null;
  /** The process exists now (a dead one with a PID file left is stale). */
  alive: boolean;
  /** Epoch seconds the agent started, or null when unknown. */
  started_at: number | null;
  elapsed_s: number | null;
  /** Seconds since the agent last wrote output, null before any output. */
  last_output_age_s: number | null;
  log_bytes: number | null;
  /** Seconds since the heartbeat file was written, null without one. */
  heartbeat_age_s: number | null;
  /** Reconnecting to its model for `for_s` seconds with no progress (lib/agents/progress_watch.ts). */
  reconnecting?: { for_s: number; message: string };
}

/** What was read for one session. */
export interface SessionFacts {
  pid: Partial<PidRecord> & { session_id: string };
  heartbeat?: HeartbeatRecord;
  /** Size and mtime (epoch seconds) of the session log, when it exists. */
  log?: { bytes: number; mtime: number | null };
  alive: boolean;
  /** Now, in epoch seconds. */
  now: number;
}

function epochSeconds(v: unknown): number | null {
  if (typeof v === "number" && Number.isFinite(v)) return v;
  if (typeof v === "string") {
    const t = Date.parse(v);
    return Number.isNaN(t) ? null : Math.floor(t / 1000);
  }
  return null;
}

/** The view of one session; the log file wins over the (up to 15 s old) heartbeat. Pure. */
export function sessionView(facts: SessionFacts): SessionView {
  const { pid, heartbeat, log, now } = facts;
  const started = epochSeconds(pid.started_at);
  const hbOutput = heartbeat?.last_output_at ?? null;
  const logOutput = log && log.bytes > 0 ? log.mtime : null;
  const lastOutput = hbOutput === null ? logOutput : Math.max(hbOutput, logOutput ?? hbOutput);
  const age = (t: number | null) => (t === null ? null : Math.max(0, Math.floor(now - t)));
  return {
    session_id: pid.session_id,
    task_id: pid.task_id ?? null,
    run_id: pid.run_id ?? null,
    adapter: pid.adapter ?? null,
    pid: typeof pid.pid === "number" ? pid.pid : null,
    alive: facts.alive,
    started_at: started,
    elapsed_s: age(started),
    last_output_age_s: age(lastOutput),
    log_bytes: log?.bytes ?? heartbeat?.log_bytes ?? null,
    heartbeat_age_s: age(epochSeconds(heartbeat?.updated_at)),
    ...(facts.alive && heartbeat ? pick(quietness(heartbeat, now)) : {}),
  };
}

/** The reconnect part of a quietness (the other figures are the view's own). */
function pick(q: Quietness): Pick<SessionView, "reconnecting"> {
  return q.reconnecting ? { reconnecting: q.reconnecting } : {};
}

/** Every session with a PID file, with its heartbeat and log; unreadable PID files by path. */
export async function collectSessions(
  paths: WorkspacePaths,
  now: number = Date.now() / 1000,
): Promise<{ sessions: SessionView[]; unreadable: string[] }> {
  const agents = await readPidFiles(paths);
  const unreadable = agents.filter((a) => a.problem?.startsWith("unreadable")).map((a) => a.file);
  const sessions = await Promise.all(
    agents.filter((a) => !unreadable.includes(a.file)).map(
      async (a) => {
        const heartbeat = await readHeartbeat(paths.runtime, a.session_id);
        let log: SessionFacts["log"];
        try {
          const st = await Deno.stat(a.log_path ?? join(paths.runtime, `${a.session_id}.log`));
          log = { bytes: st.size, mtime: st.mtime ? st.mtime.getTime() / 1000 : null };
        } catch { /* no log yet */ }
        const pid = {
          session_id: a.session_id,
          task_id: a.task_id ?? undefined,
          run_id: a.run_id ?? undefined,
          adapter: a.adapter ?? undefined,
          pid: a.pid ?? undefined,
          started_at: a.started_at === null ? undefined : Date.parse(a.started_at) / 1000,
        };
        return sessionView({ pid, heartbeat, log, alive: a.alive, now });
      },
    ),
  );
  return { sessions, unreadable };
}
