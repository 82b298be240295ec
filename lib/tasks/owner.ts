/**
 * One process owns a workspace's task store at a time: two stores over the same
 * `.sdd/backlog/` would overwrite each other's task files and let a task be claimed twice.
 * The owner is recorded in `.sdd/runtime/task-store.owner` (created exclusively); a live other
 * owner is refused, a dead one's record is taken over. An owner killed a moment ago (`kill -9`,
 * then a restart at once) may still show in the process table while the kernel tears it down,
 * or stay there as a zombie its parent has not collected: neither runs, so neither refuses.
 */
import { processAlive, processExiting } from "../util/process_alive.ts";
import type { WorkspacePaths } from "../workspace.ts";

/** Another live process owns the task store. */
export class TaskStoreBusyError extends Error {
  constructor(readonly pid: number, readonly purpose: string) {
    super(
      `the task store of this workspace is open in process ${pid} (${purpose}): stop it first ` +
        "(Ctrl-C, or `service stop` for a run), or use its task API instead of opening another",
    );
    this.name = "TaskStoreBusyError";
  }
}

interface Owner {
  pid: number;
  purpose: string;
  since: string;
}

function ownerFile(paths: WorkspacePaths): string {
  return paths.taskStoreOwner;
}

const held = new Map<string, number>();

/** How long an owner that is on its way out (killed, exiting) is waited for. */
const EXITING_OWNER_WAIT_MS = 3000;

/** True when `pid` runs and is not merely on its way out (waited for, briefly). */
async function ownerRuns(pid: number): Promise<boolean> {
  const deadline = Date.now() + EXITING_OWNER_WAIT_MS;
  while (processAlive(pid) && processExiting(pid)) {
    if (Date.now() >= deadline) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return processAlive(pid);
}

/** Record this process as the owner (re-entrant within the process); throws when another owns it. */
export async function claimStoreOwnership(
  paths: WorkspacePaths,
  purpose = Deno.args.join(" ") || "service",
): Promise<void> {
  const file = ownerFile(paths);
  const count = held.get(file) ?? 0;
  if (count > 0) {
    held.set(file, count + 1);
    return;
  }
  await Deno.mkdir(paths.runtime, { recursive: true });
  const record: Owner = { pid: Deno.pid, purpose, since: new Date().toISOString() };
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await Deno.writeTextFile(file, JSON.stringify(record) + "\n", { createNew: true });
      held.set(file, 1);
      return;
    } catch (e) {
      if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
    }
    let other: Owner | undefined;
    try {
      other = JSON.parse(await Deno.readTextFile(file));
    } catch { /* unreadable: treat as stale */ }
    if (other && other.pid !== Deno.pid && await ownerRuns(other.pid)) {
      throw new TaskStoreBusyError(other.pid, other.purpose);
    }
    await Deno.remove(file).catch(() => {}); // stale: its process is gone
  }
  throw new Error(`could not take ownership of ${file}: another process keeps creating it`);
}

/** Give up ownership (the last holder in this process removes the record). */
export async function releaseStoreOwnership(paths: WorkspacePaths): Promise<void> {
  const file = ownerFile(paths);
  const count = held.get(file) ?? 0;
  if (count > 1) {
    held.set(file, count - 1);
    return;
  }
  held.delete(file);
  if (count === 1) await Deno.remove(file).catch(() => {});
}
