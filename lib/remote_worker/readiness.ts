/**
 * What a worker can start, checked when it starts (issue 35: a worker without its provider key
 * claimed tasks and burnt every attempt in a second): for each adapter its clone's service.yaml
 * names (`cli`, and the `fallback_adapters` at the top level and per role), the launch check
 * `service run` makes — the CLI on PATH and its key, or the container probe under `isolation:
 * container` — and where its agents run. The registration carries the result: tasks that need
 * an adapter the worker cannot start never reach it, and it says what it lacks.
 */
import type { ServiceConfig } from "../config/schema.ts";
import type { UserFacingError } from "../errors.ts";
import type { RunLaunch } from "../agent_session/run_isolation.ts";
import type { AdapterReadiness } from "../workers/protocol.ts";

/** The adapters a worker may be asked to run, by its service.yaml (pure). */
export function adapterNames(config: ServiceConfig): string[] {
  return [
    ...new Set([
      config.cli,
      ...config.fallback_adapters,
      ...Object.values(config.roles).flatMap((r) => r.fallback_adapters ?? []),
    ]),
  ];
}

/** Check each adapter with `launch` (the worker's own launch check, cached per adapter). */
export async function checkAdapters(
  config: ServiceConfig,
  launch: (adapter: string) => Promise<RunLaunch>,
): Promise<AdapterReadiness[]> {
  const out: AdapterReadiness[] = [];
  for (const name of adapterNames(config)) {
    try {
      const ready = await launch(name);
      out.push({ name, ready: true, isolation: ready.isolation?.label ?? "worktree" });
    } catch (e) {
      const fix = (e as UserFacingError).fix;
      out.push({
        name,
        ready: false,
        problem: `${(e as Error).message}${fix ? ` (${fix})` : ""}`.slice(0, 2000),
      });
    }
  }
  return out;
}
