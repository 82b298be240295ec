/**
 * Where a run's agents run, decided before `run_started`: as host processes (the CLI found on
 * the host's PATH by preflight) or, under `isolation: container`, in containers — the probe of
 * lib/container/probe.ts passes or the run stops with its `ContainerError`, never falling back
 * to host processes (DESIGN.md §14); the CLI is then the one inside the image.
 */
import type { AgentAdapter } from "../agents/adapters/types.ts";
import { preflight, preflightKeys, type PreflightResult } from "../agents/preflight.ts";
import type { ServiceConfig } from "../config/schema.ts";
import { type ContainerIsolation, probeIsolation } from "../container/probe.ts";
import { containerSettings } from "../container/settings.ts";
import { settleLeftSessions, sweepContainers } from "../container/reap.ts";
import { reclaimHandedTrees } from "../container/tree_runner.ts";

/** How the run's agents start. */
export interface RunLaunch {
  launch: PreflightResult["launch"];
  /** Present under `isolation: container`. */
  isolation?: ContainerIsolation;
}

/** Options of {@link runLaunch}. */
export interface RunLaunchOptions {
  root: string;
  /** `.sdd/runtime`: containers' session directories left by an orchestrator that died. */
  runtimeDir: string;
  env: Record<string, string>;
  out: (line: string) => void;
  /**
   * False when this machine starts no agent of its own (`max_agents: 0`: every task runs on a
   * remote worker, which checks its own CLI and keys): the CLI and its provider key are not
   * required here. Under `isolation: container` the image is still probed (gates run in it).
   */
  ownAgents?: boolean;
}

/** Check that the run's agents can start, where `config.isolation` says. */
export async function runLaunch(
  config: ServiceConfig,
  adapter: AgentAdapter,
  o: RunLaunchOptions,
): Promise<RunLaunch> {
  const warn = (m: string) => o.out(`warning: ${m}`);
  // No run is live here (decideRunStart refused otherwise): what containers left is brought back.
  const settleLeft = async () => {
    for (const p of await settleLeftSessions(o.runtimeDir)) warn(`container work kept: ${p}`);
    for (const p of await reclaimHandedTrees(o.runtimeDir)) {
      warn(`a tree handed to a container's user was not given back: ${p}`);
    }
  };
  const own = o.ownAgents ?? true;
  if (config.isolation !== "container") {
    await settleLeft();
    if (!own) return { launch: { command: adapter.binary, prefixArgs: [] } };
    const checked = await preflight(adapter, { env: o.env, cwd: o.root, workdir: o.root, warn });
    return { launch: checked.launch };
  }
  if (own) preflightKeys(adapter, { env: o.env, warn });
  const settings = containerSettings(config);
  const isolation = await probeIsolation({
    settings,
    env: o.env,
    binary: adapter.binary,
    cli: adapter.container,
    endpoints: adapter.container?.endpoints,
    onLine: (line) => o.out(`  build: ${line}`),
  });
  const { runtime, image } = isolation;
  for (const name of await sweepContainers(runtime, o.root, new Set(), o.env)) {
    o.out(`removed container ${name}, left by an earlier run`);
  }
  await settleLeft(); // after the sweep: nothing writes there any more
  o.out(
    `agents run in containers: ${runtime.name} ${runtime.version}, image ${image.ref} ` +
      `(${image.id.slice(0, 12)}${image.built ? ", built now" : ""}), network ` +
      `${settings.agentNetwork}`,
  );
  return { launch: { command: isolation.binaryPath, prefixArgs: [] }, isolation };
}
