/**
 * Container isolation settings (spec §2.11, DESIGN.md §14) as the service uses them, and the
 * endpoint URLs the restricted network allows. Pure. The YAML keys (and their `host:port`
 * entries, lib/util/host_port.ts) are validated in lib/config/schema.ts;
 * {@link containerSettings} maps them here.
 */
import { type HostPort, parseHostPort } from "../util/host_port.ts";

/** Which runtime runs the containers: `auto` tries podman, then docker. */
export type RuntimePreference = "auto" | "podman" | "docker";

/**
 * The agent's network in phase 2: `restricted` reaches the task server, the adapter's model
 * endpoint and `allow_hosts` only; `none` reaches nothing; `open` is the runtime's default
 * network (the task server relayed in).
 */
export type AgentNetwork = "restricted" | "none" | "open";

/** Everything container isolation is configured with. */
export interface ContainerSettings {
  runtime: RuntimePreference;
  /** The agent image (with `autoBuildImage`: the repository the built image is tagged in). */
  image?: string;
  autoBuildImage: boolean;
  /** FROM of the generated Containerfile. */
  baseImage: string;
  /** More shell commands the generated Containerfile runs (the generic adapter's CLI). */
  install: string[];
  /** Phase 1 (worktree setup, installs) has the runtime's default network. */
  setupNetwork: boolean;
  agentNetwork: AgentNetwork;
  allowHosts: HostPort[];
  memoryMb?: number;
  cpuCores?: number;
}

/** The keys of service.yaml that {@link containerSettings} reads (the validated config). */
export interface ContainerConfigKeys {
  auto_build_image: boolean;
  memory_mb?: number;
  cpu_cores?: number;
  container: {
    runtime: RuntimePreference;
    image?: string;
    base_image: string;
    install: string[];
    setup_network: boolean;
    agent_network: AgentNetwork;
    allow_hosts: string[];
  };
}

/** The settings of a validated configuration (its `allow_hosts` already parse). */
export function containerSettings(config: ContainerConfigKeys): ContainerSettings {
  const c = config.container;
  return {
    runtime: c.runtime,
    ...(c.image === undefined ? {} : { image: c.image }),
    autoBuildImage: config.auto_build_image,
    baseImage: c.base_image,
    install: c.install,
    setupNetwork: c.setup_network,
    agentNetwork: c.agent_network,
    allowHosts: c.allow_hosts.map((h) => parseHostPort(h) as HostPort),
    ...(config.memory_mb === undefined ? {} : { memoryMb: config.memory_mb }),
    ...(config.cpu_cores === undefined ? {} : { cpuCores: config.cpu_cores }),
  };
}

/** True for `127.x.y.z`, `::1` and `localhost`: addresses of the host's loopback. */
export function isLoopback(host: string): boolean {
  const h = host.toLowerCase();
  return h === "localhost" || h === "::1" || /^127\.\d+\.\d+\.\d+$/.test(h);
}

/** The host and port an `http(s)://` endpoint URL connects to, or undefined when not a URL. */
export function endpointHostPort(url: string): HostPort | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") return undefined;
  const port = u.port ? Number(u.port) : u.protocol === "https:" ? 443 : 80;
  const host = u.hostname.replace(/^\[(.*)\]$/, "$1").toLowerCase();
  return { host, port };
}
