/**
 * Signature checks of tracker webhooks (spec §4.2 rules 1 and 3): pure functions over the raw body
 * bytes, every comparison constant-time. The three schemes the built-in handlers use:
 *
 * | scheme | header value |
 * |---|---|
 * | `hub-sha256` | `sha256=` + hex HMAC-SHA256 of the body (tracker_a, tracker_b) |
 * | `raw-hex` | hex HMAC-SHA256 of the body (tracker_d, tracker_e) |
 * | `token` | the shared secret itself (tracker_c) |
 */
import { constantTimeEqual, hmacSha256Hex } from "../journal/hash.ts";

/** How a tracker proves a delivery is from it. */
export type SignatureScheme = "hub-sha256" | "raw-hex" | "token";

/** The signature header value a tracker using `scheme` would send for `body` (tests, the bench). */
export function signBody(
  scheme: SignatureScheme,
  secret: string,
  body: Uint8Array | string,
): string {
  switch (scheme) {
    case "hub-sha256":
      return `sha256=${hmacSha256Hex(secret, body)}`;
    case "raw-hex":
      return hmacSha256Hex(secret, body);
    case "token":
      return secret;
  }
}

/**
 * True when `header` proves `body` under `secret`. A missing header, a wrong prefix, a truncated
 * or re-encoded digest all fail; hex digits are compared case-insensitively.
 */
export function verifySignature(
  scheme: SignatureScheme,
  secret: string,
  body: Uint8Array,
  header: string | null,
): boolean {
  if (header === null || secret === "") return false;
  switch (scheme) {
    case "token":
      return constantTimeEqual(header, secret);
    case "hub-sha256": {
      const expected = `sha256=${hmacSha256Hex(secret, body)}`;
      return constantTimeEqual(lowerHexTail(header, "sha256="), expected);
    }
    case "raw-hex":
      return constantTimeEqual(header.trim().toLowerCase(), hmacSha256Hex(secret, body));
  }
}

/** `prefix` kept as sent, the digest after it lower-cased (hex is case-insensitive). */
function lowerHexTail(value: string, prefix: string): string {
  const v = value.trim();
  return v.startsWith(prefix) ? prefix + v.slice(prefix.length).toLowerCase() : v;
}
