/** Which host names stay on this machine: one definition for the bind check, the origin guard and server discovery. */

const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "::1", "[::1]"]);

/** True for a loopback host name: `localhost`, `*.localhost`, `127.x.y.z`, `::1` (bare or bracketed). */
export function isLoopbackHost(host: string): boolean {
  const name = host.toLowerCase();
  return LOOPBACK_NAMES.has(name) || /^127\.\d+\.\d+\.\d+$/.test(name) ||
    name.endsWith(".localhost");
}

/** True for an address that binds every interface (`0.0.0.0`, `::`). */
export function isWildcardHost(host: string): boolean {
  return host === "0.0.0.0" || host === "::" || host === "[::]";
}
