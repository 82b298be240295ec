/**
 * GET /workers/hello?nonce=<hex> — public: before a worker sends its token it checks that this
 * is the orchestrator it means (lib/workers/hello.ts). The answer holds only HMACs of the nonce
 * (under each token a worker may present, and under the repository's root commits), which tell
 * a caller without those secrets nothing.
 */
import type { Ctx } from "../../lib/http/context.ts";
import { HttpError } from "../../lib/http/errors.ts";
import { NONCE_PATTERN } from "../../lib/discovery/identity.ts";
import { routePolicy } from "../../lib/http/route_policy.ts";
import { helloAnswer, rootCommits } from "../../lib/workers/hello.ts";
import { secretEnv } from "../../lib/auth/secret_env.ts";

/** What this URL requires (routes/_app.ts mounts it; docs/security.md lists it). */
export const policy = routePolicy({ GET: "public" });

const roots = new Map<string, Promise<string | undefined>>();

/** Answer the proofs for the request's nonce. */
export async function GET(c: Ctx): Promise<Response> {
  const nonce = c.req.query("nonce") ?? "";
  if (!NONCE_PATTERN.test(nonce)) {
    throw new HttpError(400, "invalid_nonce", "nonce must be 32 to 128 lower-case hex digits");
  }
  const app = c.get("app");
  const tokens = app.tokenSpecs().filter((s) => s.scope === "worker" || s.scope === "operator")
    .flatMap((s) => {
      // Its variable, else the file `<token_env>_FILE` names (read again when it changes).
      const value = secretEnv(s.token_env);
      return value ? [value] : [];
    });
  let root = roots.get(app.paths.root);
  if (!root) roots.set(app.paths.root, root = rootCommits(app.paths.root));
  c.header("Cache-Control", "no-store");
  return c.json(helloAnswer(nonce, tokens, await root));
}
