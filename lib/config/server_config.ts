/**
 * The server's own settings from `service.yaml`: `host`, `port`, `auth.tokens`. The full
 * configuration schema (spec §2.11, `lib/config/schema.ts`, `loadConfig`) validates the whole
 * file; this reader stays lenient so the server's own keys are usable on their own.
 */
import { z } from "zod";
import { parse as parseYaml } from "yaml";
import { join } from "node:path";
import type { TokenSpec } from "../auth/tokens.ts";
import { type ServerBlock, ServerSchema, TokenSpecSchema } from "./schema.ts";

/** Default bind of the task server (spec §1). */
const DEFAULT_HOST = "127.0.0.1";
/** Default port (spec §1); `SERVICE_PORT` overrides the config. */
const DEFAULT_PORT = 8052;

const ServerKeys = z.looseObject({
  host: z.string().min(1).optional(),
  port: z.number().int().min(0).max(65535).optional(),
  auth: z.strictObject({ tokens: z.array(TokenSpecSchema).default([]) }).optional(),
  server: ServerSchema.optional(),
});

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

/** A configuration problem with where it is and how to fix it. */
class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ValidationError";
  }
}

/** Read server settings from `<root>/service.yaml` (absent file: defaults), then `SERVICE_PORT`. */
export async function loadServerSettings(
  root: string,
  env = Deno.env.toObject(),
): Promise<ServerSettings> {
  let raw: unknown = {};
  const file = join(root, "service.yaml");
  try {
    raw = parseYaml(await Deno.readTextFile(file)) ?? {};
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) {
      throw new ConfigError(`${file}: ${(e as Error).message}`);
    }
  }
  const parsed = ServerKeys.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ConfigError(`${file}: ${issue.path.join(".")}: ${issue.message}`);
  }
  const { port, portSource } = resolvePort(parsed.data.port, env);
  return {
    host: parsed.data.host ?? DEFAULT_HOST,
    port,
    portSource,
    tokens: parsed.data.auth?.tokens ?? [],
    server: parsed.data.server ?? ServerSchema.parse({}),
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
      throw new ConfigError(
        `SERVICE_PORT=${JSON.stringify(env.SERVICE_PORT)} is not a port number (0-65535)`,
      );
    }
    return { port, portSource: "SERVICE_PORT" };
  }
  if (configured !== undefined) return { port: configured, portSource: "service.yaml" };
  return { port: DEFAULT_PORT, portSource: "default" };
}
