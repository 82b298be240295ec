/**
 * The two error bases of the service. Domain code throws a {@link DomainError} (a kind and a
 * snake_case code; the HTTP edge maps the kind to a status in one place, routes/_app.ts), and
 * a failure the user can fix from the terminal is a {@link UserFacingError} (an exit code and
 * a fix, which the CLI prints without guessing).
 */

/** What kind of failure a domain error is; each kind has one HTTP status. */
const KIND_STATUS = {
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
  insufficient_storage: 507,
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

/**
 * A write failed because the disk (or the user's quota) is full: 507 `insufficient_storage`.
 * The writer left the file as it was, so nothing of this write was recorded or acknowledged.
 */
export class StorageFullError extends DomainError {
  constructor(readonly path: string, cause: string) {
    super(
      "insufficient_storage",
      "insufficient_storage",
      `cannot write ${path}: the disk is full (${cause}); nothing was recorded. ` +
        "Free space on that disk, then retry.",
    );
    this.name = "StorageFullError";
  }
}

/** The error codes of a full disk or an exhausted quota. */
const STORAGE_FULL_CODES = new Set(["ENOSPC", "EDQUOT"]);

/**
 * The one policy for a failed write (docs/security.md "Durability"): a full disk or quota
 * becomes {@link StorageFullError} naming `path`; any other error is returned as it is.
 */
export function storageFailure(error: unknown, path: string): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (error instanceof StorageFullError || typeof code !== "string") return error;
  if (!STORAGE_FULL_CODES.has(code)) return error;
  return new StorageFullError(path, (error as Error).message.replace(/:.*$/s, "").trim());
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
