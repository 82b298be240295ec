/** The error `service worker` stops with when it cannot start (exit 1, with the fix). */
import { UserFacingError } from "../errors.ts";

/** The worker cannot start (no clone, no service.yaml, no such remote, nobody answers). */
export class WorkerSetupError extends UserFacingError {
  constructor(message: string, fix: string) {
    super(message, 1, fix);
    this.name = "WorkerSetupError";
  }
}
