/** Whether a process exists, without disturbing it (signal 0, as `kill -0` does). */

/** True when a process with `pid` exists (one owned by another user counts as existing). */
export function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    Deno.kill(pid, 0 as unknown as Deno.Signal);
    return true;
  } catch (e) {
    return e instanceof Deno.errors.PermissionDenied;
  }
}
