/**
 * Port leases (DESIGN.md §13). Each agent session of a workspace gets `ports` ports of
 * `port_range`, unique among the live sessions and free to bind when leased; `PORT` and
 * `SERVICE_PORTS` hand them to its setup and its agent, so five agents can each start the
 * project's dev server at once.
 *
 * A lease is the file `.sdd/runtime/ports/<port>.json`, written aside and hard-linked into place:
 * of two claimants only one link succeeds, and nobody ever reads a half-written lease. It names
 * the session and the process that took it (pid and start time, so a reused pid is not taken for
 * it). It is released when the session's worktree is reaped. A lease whose process is gone — the
 * orchestrator was killed — is stale: the next lease taken, or the next run, takes it back.
 */
import { join } from "node:path";
import { serialised } from "../async/serialised.ts";
import { processAlive, processStartTicks } from "../util/process_alive.ts";

/** One leased port. */
export interface PortLease {
  port: number;
  session_id: string;
  /** The process that took it (the orchestrator). */
  pid: number;
  /** That process's start time in clock ticks after boot, where the system says. */
  pid_start?: number;
  /** ISO time of the lease. */
  leased_at: string;
}

/** Not enough ports of the range are free and unleased. */
export class PortRangeExhaustedError extends Error {
  constructor(readonly wanted: number, readonly range: readonly [number, number]) {
    super(
      `no ${wanted} free port(s) left in port_range [${range[0]}, ${range[1]}]: every port is ` +
        "leased by a live session or taken by another program. Fix: widen worktree.port_range, " +
        "lower max_agents or worktree.ports, or stop what holds the ports",
    );
    this.name = "PortRangeExhaustedError";
  }
}

/** Options of {@link leasePorts} and {@link reclaimStaleLeases}. */
export interface LeaseOptions {
  /** Whether nothing listens on a port (default: binds on 127.0.0.1 and ::1 succeed). */
  isFree?: (port: number) => boolean;
  /** Whether the process that took a lease still runs (default: its pid and start time). */
  holderAlive?: (lease: PortLease) => boolean;
  /** This process (default `Deno.pid`). */
  pid?: number;
}

/** True when a bind of `port` on the loopback addresses succeeds (the address family may be absent). */
function portIsFree(port: number): boolean {
  for (const hostname of ["127.0.0.1", "::1"]) {
    try {
      Deno.listen({ hostname, port }).close();
    } catch (e) {
      if (e instanceof Deno.errors.AddrInUse || e instanceof Deno.errors.PermissionDenied) {
        return false;
      }
      // No such address family here (no IPv6): nothing can listen on it either.
    }
  }
  return true;
}

/** True while the process that took `lease` runs (a reused pid with another start time does not). */
export function leaseHolderAlive(lease: PortLease): boolean {
  if (!processAlive(lease.pid)) return false;
  const start = processStartTicks(lease.pid);
  return lease.pid_start === undefined || start === undefined || start === lease.pid_start;
}

/** A lease file as read: its text, and the lease when the text is one. */
interface LeaseFile {
  file: string;
  text: string;
  lease?: PortLease;
}

async function readLeaseFile(file: string): Promise<LeaseFile | undefined> {
  let text: string;
  try {
    text = await Deno.readTextFile(file);
  } catch {
    return undefined;
  }
  try {
    const v = JSON.parse(text);
    const ok = v && Number.isInteger(v.port) && typeof v.session_id === "string" &&
      Number.isInteger(v.pid);
    return { file, text, lease: ok ? v as PortLease : undefined };
  } catch {
    return { file, text };
  }
}

/** One lease of the workspace and whether its holder is gone. */
export interface LeaseEntry {
  file: string;
  /** Absent when the file does not hold a lease (it counts as stale). */
  lease?: PortLease;
  stale: boolean;
}

/** Every lease file in `dir`, by port. */
export async function readLeases(
  dir: string,
  holderAlive: (lease: PortLease) => boolean = leaseHolderAlive,
): Promise<LeaseEntry[]> {
  let names: string[];
  try {
    names = (await Array.fromAsync(Deno.readDir(dir))).filter((e) =>
      e.isFile && /^\d+\.json$/.test(e.name)
    ).map((e) => e.name);
  } catch {
    return [];
  }
  const out: LeaseEntry[] = [];
  for (const name of names.sort((a, b) => parseInt(a) - parseInt(b))) {
    const read = await readLeaseFile(join(dir, name));
    if (!read) continue;
    out.push({
      file: read.file,
      ...(read.lease ? { lease: read.lease } : {}),
      stale: !read.lease || !holderAlive(read.lease),
    });
  }
  return out;
}

