/**
 * The server's own settings, from the validated configuration (`host`, `port`, `auth.tokens`,
 * the `server` block) and `SERVICE_PORT`; defaults when the workspace has no `service.yaml`.
 * Pure: `loadWorkspaceConfig` (lib/config/load.ts) reads and validates the file once.
 */
import type { TokenSpec } from "../auth/tokens.ts";
import { UserFacingError } from "../errors.ts";
import { type ServerBlock, ServerSchema, type ServiceConfig } from "./schema.ts";

/** Default bind of the task server (spec §1). */
const DEFAULT_HOST = "127.0.0.1";
/** Default port (spec §1); `SERVICE_PORT` overrides the config. */
const DEFAULT_PORT = 8052;

/** Settings the HTTP server needs. */
export interface ServerSettings {
  host: string;
  port: number;
  /** Where `port` came from (a chosen port is never silently replaced: lib/server/port_policy.ts). */
  portSource: "SERVICE_PORT" | "service.yaml" | "default";
  tokens: TokenSpec[];
  /** The `server` block: public URL, allowed origins, connection limits. */
  server: ServerBlock;
}

/** `SERVICE_PORT` is set to something that is not a port number. */
export class PortVariableError extends UserFacingError {
  constructor(readonly value: string) {
    super(
      `SERVICE_PORT=${JSON.stringify(value)} is not a port number (0-65535)`,
      1,
      "set SERVICE_PORT to a port number from 0 to 65535, or unset it to use `port:` of " +
        "service.yaml (default 8052)",
    );
    this.name = "PortVariableError";
  }
}

/** The server's settings from `config` (undefined: no service.yaml, the defaults) and `env`. */
export function serverSettings(
  config: ServiceConfig | undefined,
  env: Record<string, string | undefined>,
): ServerSettings {
  const { port, portSource } = resolvePort(config?.port, env);
  return {
    host: config?.host ?? DEFAULT_HOST,
    port,
    portSource,
    tokens: config?.auth.tokens ?? [],
    server: config?.server ?? ServerSchema.parse({}),
  };
}

/** The port from `SERVICE_PORT`, else the configured one, else the default, with its source. */
export function resolvePort(
  configured: number | undefined,
  env: Record<string, string | undefined>,
): Pick<ServerSettings, "port" | "portSource"> {
  if (env.SERVICE_PORT) {
    const port = Number(env.SERVICE_PORT);
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      throw new PortVariableError(env.SERVICE_PORT);
    }
    return { port, portSource: "SERVICE_PORT" };
  }
  if (configured !== undefined) return { port: configured, portSource: "service.yaml" };
  return { port: DEFAULT_PORT, portSource: "default" };
}
