/**
 * GET /identity?nonce=<hex> — the server proves it serves this workspace (lib/discovery): the
 * answer is `{"proof": HMAC(instance secret, workspace path + nonce)}`, which only a command
 * that can read the workspace's `.sdd/runtime/server.json` can check, and which tells anyone
 * else nothing. A JSON route like the others: bearer auth and the origin guard apply.
 */
import type { Ctx } from "../lib/http/context.ts";
import { HttpError } from "../lib/http/errors.ts";
import { identityProof, NONCE_PATTERN } from "../lib/discovery/identity.ts";
import { routePolicy } from "../lib/http/route_policy.ts";

/** What this URL requires (routes/_app.ts mounts it; docs/security.md lists it). */
export const policy = routePolicy({ GET: "reader" });

/** Answer the proof for the request's nonce. */
export function GET(c: Ctx): Response {
  const identity = c.get("app").identity;
  if (!identity) throw new HttpError(404, "no_identity", "this server has no identity to prove");
  const nonce = c.req.query("nonce") ?? "";
  if (!NONCE_PATTERN.test(nonce)) {
    throw new HttpError(400, "invalid_nonce", "nonce must be 32 to 128 lower-case hex digits");
  }
  c.header("Cache-Control", "no-store");
  return c.json({ proof: identityProof(identity, nonce) });
}
