/** The error of an adapter a task names that cannot start agents (lib/runner/used_adapters.ts). */

/** An adapter that cannot start agents: the attempt that needed it fails, not retried. */
export class AdapterNotReadyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AdapterNotReadyError";
  }
}
