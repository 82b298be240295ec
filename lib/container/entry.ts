/**
 * What runs first in a session's container (pure): a POSIX `sh` script, given as
 * `sh -c <script> service-entry <argv…>`, that
 *
 * 1. makes the user's `$HOME`;
 * 2. starts the relays' listeners (`socat`, lib/container/network.ts) and waits until they
 *    listen, so the agent's first request is not refused;
 * 3. a held container (started ahead of need, lib/container/launcher.ts `hold`) then waits for
 *    the line `go` on its standard input; an input that ends first (the service released it, or
 *    died) ends the container before anything of the command has run;
 * 4. starts a watchdog on the container's standard input, which the service holds open for as
 *    long as it lives: when the service dies (even by SIGKILL) the input ends and the watchdog
 *    kills every process of the container, so no container outlives the service's tasks;
 * 5. replaces itself with the command (its standard input `/dev/null`), which the runtime's
 *    init (`--init`) hands SIGTERM to when the container is stopped.
 */
import type { Relay } from "./network.ts";

/** Where the session's relay sockets are mounted inside. */
export const NET_DIR = "/run/service-net";

/** `127.0.0.2:443` as `/proc/net/tcp` writes it: `0200007F:01BB`. */
export function procNetAddress(ip: string, port: number): string {
  const hex = (n: number, width: number) => n.toString(16).toUpperCase().padStart(width, "0");
  const ipHex = ip.split(".").map(Number).reverse().map((b) => hex(b, 2)).join("");
  return `${ipHex}:${hex(port, 4)}`;
}

function listener(r: Relay): string {
  const sock = `UNIX-CONNECT:${NET_DIR}/${r.socket}`;
  if (r.listen.ip.includes(":")) {
    // IPv6 may be off in the container: its listener is best effort.
    return `socat TCP6-LISTEN:${r.listen.port},bind=[${r.listen.ip}],ipv6only=1,reuseaddr,fork ` +
      `${sock} 2>/dev/null &`;
  }
  return `socat TCP4-LISTEN:${r.listen.port},bind=${r.listen.ip},reuseaddr,fork ${sock} &`;
}

/** The exit code of a held container whose input ended before `go`. */
export const NOT_LET_GO = 125;

/** The line that lets a held container's command start. */
export const GO_LINE = "go\n";

/** The entry script of a container whose relays are `relays` (held: it waits for `go`). */
export function entryScript(relays: readonly Relay[], held = false): string {
  const lines = ['mkdir -p "$HOME" 2>/dev/null'];
  if (relays.length > 0) {
    lines.push(...relays.map(listener));
    const wanted = relays.filter((r) => !r.listen.ip.includes(":"))
      .map((r) => procNetAddress(r.listen.ip, r.listen.port));
    lines.push(
      'listening() { while read -r _ a _ st _; do [ "$st" = 0A ] && [ "$a" = "$1" ] && return 0; done </proc/net/tcp; return 1; }',
      "i=0",
      `while [ $i -lt 500 ]; do ${
        wanted.map((w) => `listening ${w}`).join(" && ")
      } && break; i=$((i+1)); sleep 0.01; done`,
    );
  }
  if (held) {
    // `read` takes one line and no more: the rest of the input is the watchdog's.
    lines.push(`IFS= read -r go && [ "$go" = go ] || exit ${NOT_LET_GO}`);
  }
  lines.push(
    "exec 3<&0",
    "(cat <&3 >/dev/null 2>&1; kill -KILL -1) &",
    'exec "$@" </dev/null 3<&-',
  );
  return lines.join("\n");
}

/** The argv that runs `argv` behind the entry script (held: after `go`). */
export function entryArgv(
  relays: readonly Relay[],
  argv: readonly string[],
  held = false,
): string[] {
  return ["sh", "-c", entryScript(relays, held), "service-entry", ...argv];
}
