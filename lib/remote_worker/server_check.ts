/**
 * The worker's side of `GET /workers/hello` (lib/workers/hello.ts): before its token leaves the
 * machine it asks the server, with no token, for the proofs only the orchestrator it means can
 * give — its own token's, and its repository's. A server that cannot give them gets nothing.
 */
import { randomHex } from "../discovery/identity.ts";
import { helloProblem, rootCommits } from "../workers/hello.ts";
import { TaskStoreUnavailable } from "../tasks/client.ts";

/** Options of {@link serverProblem}. */
export interface ServerCheckOptions {
  /** The orchestrator's URL (`--server`). */
  server: string;
  /** The worker's token, never sent here. */
  token?: string;
  /** The worker's clone (its repository's root commits). */
  root: string;
  timeoutMs?: number;
  signal?: AbortSignal;
}

/**
 * Why the worker must not register with the server (its words, then the fix), undefined when it
 * proved it is the orchestrator of this clone's repository that issued the token. A server that
 * does not answer throws (the caller waits for it as for any registration).
 */
export async function serverProblem(o: ServerCheckOptions): Promise<string | undefined> {
  const nonce = randomHex(32);
  const url = new URL("/workers/hello", o.server);
  url.searchParams.set("nonce", nonce);
  const signal = AbortSignal.any([
    AbortSignal.timeout(o.timeoutMs ?? 30_000),
    ...(o.signal ? [o.signal] : []),
  ]);
  // No Authorization header: the token goes only to a server that proved it knows it.
  let res: Response;
  try {
    res = await fetch(url, { headers: { accept: "application/json" }, signal });
  } catch (e) {
    if (o.signal?.aborted) throw e;
    // Not up yet, or restarting: asked again, as a registration is.
    throw new TaskStoreUnavailable(o.server, `${(e as Error).message}`.slice(0, 300));
  }
  if (res.status === 502 || res.status === 503 || res.status === 504) {
    await res.body?.cancel();
    throw new TaskStoreUnavailable(o.server, `HTTP ${res.status}`);
  }
  if (!res.ok) {
    await res.body?.cancel();
    return `it answered GET /workers/hello with HTTP ${res.status}: it is not a service ` +
      "orchestrator (or one too old to prove who it is)";
  }
  const answer = await res.json().catch(() => null);
  return helloProblem(answer, nonce, { token: o.token, rootCommits: await rootCommits(o.root) });
}
