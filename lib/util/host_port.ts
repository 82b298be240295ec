/**
 * `host:port` text (service.yaml's `container.allow_hosts`): one parser below both its users —
 * lib/config validates the values with it, container isolation's restricted network uses the
 * {@link HostPort}s it returns — so neither imports the other. Pure.
 */
import { isLoopbackHost } from "./loopback.ts";

/** One host and port (a name or a loopback address; never another IP address). */
export interface HostPort {
  host: string;
  port: number;
}

const HOST_NAME =
  /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;
const IPV4 = /^\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}$/;

/**
 * Why `host` cannot be reached through the restricted network, or undefined when it can: a
 * name (resolved on the host) or a loopback address. Another IP address cannot be given to a
 * container that has no network of its own.
 */
export function unreachableHost(host: string): string | undefined {
  if (isLoopbackHost(host)) return undefined;
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

/** `host:port`, bracketing an IPv6 address. */
export function hostPortText(hp: HostPort): string {
  return hp.host.includes(":") ? `[${hp.host}]:${hp.port}` : `${hp.host}:${hp.port}`;
}
