/**
 * Container isolation settings (spec §2.11, DESIGN.md §14) as the service uses them, and the
 * parsing of the `host:port` entries and endpoint URLs the restricted network allows. Pure.
 * The YAML keys are validated in lib/config/schema.ts; {@link containerSettings} maps them here.
 */

/** Which runtime runs the containers: `auto` tries podman, then docker. */
export type RuntimePreference = "auto" | "podman" | "docker";

/**
 * The agent's network in phase 2: `restricted` reaches the task server, the adapter's model
 * endpoint and `allow_hosts` only; `none` reaches nothing; `open` is the runtime's default
 * network (the task server relayed in).
 */
export type AgentNetwork = "restricted" | "none" | "open";

/** One host and port a container may reach. */
export interface HostPort {
  host: string;
  port: number;
}

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

const HOST_NAME =
  /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;
const IPV4 = /^\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}$/;

/** True for `127.x.y.z`, `::1` and `localhost`: addresses of the host's loopback. */
export function isLoopback(host: string): boolean {
  const h = host.toLowerCase();
  return h === "localhost" || h === "::1" || /^127\.\d+\.\d+\.\d+$/.test(h);
}

/**
 * Why `host` cannot be reached through the restricted network, or undefined when it can: a
 * name (resolved on the host) or a loopback address. Another IP address cannot be given to a
 * container that has no network of its own.
 */
export function unreachableHost(host: string): string | undefined {
  if (isLoopback(host)) return undefined;
  if (IPV4.test(host) || host.includes(":")) {
    return `${host} is an IP address: a restricted container reaches names and loopback ` +
      "addresses only (name it in the host's /etc/hosts and use the name)";
  }
  return HOST_NAME.test(host) ? undefined : `${host} is not a host name`;
}

/** `host:port` (`[::1]:8080` for IPv6) as a {@link HostPort}, or the reason it is not one. */
export function parseHostPort(text: string): HostPort | string {
  const m = /^\[([^\]]+)\]:(\d+)$/.exec(text) ?? /^([^:\[\]]+):(\d+)$/.exec(text);
  if (!m) return `'${text}' is not host:port (for example api.example.com:443)`;
  const port = Number(m[2]);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    return `'${text}': the port must be 1 to 65535`;
  }
  const why = unreachableHost(m[1]);
  return why ? `'${text}': ${why}` : { host: m[1].toLowerCase(), port };
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

/** `host:port`, bracketing an IPv6 address. */
export function hostPortText(hp: HostPort): string {
  return hp.host.includes(":") ? `[${hp.host}]:${hp.port}` : `${hp.host}:${hp.port}`;
}
