/**
 * How a worker knows the orchestrator it joins is the one it means before it sends its token
 * (issue 35: pointed at another team's server on the same port, a worker registered with that
 * run and sent it its token). The worker asks `GET /workers/hello?nonce=<hex>` with no token;
 * the server answers proofs that only the right orchestrator can give and that tell anyone else
 * nothing: an HMAC of the nonce under each token it accepts from workers (the worker finds its
 * own token's among them), and one under the repository's root commits (a server of another
 * repository cannot give it). A server without tokens binds to loopback only; there the
 * repository proof is what tells two teams' servers on one machine apart.
 */
import { git } from "../git/git.ts";
import { constantTimeEqual, hmacSha256Hex } from "../journal/hash.ts";

/** What `GET /workers/hello` answers. */
export interface HelloAnswer {
  service: "service";
  /** HMACs of the nonce under every token a worker may present (scope worker or operator). */
  tokens: string[];
  /** HMAC of the nonce under the repository's root commits, when the server could read them. */
  repository?: string;
}

/** The message every proof signs for `nonce`. */
function message(nonce: string): string {
  return `service worker hello v1\n${nonce}`;
}

/** The proof of knowing `key` for `nonce` (pure). */
export function helloProof(key: string, nonce: string): string {
  return hmacSha256Hex(key, message(nonce));
}

/** The server's answer for `nonce` (pure). */
export function helloAnswer(
  nonce: string,
  tokens: readonly string[],
  rootCommits: string | undefined,
): HelloAnswer {
  return {
    service: "service",
    tokens: tokens.map((t) => helloProof(t, nonce)),
    ...(rootCommits ? { repository: helloProof(rootCommits, nonce) } : {}),
  };
}

/** Why the worker must not send its token to the server that gave `answer`, or undefined. */
export function helloProblem(
  answer: unknown,
  nonce: string,
  mine: { token?: string; rootCommits?: string },
): string | undefined {
  const a = answer as Partial<HelloAnswer> | null;
  if (!a || a.service !== "service" || !Array.isArray(a.tokens)) {
    return "it did not answer as a service orchestrator does";
  }
  if (mine.token) {
    const proof = helloProof(mine.token, nonce);
    if (!a.tokens.some((t) => typeof t === "string" && constantTimeEqual(t, proof))) {
      return "it does not know this worker's token: it is not the orchestrator that issued it";
    }
  }
  if (mine.rootCommits && typeof a.repository === "string") {
    if (!constantTimeEqual(a.repository, helloProof(mine.rootCommits, nonce))) {
      return "it serves another repository than this clone's";
    }
  }
  return undefined;
}

/**
 * The root commits of the repository at `root`, sorted and joined (its identity across clones);
 * undefined in a shallow clone (its roots are cut) or when git cannot tell.
 */
export async function rootCommits(root: string): Promise<string | undefined> {
  const shallow = await git(["rev-parse", "--is-shallow-repository"], {
    cwd: root,
    allowFailure: true,
  });
  if (shallow.code !== 0 || shallow.stdout.trim() === "true") return undefined;
  const roots = await git(["rev-list", "--max-parents=0", "HEAD"], {
    cwd: root,
    allowFailure: true,
  });
  if (roots.code !== 0) return undefined;
  const list = roots.stdout.split("\n").map((l) => l.trim()).filter(Boolean).sort();
  return list.length > 0 ? list.join(",") : undefined;
}