/** Remove `read.file` if it still holds exactly what was read (a new lease is never removed). */
async function removeIfUnchanged(read: LeaseFile): Promise<boolean> {
  const now = await readLeaseFile(read.file);
  if (!now || now.text !== read.text) return false;
  await Deno.remove(read.file).catch(() => {});
  return true;
}

/** Link a complete lease file into place; false when another lease holds the port. */
async function claim(dir: string, lease: PortLease): Promise<boolean> {
  const aside = join(dir, `.lease-${crypto.randomUUID()}.tmp`);
  await Deno.writeTextFile(aside, JSON.stringify(lease) + "\n");
  try {
    await Deno.link(aside, join(dir, `${lease.port}.json`));
    return true;
  } catch (e) {
    if (e instanceof Deno.errors.AlreadyExists) return false;
    throw e;
  } finally {
    await Deno.remove(aside).catch(() => {});
  }
}

/**
 * Lease `count` ports of `range` (lowest first) for `sessionId`: each unleased (a stale lease is
 * taken back) and free to bind. All or none: a range without enough is a
 * {@link PortRangeExhaustedError} and nothing stays leased.
 */
export function leasePorts(
  dir: string,
  sessionId: string,
  count: number,
  range: readonly [number, number],
  options: LeaseOptions = {},
): Promise<number[]> {
  if (count <= 0) return Promise.resolve([]);
  return serialised(`ports:${dir}`, async () => {
    const isFree = options.isFree ?? portIsFree;
    const holderAlive = options.holderAlive ?? leaseHolderAlive;
    const pid = options.pid ?? Deno.pid;
    const pidStart = processStartTicks(pid);
    await Deno.mkdir(dir, { recursive: true });
    const got: number[] = [];
    try {
      for (let port = range[0]; port <= range[1] && got.length < count; port++) {
        const held = await readLeaseFile(join(dir, `${port}.json`));
        if (held) {
          if (held.lease && holderAlive(held.lease)) continue;
          if (!await removeIfUnchanged(held)) continue;
        }
        if (!isFree(port)) continue;
        const lease: PortLease = {
          port,
          session_id: sessionId,
          pid,
          ...(pidStart === undefined ? {} : { pid_start: pidStart }),
          leased_at: new Date().toISOString(),
        };
        if (await claim(dir, lease)) got.push(port);
      }
    } catch (e) {
      await removeLeases(dir, got);
      throw e;
    }
    if (got.length < count) {
      await removeLeases(dir, got);
      throw new PortRangeExhaustedError(count, range);
    }
    return got;
  });
}

async function removeLeases(dir: string, ports: readonly number[]): Promise<void> {
  for (const port of ports) await Deno.remove(join(dir, `${port}.json`)).catch(() => {});
}

/** The ports `sessionId` holds, lowest first. */
export async function sessionPorts(dir: string, sessionId: string): Promise<number[]> {
  return (await readLeases(dir, () => true)).flatMap((e) =>
    e.lease?.session_id === sessionId ? [e.lease.port] : []
  );
}

/** Release every lease of `sessionId`; returns the ports released. */
export function releasePorts(dir: string, sessionId: string): Promise<number[]> {
  return serialised(`ports:${dir}`, async () => {
    const released: number[] = [];
    for (const e of await readLeases(dir, () => true)) {
      if (e.lease?.session_id !== sessionId) continue;
      await Deno.remove(e.file).catch(() => {});
      released.push(e.lease.port);
    }
    return released;
  });
}

/** Take back every stale lease (its process is gone); returns them. */
export function reclaimStaleLeases(dir: string, options: LeaseOptions = {}): Promise<PortLease[]> {
  return serialised(`ports:${dir}`, async () => {
    const reclaimed: PortLease[] = [];
    for (const e of await readLeases(dir, options.holderAlive)) {
      if (!e.stale) continue;
      const read = await readLeaseFile(e.file);
      if (read && await removeIfUnchanged(read) && e.lease) reclaimed.push(e.lease);
    }
    return reclaimed;
  });
}
