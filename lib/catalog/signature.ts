/**
 * Best-effort entry signatures (spec §9 rule 5): Ed25519 over the canonical JSON of the entry as
 * written in the document, without its `signature` field.
 */
import { canonicalBytes } from "../journal/canonical_json.ts";

/** What the signature check found for one entry. */
export type SignatureStatus =
  | "valid"
  | "invalid"
  /** The entry has no signature. */
  | "missing"
  /** No public key is configured: nothing was checked. */
  | "unchecked";

function decodeBase64(text: string): Uint8Array<ArrayBuffer> {
  const b64 = text.trim().replace(/-/g, "+").replace(/_/g, "/");
  const padded = b64 + "=".repeat((4 - (b64.length % 4)) % 4);
  const bin = atob(padded);
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

/** A configured key that cannot be used; names the fix. */
export class PublicKeyError extends Error {
  /** Machine-readable kind of failure. */
  readonly code = "catalog_public_key";
  constructor(message: string) {
    super(message);
    this.name = "PublicKeyError";
  }
}

/** Import a base64 (or base64url) raw 32-byte Ed25519 public key. */
export async function importPublicKey(base64: string): Promise<CryptoKey> {
  let raw: Uint8Array<ArrayBuffer>;
  try {
    raw = decodeBase64(base64);
  } catch {
    throw new PublicKeyError("mcp_catalog.public_key is not base64");
  }
  if (raw.length !== 32) {
    throw new PublicKeyError(
      `mcp_catalog.public_key decodes to ${raw.length} bytes: an Ed25519 public key is 32 raw bytes, base64-encoded`,
    );
  }
  return await crypto.subtle.importKey("raw", raw, { name: "Ed25519" }, false, ["verify"]);
}

/** The bytes a catalog signer signs: the entry's canonical JSON without `signature`. */
export function signedBytes(rawEntry: Record<string, unknown>): Uint8Array<ArrayBuffer> {
  const { signature: _omit, ...rest } = rawEntry;
  return new Uint8Array(canonicalBytes(rest));
}

/** Check one raw entry's signature with `key` (undefined: unchecked). */
export async function entrySignatureStatus(
  rawEntry: Record<string, unknown>,
  key: CryptoKey | undefined,
): Promise<SignatureStatus> {
  const signature = rawEntry.signature;
  if (typeof signature !== "string" || signature === "") return "missing";
  if (!key) return "unchecked";
  let sig: Uint8Array<ArrayBuffer>;
  try {
    sig = decodeBase64(signature);
  } catch {
    return "invalid";
  }
  if (sig.length !== 64) return "invalid";
  const ok = await crypto.subtle.verify("Ed25519", key, sig, signedBytes(rawEntry));
  return ok ? "valid" : "invalid";
}
