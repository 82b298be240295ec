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

/** HMAC-SHA256 of `data` under `key`, as its 32 bytes. */
export function hmacSha256(key: Uint8Array | string, data: string | Uint8Array): Uint8Array {
  return createHmac("sha256", key).update(data).digest();
}

/** Value of each hex digit by character code (either case), -1 for anything else. */
const HEX_VALUE = new Int8Array(128).fill(-1);
for (let i = 0; i < 16; i++) {
  HEX_VALUE["0123456789abcdef".charCodeAt(i)] = i;
  HEX_VALUE["0123456789ABCDEF".charCodeAt(i)] = i;
}

/**
 * True when `text` from index `from` on is exactly the hex (either case) of `digest`. The
 * comparison is constant-time in the digest: every byte is compared, with no early exit; only
 * the length of `text` and whether it is hex (both the sender's, not secret) decide early.
 */
export function constantTimeHexEqual(digest: Uint8Array, text: string, from = 0): boolean {
  if (text.length - from !== digest.length * 2) return false;
  let diff = 0;
  let bad = 0;
  for (let i = 0; i < digest.length; i++) {
    const a = text.charCodeAt(from + 2 * i);
    const b = text.charCodeAt(from + 2 * i + 1);
    const hi = a < 128 ? HEX_VALUE[a] : -1;
    const lo = b < 128 ? HEX_VALUE[b] : -1;
    bad |= (hi | lo) & 0x100; // -1 has every bit set
    diff |= digest[i] ^ ((hi << 4) | lo);
  }
  return bad === 0 && diff === 0;
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
