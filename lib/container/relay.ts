/**
 * The host side of a container's relays (lib/container/network.ts): one Unix socket per allowed
 * host and port, in the session's network directory that is mounted into the container; each
 * connection on it is joined to a new TCP connection to that one host and port, bytes both ways,
 * each direction's end passed on. The service decides where a socket leads, never the container.
 */
import { join } from "node:path";
import type { Relay } from "./network.ts";

/** Relays listening for one container. */
export interface RelaySet {
  /** Stop listening and end the connections still open. */
  close(): void;
}

/** Options of {@link startRelays}. */
export interface RelayOptions {
  /** Owner of the sockets (the container's user), when the service must hand them over. */
  owner?: { uid: number; gid: number };
  /** Told when a connection to a target fails (the agent sees its connection end). */
  warn?: (line: string) => void;
}

async function pump(from: Deno.Conn, to: Deno.Conn): Promise<void> {
  const buf = new Uint8Array(64 * 1024);
  try {
    while (true) {
      const n = await from.read(buf);
      if (n === null) break;
      let off = 0;
      while (off < n) off += await to.write(buf.subarray(off, n));
    }
  } catch { /* either side went away */ }
  try {
    await to.closeWrite();
  } catch { /* already closed */ }
}

/** Listen on `dir/<relay.socket>` for each relay. */
export async function startRelays(
  dir: string,
  relays: readonly Relay[],
  options: RelayOptions = {},
): Promise<RelaySet> {
  const listeners: Deno.Listener[] = [];
  const open = new Set<Deno.Conn>();
  const serve = async (listener: Deno.Listener, relay: Relay) => {
    for await (const inner of listener) {
      open.add(inner);
      (async () => {
        let outer: Deno.Conn | undefined;
        try {
          outer = await Deno.connect({ hostname: relay.target.host, port: relay.target.port });
          open.add(outer);
          await Promise.all([pump(inner, outer), pump(outer, inner)]);
        } catch (e) {
          options.warn?.(
            `relay to ${relay.target.host}:${relay.target.port} (${relay.target.why}): ${
              (e as Error).message
            }`,
          );
        } finally {
          for (const c of [inner, outer]) {
            if (!c) continue;
            open.delete(c);
            try {
              c.close();
            } catch { /* closed */ }
          }
        }
      })();
    }
  };
  try {
    for (const relay of relays) {
      const path = join(dir, relay.socket);
      await Deno.remove(path).catch(() => {});
      const listener = Deno.listen({ transport: "unix", path });
      listeners.push(listener);
      // Only the container's user may connect (a socket is connected to only with write access).
      await Deno.chmod(path, 0o600);
      if (options.owner) await Deno.chown(path, options.owner.uid, options.owner.gid);
      serve(listener, relay).catch(() => {});
    }
  } catch (e) {
    for (const l of listeners) l.close();
    throw e;
  }
  return {
    close() {
      for (const l of listeners) {
        try {
          l.close();
        } catch { /* closed */ }
      }
      for (const c of open) {
        try {
          c.close();
        } catch { /* closed */ }
      }
      open.clear();
    },
  };
}
