/**
 * One agent session's containers (DESIGN.md §14): what they mount (the worktree and the git
 * files of lib/container/git_shadow.ts, copies of the launch files the agent reads, the relay
 * sockets — nothing else of the host), their environment (the agent's allow-listed one, with a
 * home of the container's own), their user and limits, and two launchers: phase 1 (worktree
 * setup, installs) on the runtime's default network when `setup_network`, else none; phase 2
 * (the agent) on the network `agent_network` names. When the agent's container has ended its
 * git work is brought back and the relays close ({@link SessionContainer.release}).
 */
import { basename, join } from "node:path";
import { sha256Hex } from "../journal/hash.ts";
import type { Launcher } from "../process/launcher.ts";
import { runArgv } from "../process/shell.ts";
import { prepareGitShadow, settleGitShadow } from "./git_shadow.ts";
import type { TreeAdmin } from "../git/tree_admin.ts";
import { type ContainerBase, containerLauncher, type HoldingLauncher } from "./launcher.ts";
import {
  agentNetworkShape,
  type NetworkPlan,
  networkPlan,
  type NetworkTarget,
  setupNetworkShape,
} from "./network.ts";
import { NET_DIR } from "./entry.ts";
import type { ContainerIsolation } from "./probe.ts";
import type { Mount } from "./run_args.ts";
import { runtimeEnvironment } from "./runtime.ts";
import { endpointHostPort } from "./settings.ts";
import { type RelaySet, startRelays } from "./relay.ts";

/** The home of the container's user (made by the entry script; gone with the container). */
export const CONTAINER_HOME = "/tmp/service-home";

/** Labels every container of the service carries, so a sweep finds those of a workspace. */
export const LABELS = {
  workspace: "io.service.workspace",
  session: "io.service.session",
  run: "io.service.run",
  phase: "io.service.phase",
} as const;

/** The label value naming a workspace (its path's digest). */
export function workspaceLabel(root: string): string {
  return sha256Hex(root).slice(0, 16);
}

/** The session's directory of container files: `<runtime>/containers/<session>`. */
export function sessionContainerDir(runtimeDir: string, sessionId: string): string {
  return join(runtimeDir, "containers", sessionId);
}

/** The name of a session's agent container. */
function agentContainerName(sessionId: string): string {
  return `service-${sessionId}`;
}

const PROXY_VARS = /^(http|https|all|no)_proxy$/i;

/**
 * The agent's environment inside a container (pure): the host's allow-listed variables but
 * those naming host paths (PATH, TMPDIR; the image's apply), a home of its own, git told to
 * trust the mounted repository whoever owns it, and without a network of its own no proxy
 * variables (the proxy could not be reached; the relays go direct).
 */
export function containerEnvironment(
  hostEnv: Record<string, string>,
  plan: Pick<NetworkPlan, "network">,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(hostEnv)) {
    if (k === "PATH" || k === "TMPDIR" || k === "PATHEXT" || k.startsWith("SERVICE_TREE_")) {
      continue;
    }
    if (plan.network === "none" && PROXY_VARS.test(k)) continue;
    env[k] = v;
  }
  env.HOME = CONTAINER_HOME;
  if (!("GIT_CONFIG_COUNT" in env)) {
    // The repository is mounted from the host: its owner may not be the container's user.
    Object.assign(env, {
      GIT_CONFIG_COUNT: "1",
      GIT_CONFIG_KEY_0: "safe.directory",
      GIT_CONFIG_VALUE_0: "*",
    });
  }
  return env;
}

/** Options of {@link prepareSessionContainer}. */
export interface SessionContainerOptions {
  iso: ContainerIsolation;
  root: string;
  /** `.sdd/runtime`. */
  runtimeDir: string;
  runId: string;
  sessionId: string;
  /** The worktree's git files as the service sealed them (lib/worktrees/trees.ts). */
  admin: TreeAdmin;
  /** The agent branch (`agent/<session>`). */
  branch: string;
  /** Where the agent reports; relayed in. */
  serverUrl: string;
  /** The agent's allow-listed environment as the host would give it. */
  env: Record<string, string>;
  /** Host files or directories the agent reads (launch files, MCP configuration). */
  copies?: readonly string[];
  /** podman ends the agent's container after this long, whatever becomes of the service. */
  maxSeconds?: number;
  /** The service's environment (the runtime command's variables). */
  processEnv: Readonly<Record<string, string>>;
  warn: (line: string) => void;
}

/** A session's containers. */
export interface SessionContainer {
  /** `container:<runtime>:<image id>`. */
  label: string;
  /** The agent's container. */
  name: string;
  /** The runtime's command (the PID file records it for the reaper). */
  runtimeBin: string;
  /** The agent's environment inside. */
  env: Record<string, string>;
  /** The environment of phase 1 (setup) inside, from the host environment `hostEnv`. */
  setupEnv(hostEnv: Record<string, string>): Record<string, string>;
  /** The hosts the agent can reach, and why (said in the session log). */
  reach: string[];
  /** Phase 2: the agent (its container can be started ahead of need, held until launched). */
  agent: HoldingLauncher;
  /** Phase 1: worktree setup commands and installs. */
  setup: Launcher;
  /**
   * End a held agent container never launched, close the relays and bring the git work back
   * (idempotent).
   */
  release(): Promise<void>;
}

