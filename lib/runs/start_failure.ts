/**
 * Why the last `service run` did not start, when isolation stopped it before `run_started`
 * (a `ContainerError`, DESIGN.md §14): no run exists to carry the reason, so it is kept in
 * `.sdd/runtime/start_failure.json` for `service status` until a run's isolation checks pass.
 */
import { join } from "node:path";

/** What `status` shows of a run that did not start. */
export interface StartFailure {
  /** The error's name (`ContainerError`). */
  error: string;
  /** Which check failed (a ContainerError's kind). */
  kind?: string;
  message: string;
  fix?: string;
  /** ISO time of the attempt. */
  at: string;
}

function fileOf(runtimeDir: string): string {
  return join(runtimeDir, "start_failure.json");
}

/** Keep why the run did not start. */
export async function recordStartFailure(runtimeDir: string, f: StartFailure): Promise<void> {
  await Deno.mkdir(runtimeDir, { recursive: true });
  await Deno.writeTextFile(fileOf(runtimeDir), JSON.stringify(f) + "\n");
}

/** Forget it: a run's checks passed. */
export async function clearStartFailure(runtimeDir: string): Promise<void> {
  await Deno.remove(fileOf(runtimeDir)).catch(() => {});
}

/** Why the last run did not start, or null. */
export async function readStartFailure(runtimeDir: string): Promise<StartFailure | null> {
  try {
    const f = JSON.parse(await Deno.readTextFile(fileOf(runtimeDir)));
    return typeof f?.message === "string" && typeof f?.error === "string" ? f : null;
  } catch {
    return null;
  }
}
