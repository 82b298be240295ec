/**
 * `.sdd/runtime/server.json`: the task server that serves this workspace now, however it was
 * started (`service serve --port N`, a run in the foreground or detached, a fallback port). It
 * is written once the server listens and removed when it stops; one that names a process that
 * is gone (killed) is stale, and the reader removes it. Only the process that owns the task
 * store writes it, so there is at most one. It holds the server's instance secret, so it is
 * readable by its owner only.
 */
import type { WorkspacePaths } from "../workspace.ts";
import { writeFileAtomic } from "../util/atomic_write.ts";
import type { ServerIdentity } from "./identity.ts";

/** Contents of `.sdd/runtime/server.json`. */
export interface ServerRecord extends ServerIdentity {
  pid: number;
  /** Base URL the server listens on, e.g. `http://127.0.0.1:8761`. */
  url: string;
  /** ISO time the server started listening. */
  started_at: string;
}

/** Publish the running server of the workspace. */
export async function publishServer(paths: WorkspacePaths, record: ServerRecord): Promise<void> {
  await writeFileAtomic(paths.serverRecord, JSON.stringify(record, null, 2) + "\n", 0o600);
}

/**
 * Remove the record if it is still the one of `instance`: at shutdown, or when found stale (a
 * server started since has written its own, which stays).
 */
export async function withdrawServer(paths: WorkspacePaths, instance: string): Promise<void> {
  if ((await readServerRecord(paths))?.instance !== instance) return;
  await Deno.remove(paths.serverRecord).catch(() => {});
}

/** The record, or undefined when there is none or it is not a record (a torn write). */
export async function readServerRecord(paths: WorkspacePaths): Promise<ServerRecord | undefined> {
  let parsed: Partial<ServerRecord>;
  try {
    parsed = JSON.parse(await Deno.readTextFile(paths.serverRecord));
  } catch (e) {
    if (e instanceof Deno.errors.NotFound || e instanceof SyntaxError) return undefined;
    throw e;
  }
  const ok = Number.isInteger(parsed.pid) && typeof parsed.url === "string" &&
    typeof parsed.instance === "string" && typeof parsed.workspace === "string";
  return ok ? parsed as ServerRecord : undefined;
}
