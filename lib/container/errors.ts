/**
 * `ContainerError` (spec §7.3): container isolation cannot be had, so nothing is spawned. Its
 * `kind` says which step failed and `fix` what to do; the run stops before `run_started`
 * (DESIGN.md §14) and `doctor` reports the same words.
 */
import { UserFacingError } from "../errors.ts";

/** Which part of container isolation failed. */
export type ContainerErrorKind =
  /** No container runtime on PATH (or not the one `container.runtime` names). */
  | "no_runtime"
  /** The runtime is installed but does not answer (daemon down, socket refused, broken set-up). */
  | "runtime_not_answering"
  /** The image is not there and `auto_build_image` is false. */
  | "image_missing"
  /** Building the generated image failed. */
  | "image_build_failed"
  /** The runtime refused the limits (`memory_mb`, `cpu_cores`, ulimits, cgroups). */
  | "limits_refused"
  /** The image lacks what the agent needs (its CLI, `sh`, the network relay). */
  | "image_incomplete"
  /** A host the restricted network must reach cannot be relayed (an IP address, a bad URL). */
  | "network_target"
  /** A container could not be started for another reason. */
  | "run_failed"
  /** The service cannot give the container a non-root user that can write the worktree. */
  | "user_mapping";

/** Container isolation failed: `kind`, the cause in the message, and the fix. */
export class ContainerError extends UserFacingError {
  override readonly fix: string;
  constructor(readonly kind: ContainerErrorKind, message: string, fix: string) {
    super(message, 1, fix);
    this.fix = fix;
    this.name = "ContainerError";
  }
}
