/**
 * The environment allow-list of an agent process (spec §5, DESIGN.md §7). Pure: the caller passes
 * the service's own environment and gets back exactly what the agent may see.
 */
import type { AgentAdapter } from "./adapters/types.ts";

/**
 * Variables every agent gets when the service has them. `TZ` too: a CLI prints a limit's reset as
 * a local time ("try again at 3:42 PM") that the service reads in its own zone.
 */
export const BASE_ALLOWED_ENV = [
  "PATH",
  "HOME",
  "USER",
  "LANG",
  "TERM",
  "TMPDIR",
  "TZ",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "NO_PROXY",
  "ALL_PROXY",
  "http_proxy",
  "https_proxy",
  "no_proxy",
  "all_proxy",
] as const;

/** The `SERVICE_*` variables that tell the agent where to report. */
export interface ServiceVars {
  serverUrl: string;
  /** Bearer token of the task server; forwarded only when set. */
  token?: string;
  runId: string;
  taskId: string;
  sessionId: string;
  /** Ports leased to the session (DESIGN.md §13): `PORT` is the first, `SERVICE_PORTS` all. */
  ports?: readonly number[];
}

/** Options of `agentEnvironment`. */
export interface AgentEnvironmentOptions {
  /** Operating system; `windows` adds `PATHEXT` and matches names case-insensitively. Default: the host's. */
  os?: typeof Deno.build.os;
  /** More names to forward (`agent_env` in service.yaml, top level and per role). */
  extraNames?: readonly string[];
}

/** Every variable name the adapter may receive from the service's environment. */
function adapterEnvNames(adapter: AgentAdapter): string[] {
  const gateway = Object.values(adapter.gatewayKeyEnv ?? {}).flat();
  return [...new Set([...adapter.apiKeyEnv, ...adapter.passEnv, ...gateway])];
}

/**
 * The environment of an agent process: PATH, HOME, USER, LANG, LC_*, TERM, TMPDIR, the proxy
 * variables, `PATHEXT` on Windows, the adapter's key and endpoint variables, the names listed in
 * `agent_env`, the `SERVICE_*` variables, and `PORT` and `SERVICE_PORTS` when the session leased
 * ports (in place of any `PORT` that `agent_env` forwards). Nothing else of `processEnv` passes.
 */
export function agentEnvironment(
  adapter: AgentAdapter,
  processEnv: Readonly<Record<string, string>>,
  serviceVars: ServiceVars,
  options: AgentEnvironmentOptions = {},
): Record<string, string> {
  const windows = (options.os ?? Deno.build.os) === "windows";
  const allowed = new Set<string>([
    ...BASE_ALLOWED_ENV,
    ...adapterEnvNames(adapter),
    ...(options.extraNames ?? []),
  ]);
  if (windows) allowed.add("PATHEXT");
  const norm = (k: string) => (windows ? k.toUpperCase() : k);
  const allowedNorm = new Set([...allowed].map(norm));
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(processEnv)) {
    if (allowedNorm.has(norm(key)) || key.startsWith("LC_")) env[key] = value;
  }
  env.SERVICE_SERVER_URL = serviceVars.serverUrl;
  if (serviceVars.token) env.SERVICE_TOKEN = serviceVars.token;
  env.SERVICE_RUN_ID = serviceVars.runId;
  env.SERVICE_TASK_ID = serviceVars.taskId;
  env.SERVICE_SESSION_ID = serviceVars.sessionId;
  const ports = serviceVars.ports ?? [];
  if (ports.length > 0) {
    env.PORT = String(ports[0]);
    env.SERVICE_PORTS = ports.join(",");
  }
  return env;
}
