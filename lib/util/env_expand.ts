/** The error of `${VAR}` references to unset variables (resolved by lib/config/resolve_vars.ts). */

import { UserFacingError } from "../errors.ts";

/** Thrown when referenced variables are unset; names every one of them. */
export class UnsetVariableError extends UserFacingError {
  constructor(readonly names: string[], where: string) {
    super(
      `${where} references unset environment variable${names.length > 1 ? "s" : ""} ` +
        `${names.join(", ")}: export ${names[0]}=… before starting, or remove the reference`,
      1,
    );
    this.name = "UnsetVariableError";
  }
}
