/**
 * Per-user locations of the MCP catalog files (DESIGN.md §9), from the XDG variables with their
 * documented defaults. Pure: the caller passes the environment.
 */
import { join } from "node:path";

/** Reads one environment variable. */
export type EnvLookup = (name: string) => string | undefined;

/** The host's environment. */
const hostEnv: EnvLookup = (name) => Deno.env.get(name);

function home(env: EnvLookup): string {
  const h = env("HOME") ?? env("USERPROFILE");
  if (!h) throw new Error("HOME is not set: set HOME or the XDG_*_HOME variables");
  return h;
}

/** Where the per-user files of the service live. */
export interface UserPaths {
  /** `$XDG_CACHE_HOME/service` (default `~/.cache/service`): the cached catalog. */
  cache: string;
  /** `$XDG_CONFIG_HOME/service/mcp.json` (default `~/.config/service/mcp.json`). */
  mcpConfig: string;
  /** `$XDG_STATE_HOME/service` (default `~/.local/state/service`): health-check outcomes. */
  state: string;
}

/** The per-user paths under the XDG base directories. */
export function userPaths(env: EnvLookup = hostEnv): UserPaths {
  const cacheHome = env("XDG_CACHE_HOME") || join(home(env), ".cache");
  const configHome = env("XDG_CONFIG_HOME") || join(home(env), ".config");
  const stateHome = env("XDG_STATE_HOME") || join(home(env), ".local", "state");
  return {
    cache: join(cacheHome, "service"),
    mcpConfig: join(configHome, "service", "mcp.json"),
    state: join(stateHome, "service"),
  };
}
