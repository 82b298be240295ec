/**
 * A server's identity: the real path of the workspace it serves and a random instance secret
 * it made at start and wrote only into that workspace's `.sdd/runtime/server.json`. A command
 * proves a server is its workspace's own by sending a fresh nonce to `GET /identity` and
 * checking the answer, an HMAC of the nonce and the workspace path under the secret: the
 * answer shows nothing a page or another workspace could use, a server of another workspace
 * (or of a copy of this one) cannot give it, and an old answer cannot be replayed.
 */
import { hmacSha256Hex } from "../journal/hash.ts";

/** What a running server knows of itself. */
export interface ServerIdentity {
  /** Random hex secret of this server process (also in the workspace's server.json). */
  instance: string;
  /** The real path of the workspace it serves. */
  workspace: string;
}

/** A nonce as `GET /identity` accepts it: 32 to 128 lower-case hex digits. */
export const NONCE_PATTERN = /^[0-9a-f]{32,128}$/;

/** The proof a server gives for `nonce` (pure). */
export function identityProof(identity: ServerIdentity, nonce: string): string {
  return hmacSha256Hex(identity.instance, `service identity v1\n${identity.workspace}\n${nonce}`);
}

/** `bytes` random bytes as lower-case hex (instance secrets, nonces). */
export function randomHex(bytes: number): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(bytes)))
    .map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** A new identity for a server of the workspace at `root`. */
export async function newServerIdentity(root: string): Promise<ServerIdentity> {
  return { instance: randomHex(32), workspace: await Deno.realPath(root) };
}
