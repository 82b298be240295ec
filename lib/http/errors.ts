/** One error type for request failures, mapped to the JSON body of DESIGN.md §6. */

/** A request failure with its HTTP status and a snake_case code. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
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
