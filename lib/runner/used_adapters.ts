/**
 * An adapter per role or per task (issue 35): `roles.<role>.cli` (with its own `cli_command`
 * for `generic`), and `cli` on a plan step or a task. Every adapter the run's roles and plan
 * steps name is preflighted before `run_started`, like the configured one: one that cannot start
 * refuses the run, naming who uses it and the fix. A task created later through the task API
 * naming another adapter has it checked before its first agent: an adapter that cannot start
 * fails that attempt with the reason, never falls back silently. Under `isolation: container`
 * the agent image holds the configured adapter's CLI only, so no other adapter may be named.
 */
import { preflight } from "../agents/preflight.ts";
import { namedAdapter, roleAdapterName } from "../config/load.ts";
import type { ServiceConfig } from "../config/schema.ts";
import type { UserFacingError } from "../errors.ts";
import type { ReadyAdapter } from "../agent_session/lane.ts";
import { RunError } from "./run_checks.ts";
import { AdapterNotReadyError } from "../orchestrator/adapter_not_ready.ts";

/**
 * The adapters other than the configured `cli` that the roles and `tasks` name, each with who
 * names it first (`roles.docs.cli`, `plan step s1 (cli)`). Pure.
 */
export function usedAdapters(
  config: ServiceConfig,
  tasks: readonly { id: string; cli?: string }[] = [],
): Map<string, string> {
  const used = new Map<string, string>();
  for (const role of Object.keys(config.roles)) {
    const name = roleAdapterName(config, role);
    if (name !== config.cli && !used.has(name)) used.set(name, `roles.${role}.cli`);
  }
  for (const t of tasks) {
    if (t.cli && t.cli !== config.cli && !used.has(t.cli)) used.set(t.cli, `task ${t.id} (cli)`);
  }
  return used;
}

/** What the checks here read. */
export interface UsedAdapterOptions {
  env: Record<string, string>;
  /** The workspace (a relative binary path is relative to it). */
  root: string;
  /** Agents run in containers (only the configured adapter's CLI is there). */
  isolation: boolean;
}

/** Check that `name` (named by `who`) can start agents here; its ready form, or why not. */
async function readyOne(
  config: ServiceConfig,
  name: string,
  who: string,
  o: UsedAdapterOptions,
): Promise<ReadyAdapter | { problem: string; fix: string }> {
  if (o.isolation) {
    return {
      problem: `${who} names adapter ${name}, which cannot run under isolation: container (the ` +
        `agent image holds ${config.cli}'s CLI only)`,
      fix: `remove ${who}, or run without isolation: container`,
    };
  }
  try {
    const adapter = namedAdapter(config, name);
    const { launch } = await preflight(adapter, { env: o.env, cwd: o.root, warn: () => {} });
    return { adapter, launch };
  } catch (e) {
    const fix = (e as UserFacingError).fix ?? "";
    return {
      problem: `adapter ${name} (${who}) cannot start agents: ${(e as Error).message}`,
      fix: fix || `fix ${who}`,
    };
  }
}

/**
 * Every adapter of `used` preflighted; the first that cannot start refuses the run (a
 * {@link RunError} naming who uses it and the fix).
 */
export async function readyUsedAdapters(
  config: ServiceConfig,
  used: ReadonlyMap<string, string>,
  o: UsedAdapterOptions,
): Promise<ReadyAdapter[]> {
  const ready: ReadyAdapter[] = [];
  for (const [name, who] of used) {
    const one = await readyOne(config, name, who, o);
    if ("problem" in one) throw new RunError(one.problem, 1, one.fix);
    ready.push(one);
  }
  return ready;
}

/**
 * The adapter a task names that the run did not check at start, checked once on first use
 * (cached); throws {@link AdapterNotReadyError} when it cannot start agents.
 */
export function adapterResolver(
  config: ServiceConfig,
  o: UsedAdapterOptions,
): (name: string, taskId: string) => Promise<ReadyAdapter> {
  const cache = new Map<string, Promise<ReadyAdapter | { problem: string; fix: string }>>();
  return async (name, taskId) => {
    let found = cache.get(name);
    if (!found) cache.set(name, found = readyOne(config, name, `task ${taskId} (cli)`, o));
    const one = await found;
    if ("problem" in one) throw new AdapterNotReadyError(`${one.problem}; fix: ${one.fix}`);
    return one;
  };
}
