/** Request refusals raised at the HTTP edge, and the JSON error body of DESIGN.md §6. */
import { DomainError, kindOf } from "../errors.ts";

/**
 * A refusal decided by HTTP middleware (origin, size, auth) with its status and code. Domain
 * code throws the {@link DomainError} subclasses of lib/errors.ts instead.
 */
export class HttpError extends DomainError {
  constructor(
    readonly status: number,
    code: string,
    message: string,
    headers: Record<string, string> = {},
  ) {
    super(kindOf(status), code, message, headers);
    this.name = "HttpError";
  }
}

/** The JSON error body: `{"error":{"code","message"}}`. */
export function errorBody(
  code: string,
  message: string,
): { error: { code: string; message: string } } {
  return { error: { code, message } };
}
