/**
 * The two error bases of the service. Domain code throws a {@link DomainError} (a kind and a
 * snake_case code; the HTTP edge maps the kind to a status in one place, routes/_app.ts), and
 * a failure the user can fix from the terminal is a {@link UserFacingError} (an exit code and
 * a fix, which the CLI prints without guessing).
 */

/** What kind of failure a domain error is; each kind has one HTTP status. */
export const KIND_STATUS = {
  invalid: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  timeout: 408,
  conflict: 409,
  precondition_failed: 412,
  too_large: 413,
  unsupported_media_type: 415,
  unprocessable: 422,
  unavailable: 503,
} as const;

/** A domain error kind. */
export type ErrorKind = keyof typeof KIND_STATUS;

/** A failure of the domain: its kind, a stable snake_case code, and words naming the cause. */
export class DomainError extends Error {
  constructor(
    readonly kind: ErrorKind,
    readonly code: string,
    message: string,
    /** Headers the HTTP answer carries (`Retry-After`, `WWW-Authenticate`). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = "DomainError";
  }
}

/** Input that is malformed or of the wrong type (400). */
export class InvalidInputError extends DomainError {
  constructor(code: string, message: string) {
    super("invalid", code, message);
    this.name = "InvalidInputError";
  }
}

/** Something named does not exist (404). */
export class NotFoundError extends DomainError {
  constructor(code: string, message: string) {
    super("not_found", code, message);
    this.name = "NotFoundError";
  }
}

/** The state forbids it now: an invalid transition, a duplicate, a broken chain (409). */
export class ConflictError extends DomainError {
  constructor(code: string, message: string) {
    super("conflict", code, message);
    this.name = "ConflictError";
  }
}

/** Well-formed but refused by the rules: unknown role, dependency cycle (422). */
export class UnprocessableError extends DomainError {
  constructor(code: string, message: string) {
    super("unprocessable", code, message);
    this.name = "UnprocessableError";
  }
}

/** The HTTP status of a domain error. */
export function statusOf(error: DomainError): number {
  return KIND_STATUS[error.kind];
}

/** The kind of an HTTP status (for errors raised at the HTTP edge). */
export function kindOf(status: number): ErrorKind {
  const found = (Object.entries(KIND_STATUS) as [ErrorKind, number][]).find(([, s]) =>
    s === status
  );
  if (!found) throw new Error(`no error kind for HTTP status ${status}`);
  return found[0];
}

/** A failure the user can fix: the CLI prints its message and fix, and exits with `exitCode`. */
export class UserFacingError extends Error {
  constructor(message: string, readonly exitCode = 1, readonly fix?: string) {
    super(message);
    this.name = "UserFacingError";
  }
}
