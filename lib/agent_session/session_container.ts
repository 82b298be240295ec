/**
 * The container of one agent session (DESIGN.md §14), made from the run's probed isolation: the
 * session's mounts, relays and launchers (lib/container/session.ts), and a header in the session
 * log saying where the agent runs and what it can reach, so `debug`, the board's log tail and a
 * reader of the log see it.
 */
import { join } from "node:path";
import type { Worktree } from "../worktrees/worktrees.ts";
import type { TreeAdmin } from "../git/tree_admin.ts";
import { prepareSessionContainer, type SessionContainer } from "../container/session.ts";
import type { SessionStart } from "./session.ts";

/** What {@link sessionContainer} prepares a container for. */
export interface SessionContainerFor {
  worktree: Worktree;
  /** The worktree's git files as sealed (lib/worktrees/trees.ts). */
  admin: TreeAdmin;
  /** The agent's host environment. */
  env: Record<string, string>;
  logPath: string;
}

/** Prepare `start`'s container for an agent. */
export async function sessionContainer(
  start: SessionStart,
  o: SessionContainerFor,
): Promise<SessionContainer> {
  const { worktree, env, logPath } = o;
  const iso = start.isolation!;
  const box = await prepareSessionContainer({
    iso,
    root: start.paths.root,
    runtimeDir: start.paths.runtime,
    runId: start.runId,
    sessionId: start.sessionId,
    admin: o.admin,
    branch: worktree.branch,
    serverUrl: start.serverUrl,
    env,
    // Launch files the adapter wrote (lib/agents/launch.ts) and the run's MCP configuration.
    copies: [
      join(start.paths.runtime, "agents", start.adapter.name),
      ...(start.mcpConfigPath ? [start.mcpConfigPath] : []),
    ],
    maxSeconds: start.timeoutS + start.graceMs / 1000 + 60,
    processEnv: start.processEnv ?? Deno.env.toObject(),
    warn: start.warn ?? ((line) => console.error(line)),
  });
  const s = iso.settings;
  const limits = [
    s.memoryMb === undefined ? "no memory limit" : `memory ${s.memoryMb} MB`,
    s.cpuCores === undefined ? "no CPU limit" : `${s.cpuCores} CPUs`,
  ].join(", ");
  // Phase 1 is said only when the role's worktree has setup commands (DESIGN.md §13).
  const setups = (start.environments?.spec(start.task.role).setup.length ?? 0) > 0;
  const setupWords = "; its worktree setup runs first, in containers of the same image with " +
    `${s.setupNetwork ? "the runtime's default" : "no"} network`;
  const reach = box.reach.length === 0 ? "nothing (no network)" : box.reach.join(", ");
  await Deno.writeTextFile(
    logPath,
    `──── service: agent runs in container ${box.name} (${iso.runtime.name}, image ` +
      `${iso.image.ref} ${iso.image.id.slice(0, 12)}, user ${iso.user.uid}, ${limits}); ` +
      `network ${s.agentNetwork}: it can reach ${reach}${setups ? setupWords : ""}\n`,
    { append: true, create: true },
  );
  return box;
}
