/** SHA-256 helpers over node:crypto (one native call per row; far cheaper than awaiting crypto.subtle). */
import { createHash, createHmac, timingSafeEqual } from "node:crypto";

/** The `prev` of the first row and the head of an empty chain. */
export const ZERO_HASH = "0".repeat(64);

/** Lower-case hex SHA-256 of a string (UTF-8) or bytes. */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

/** Lower-case hex HMAC-SHA256 of `data` under `key`. */
export function hmacSha256Hex(key: Uint8Array | string, data: string | Uint8Array): string {
  return createHmac("sha256", key).update(data).digest("hex");
}

/** Constant-time equality of two strings (false on length mismatch, without early exit on content). */
export function constantTimeEqual(a: string, b: string): boolean {
  const ab = new TextEncoder().encode(a);
  const bb = new TextEncoder().encode(b);
  if (ab.length !== bb.length) {
    timingSafeEqual(ab, ab);
    return false;
  }
  return timingSafeEqual(ab, bb);
}

/** Matches a lower-case 64-hex SHA-256 digest. */
export const HEX64 = /^[0-9a-f]{64}$/;
