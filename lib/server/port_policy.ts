/**
 * One rule for a busy port, used by `service run` and `service demo`: a port the user chose
 * (`--port`, `SERVICE_PORT`, `service.yaml`) must be the one served, so a busy one is an error
 * naming the fix; only the default may fall back to a free port, and it says so.
 */
import type { ServerSettings } from "../config/server_config.ts";

/** Where a port number came from. */
export type PortSource = "--port" | ServerSettings["portSource"];

/** A port the user chose is taken by another program. */
export class PortBusyError extends Error {
  constructor(readonly port: number, readonly source: PortSource) {
    super(
      `port ${port} (from ${source}) is already in use: stop the program listening there, ` +
        "or choose another port with --port N (or SERVICE_PORT; 0 takes any free port)",
    );
    this.name = "PortBusyError";
  }
}

/** The port to serve: `--port` when given, else the settings' (`SERVICE_PORT`, `service.yaml`, default). */
export function portChoice(
  flag: string | undefined,
  settings: Pick<ServerSettings, "port" | "portSource">,
): { port: number; source: PortSource } {
  if (flag === undefined) return { port: settings.port, source: settings.portSource };
  const port = Number(flag);
  if (flag.trim() === "" || !Number.isInteger(port) || port < 0 || port > 65535) {
    throw new RangeError(`--port ${JSON.stringify(flag)} is not a port number (0-65535)`);
  }
  return { port, source: "--port" };
}

/** Start with `start(port)`; a busy default port falls back to a free one (noted), any other is a {@link PortBusyError}. */
export async function listenByPolicy<T>(
  start: (port: number) => Promise<T>,
  choice: { port: number; source: PortSource },
  note: (line: string) => void,
): Promise<T> {
  try {
    return await start(choice.port);
  } catch (e) {
    if (!(e instanceof Deno.errors.AddrInUse) || choice.port === 0) throw e;
    if (choice.source !== "default") throw new PortBusyError(choice.port, choice.source);
    note(`port ${choice.port} is busy; serving on a free port instead (choose one with --port N)`);
    return await start(0);
  }
}
