/**
 * `.sdd/runtime/server.log` (spec "Log and state locations"): what the task server says about
 * itself — where it listens and for which workspace, start-up repairs, orphaned tasks, failed
 * background ticks, when it stops — one time-stamped line each, whichever way it was started
 * (`service serve`, a run in the foreground or detached). Lines are written at once (they are
 * few) and the file rotates like the access log (10 MiB, one backup).
 */
import { AccessLog } from "../http/access_log.ts";
import type { WorkspacePaths } from "../workspace.ts";

/** Appends the server's lines to the workspace's server log. */
export class ServerLog {
  readonly #log: AccessLog;

  constructor(paths: WorkspacePaths) {
    this.#log = new AccessLog(paths.serverLog);
  }

  /** Write `line` with the time, now. */
  line(line: string): void {
    this.#log.append(`${new Date().toISOString()} ${line}`);
    this.#log.flush();
  }
}
