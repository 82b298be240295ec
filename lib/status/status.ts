/**
 * The status object (DESIGN.md §6). Its shape is fixed now; the task, verification, agent and
 * cost parts are filled from their stores as those land.
 */
import type { AppContext } from "../http/context.ts";
import { STATUS_PARTS } from "./parts.ts";

/** Answer of `GET /status`. */
export interface ServiceStatus {
  service: "service";
  workspace: string;
  runs: number;
  [part: string]: unknown;
}

/**
 * One named part of the status object (task counts, verification nudge, agents, cost); it may
 * read the parts before it (`earlier`) instead of working them out again.
 */
export type StatusPart = (app: AppContext, earlier: Readonly<ServiceStatus>) => Promise<unknown>;

/** Collect the status object. */
export async function collectStatus(app: AppContext): Promise<ServiceStatus> {
  const status: ServiceStatus = {
    service: "service",
    workspace: app.paths.root,
    runs: await countRuns(app.paths.runs),
  };
  for (const [name, part] of STATUS_PARTS) status[name] = await part(app, status);
  return status;
}

async function countRuns(runsDir: string): Promise<number> {
  let n = 0;
  try {
    for await (const entry of Deno.readDir(runsDir)) if (entry.isDirectory) n++;
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  return n;
}
