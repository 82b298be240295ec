/**
 * A container's network (pure). The restricted network is real because the container has none
 * (`--network none`: only its own loopback): each host it may reach is a relay — inside, a
 * listener on a loopback address (the target's own address for a host loopback port; for a
 * name, an address of 127.0.0.0/8 the name resolves to through `/etc/hosts`); through a Unix
 * socket mounted from the session's directory; outside, the service connecting to that one
 * host and port (lib/container/relay.ts). URLs keep working unchanged inside, TLS stays end to
 * end, and nothing else can be reached: not the internet, not a loopback port of the host that
 * is not listed, and no name resolves but those listed.
 */
import type { HostPort } from "../util/host_port.ts";
import { isLoopback } from "./settings.ts";

/** A host a container may reach, and why (shown by `doctor` and in the session log). */
export interface NetworkTarget extends HostPort {
  why: string;
}

/** One relayed host: where the agent connects inside, the socket, where the host connects. */
export interface Relay {
  listen: { ip: string; port: number };
  /** File name of the Unix socket in the session's network directory. */
  socket: string;
  target: NetworkTarget;
}

/** What a container's network is. */
export interface NetworkPlan {
  /** `none`: its own loopback only; `default`: the runtime's default network. */
  network: "none" | "default";
  relays: Relay[];
  addHosts: { name: string; ip: string }[];
  /** A relay listens below port 1024 (the container's user must be let bind it). */
  lowPorts: boolean;
}

/** How one phase's network is made: which network, and which targets are relayed in. */
export interface NetworkShape {
  network: "none" | "default";
  /** `all`: every target (restricted); `loopback`: the host's loopback ports (open); none. */
  relay: "all" | "loopback" | "nothing";
}

/** The network of the agent (phase 2) under `agent_network`. */
export function agentNetworkShape(mode: "restricted" | "none" | "open"): NetworkShape {
  switch (mode) {
    case "restricted":
      return { network: "none", relay: "all" };
    case "open":
      return { network: "default", relay: "loopback" };
    case "none":
      return { network: "none", relay: "nothing" };
  }
}

/** The network of phase 1 (worktree setup, installs) under `setup_network`. */
export function setupNetworkShape(setupNetwork: boolean): NetworkShape {
  return { network: setupNetwork ? "default" : "none", relay: "nothing" };
}

/** The plan of `shape` for `targets` (duplicates of one host and port relayed once). */
export function networkPlan(shape: NetworkShape, targets: readonly NetworkTarget[]): NetworkPlan {
  const relays: Relay[] = [];
  const addHosts: { name: string; ip: string }[] = [];
  const nameIps = new Map<string, string>();
  const seen = new Set<string>();
  const listen = (t: NetworkTarget, ip: string) => {
    relays.push({ listen: { ip, port: t.port }, socket: `r${relays.length}.sock`, target: t });
  };
  for (const t of targets) {
    const key = `${t.host}:${t.port}`;
    if (shape.relay === "nothing" || seen.has(key)) continue;
    const loopback = isLoopback(t.host);
    if (shape.relay === "loopback" && !loopback) continue;
    seen.add(key);
    if (t.host === "localhost") {
      listen(t, "127.0.0.1");
      listen(t, "::1"); // clients may resolve localhost to ::1 first
    } else if (loopback) {
      listen(t, t.host);
    } else {
      let ip = nameIps.get(t.host);
      if (!ip) {
        ip = `127.0.0.${nameIps.size + 2}`; // 127.0.0.1 is the host's loopback ports' own
        nameIps.set(t.host, ip);
        addHosts.push({ name: t.host, ip });
      }
      listen(t, ip);
    }
  }
  return {
    network: shape.network,
    relays,
    addHosts,
    lowPorts: relays.some((r) => r.listen.port < 1024),
  };
}
