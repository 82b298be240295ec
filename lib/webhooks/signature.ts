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
import {
  constantTimeEqual,
  constantTimeHexEqual,
  hmacSha256,
  hmacSha256Hex,
} from "../journal/hash.ts";

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

/** A tracker's scheme and shared secret: what a delivery's signature header is checked with. */
export interface SignatureKey {
  scheme: SignatureScheme;
  /** Empty: nothing verifies. */
  secret: string;
}

/**
 * True when `header` proves `body` under the key's secret. A missing header, a wrong prefix, a
 * truncated or re-encoded digest all fail; hex digits are compared case-insensitively. The body's
 * HMAC is compared as bytes with the hex the header carries, in constant time.
 */
export function verifySignature(
  body: Uint8Array,
  header: string | null,
  { scheme, secret }: SignatureKey,
): boolean {
  if (header === null || secret === "") return false;
  switch (scheme) {
    case "token":
      return constantTimeEqual(header, secret);
    case "hub-sha256": {
      const digest = hmacSha256(secret, body);
      const value = header.trim();
      return value.startsWith(HUB_PREFIX) && constantTimeHexEqual(digest, value, HUB_PREFIX.length);
    }
    case "raw-hex":
      return constantTimeHexEqual(hmacSha256(secret, body), header.trim());
  }
}

/** The prefix of a `hub-sha256` header, as sent (only the hex after it may be either case). */
const HUB_PREFIX = "sha256=";