async function copyIn(from: string, to: string): Promise<void> {
  const s = await Deno.stat(from);
  if (s.isFile) {
    await Deno.copyFile(from, to);
    return;
  }
  await Deno.mkdir(to, { recursive: true });
  for await (const e of Deno.readDir(from)) {
    if (e.isFile || e.isDirectory) await copyIn(join(from, e.name), join(to, e.name));
  }
}

/** Prepare the containers of one session (files, mounts, relays); nothing runs yet. */
export async function prepareSessionContainer(
  o: SessionContainerOptions,
): Promise<SessionContainer> {
  const { iso } = o;
  const dir = sessionContainerDir(o.runtimeDir, o.sessionId);
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  const handTo = iso.user.chown ? { uid: iso.user.uid, gid: iso.user.gid } : undefined;
  const shadow = await prepareGitShadow({
    dir,
    sessionId: o.sessionId,
    admin: o.admin,
    branch: o.branch,
    handTo,
  });
  let relays: RelaySet | undefined;
  let agent: HoldingLauncher | undefined;
  const release = once(async () => {
    await agent?.discard(); // gone before its files are the service's again
    relays?.close();
    const settled = await settleGitShadow(dir).catch((e) => ({
      problems: [(e as Error).message],
      notes: [],
    }));
    for (const p of settled?.problems ?? []) {
      o.warn(`${o.sessionId}: container work not fully brought back (${p}); kept in ${dir}`);
    }
    for (const n of settled?.notes ?? []) o.warn(`${o.sessionId}: container's git: ${n}`);
  });
  try {
    const mounts: Mount[] = [...shadow.mounts];
    const files = join(dir, "files");
    for (const [i, path] of (o.copies ?? []).entries()) {
      try {
        await Deno.stat(path);
      } catch {
        continue; // nothing to copy
      }
      const copy = join(files, `${i}-${basename(path)}`);
      await Deno.mkdir(files, { recursive: true });
      await copyIn(path, copy);
      mounts.push({ source: copy, target: path, readOnly: false });
    }
    const server = endpointHostPort(o.serverUrl);
    const targets: NetworkTarget[] = [
      ...(server ? [{ ...server, why: "task server" }] : []),
      ...iso.targets,
    ];
    const agentPlan = networkPlan(agentNetworkShape(iso.settings.agentNetwork), targets);
    const setupPlan = networkPlan(setupNetworkShape(iso.settings.setupNetwork), []);
    const net = join(dir, "net");
    if (agentPlan.relays.length > 0) {
      await Deno.mkdir(net, { recursive: true, mode: 0o700 });
      if (handTo) await Deno.chown(net, handTo.uid, handTo.gid);
      relays = await startRelays(net, agentPlan.relays, { owner: handTo, warn: o.warn });
    }
    if (handTo && (o.copies?.length ?? 0) > 0) {
      await runArgv(["chown", "-R", "-h", "-P", `${handTo.uid}:${handTo.gid}`, files], {
        cwd: "/",
      });
    }
    const runtimeEnv = runtimeEnvironment(o.processEnv);
    const base = (plan: NetworkPlan, phase: string, extra: Mount[]): ContainerBase => ({
      runtime: iso.runtime.name,
      labels: {
        [LABELS.workspace]: workspaceLabel(o.root),
        [LABELS.session]: o.sessionId,
        [LABELS.run]: o.runId,
        [LABELS.phase]: phase,
      },
      image: iso.image.ref,
      mounts: [...mounts, ...extra],
      user: iso.user,
      memoryMb: iso.settings.memoryMb,
      cpuCores: iso.settings.cpuCores,
      network: plan.network,
      addHosts: plan.addHosts,
      lowPorts: plan.lowPorts,
      relabel: iso.runtime.selinux,
      ...(o.maxSeconds === undefined ? {} : { maxSeconds: o.maxSeconds }),
    });
    const name = agentContainerName(o.sessionId);
    let setups = 0;
    agent = containerLauncher({
      runtime: iso.runtime,
      runtimeEnv,
      base: base(
        agentPlan,
        "agent",
        agentPlan.relays.length > 0 ? [{ source: net, target: NET_DIR, readOnly: true }] : [],
      ),
      relays: agentPlan.relays,
      name: () => name,
      finish: release,
      stateDir: join(dir, "conmon"),
    });
    return {
      label: iso.label,
      name,
      runtimeBin: iso.runtime.bin,
      env: containerEnvironment(o.env, agentPlan),
      setupEnv: (hostEnv) => containerEnvironment(hostEnv, setupPlan),
      reach: agentPlan.network === "default"
        ? ["the runtime's default network", ...agentPlan.relays.map(reachText)]
        : agentPlan.relays.map(reachText),
      agent,
      setup: containerLauncher({
        runtime: iso.runtime,
        runtimeEnv,
        base: { ...base(setupPlan, "setup", []), maxSeconds: undefined },
        relays: [],
        name: () => `${name}-setup-${++setups}`,
        stateDir: join(dir, "conmon"),
      }),
      release,
    };
  } catch (e) {
    await release();
    throw e;
  }
}

function reachText(r: { target: NetworkTarget }): string {
  return `${r.target.host}:${r.target.port} (${r.target.why})`;
}

function once(f: () => Promise<void>): () => Promise<void> {
  let done: Promise<void> | undefined;
  return () => done ??= f();
}
