/**
 * Plain-word explanations of the API's error answers, for the board page (browser-safe, pure).
 */

/** An error answer of the JSON API (`{"error":{"code","message"}}`) or a network failure (0). */
export interface ApiFailure {
  status: number;
  code: string;
  message: string;
}

/** One or two sentences an operator can act on. */
export function plainWords(failure: ApiFailure): string {
  switch (failure.status) {
    case 0:
      return `Cannot reach the server (${failure.message}). Check that it is running.`;
    case 401:
      return "Not authorised: the server needs a bearer token. Paste a valid token into the " +
        "token field at the top of the page.";
    case 403:
      if (failure.code === "forbidden_origin" || failure.code === "forbidden_host") {
        return "Refused: the server does not trust the address this page was opened at " +
          "(a reverse proxy needs server.public_url in service.yaml). Nothing was written. " +
          `(${failure.message})`;
      }
      return "Not allowed: your token may read the board but review actions need a token " +
        "with the operator scope. Nothing was written.";
    case 409:
      // A broken chain is the one 409 whose message needs explaining; every other refusal
      // (already merged, merge pending, not reviewable …) says what it is itself.
      if (failure.code === "journal_poisoned" || failure.code === "audit_chain_broken") {
        return "Refused: the journal or the audit chain does not verify, so the action was not " +
          `recorded and nothing was written. (${failure.message})`;
      }
      return `Refused, nothing was written: ${failure.message}.`;
    case 412:
      return "The board changed since you loaded it, so the action was not recorded. Reload " +
        "the board, look again, then review.";
    case 404:
      return `Not found: ${failure.message}`;
    default:
      return `The server answered ${failure.status} (${failure.code}): ${failure.message}`;
  }
}
