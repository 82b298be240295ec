/**
 * The fallback adapters a run can use (DESIGN.md §15): every adapter named by `fallback_adapters`
 * (top level or a role's) other than `cli`, preflighted like the configured one. One that cannot
 * start — its CLI is not installed, its key is not set — is left out of every role's chain, and
 * the run says why once; it is never fatal (the configured adapter is what the run needs).
 */
import { preflight } from "../agents/preflight.ts";
import { namedAdapter } from "../config/load.ts";
import type { ServiceConfig } from "../config/schema.ts";
import type { UserFacingError } from "../errors.ts";
import type { ReadyAdapter } from "./agent_pool.ts";

/** What {@link readyFallbacks} reads. */
export interface FallbackOptions {
  env: Record<string, string>;
  /** The workspace (a relative binary path is relative to it). */
  root: string;
  /** Told once per fallback that cannot start. */
  warn: (line: string) => void;
  /**
   * False when this machine starts no agent (`max_agents: 0`): every fallback is named to the
   * workers, which check that they can start it.
   */
  ownAgents?: boolean;
}

function fallbackNames(config: ServiceConfig): Set<string> {
  const names = new Set([
    ...config.fallback_adapters,
    ...Object.values(config.roles).flatMap((r) => r.fallback_adapters ?? []),
  ]);
  names.delete(config.cli);
  return names;
}

/**
 * Under `isolation: container` no fallback is ready: the agent image holds the configured
 * adapter's CLI only, and a fallback must never run as a host process (DESIGN.md §14). Says so
 * once when fallbacks are configured.
 */
export function containerFallbacks(
  config: ServiceConfig,
  warn: (line: string) => void,
): ReadyAdapter[] {
  const names = [...fallbackNames(config)];
  if (names.length > 0) {
    warn(
      `fallback adapters ${names.join(", ")} are not used under isolation: container (the ` +
        `agent image holds ${config.cli}'s CLI only); tasks wait for ${config.cli} instead`,
    );
  }
  return [];
}

/** The fallback adapters of `config` that can start agents, in the order they are named. */
export async function readyFallbacks(
  config: ServiceConfig,
  options: FallbackOptions,
): Promise<ReadyAdapter[]> {
  const names = fallbackNames(config);
  const ready: ReadyAdapter[] = [];
  for (const name of names) {
    const adapter = namedAdapter(config, name);
    if (options.ownAgents === false) {
      ready.push({ adapter, launch: { command: adapter.binary, prefixArgs: [] } });
      continue;
    }
    try {
      const { launch } = await preflight(adapter, {
        env: options.env,
        cwd: options.root,
        warn: () => {},
      });
      ready.push({ adapter, launch });
    } catch (e) {
      const fix = (e as UserFacingError).fix;
      options.warn(
        `fallback adapter ${name} cannot start: ${(e as Error).message}${
          fix ? ` (${fix})` : ""
        }; tasks do not fall back to it`,
      );
    }
  }
  return ready;
}
