/**
 * Evidence bundles (spec §2.5, DESIGN.md §10), the pure part: the canonical bundle of one task's
 * verification, its HMAC signature and its hash.
 *
 * A bundle is the canonical JSON (DESIGN.md §3) of:
 * `{schema_version, run_id, task_id, session_id, commit, tree, sealed_at, producers, verdict,
 * evidence, isolation}` (the *core*), plus `signature` = HMAC-SHA256 with the audit key over the canonical
 * core, `audit_entry_hash` = SHA-256 of the `evidence.sealed` audit line that records the
 * signature, and `bundle_hash` = `sha256:` + SHA-256 of the canonical bundle without
 * `bundle_hash`. A producer's output is stored beside it, named by the hex SHA-256 of its bytes.
 */
import { canonicalJson, type JsonValue } from "../journal/canonical_json.ts";
import { constantTimeEqual, hmacSha256Hex, sha256Hex } from "../journal/hash.ts";
import type { Evidence } from "./ledger.ts";

/** Version of the bundle layout. */
export const BUNDLE_SCHEMA_VERSION = 1;

/** One producer as the bundle records it. */
export interface BundleProducer {
  name: string;
  command: string;
  exit_code: number;
  timed_out: boolean;
  /** More output was written than was kept. */
  truncated: boolean;
  duration_ms: number;
  output: { sha256: string; size: number };
}

/** One gate check (completion signal or quality gate) and its outcome. */
export interface BundleCheck {
  kind: string;
  detail: string;
  name?: string;
  passed: boolean;
  exit_code?: number;
}

/** The signed part of a bundle. */
export interface BundleCore {
  schema_version: number;
  run_id: string;
  task_id: string;
  session_id: string;
  /** The candidate merge commit the gates and producers ran on, and its tree. */
  commit: string;
  tree: string;
  sealed_at: string;
  producers: BundleProducer[];
  verdict: { passed: boolean; checks: BundleCheck[] };
  evidence: Evidence & { verified: boolean };
  /**
   * Where the agent whose work this is ran: `worktree` or `container:<runtime>:<image id>`
   * (DESIGN.md §14); absent in bundles sealed before it was recorded.
   */
  isolation?: string;
}

/** A sealed bundle as stored in `bundle.json`. */
export interface SealedBundle extends BundleCore {
  signature: { alg: "HMAC-SHA256"; value: string };
  audit_entry_hash: string;
  bundle_hash: string;
}

/** `sha256:` + hex digest of bytes. */
export function digestOf(bytes: Uint8Array): string {
  return "sha256:" + sha256Hex(bytes);
}

/** HMAC-SHA256 (hex) of the canonical core with `key`. */
export function signCore(key: Uint8Array, core: BundleCore): string {
  return hmacSha256Hex(key, canonicalJson(core as unknown as JsonValue));
}

/** The core of a stored bundle: every key except the signature, audit hash and bundle hash. */
function coreOf(bundle: Record<string, unknown>): Record<string, unknown> {
  const { signature: _s, audit_entry_hash: _a, bundle_hash: _b, ...core } = bundle;
  return core;
}

/** `sha256:` hash of a bundle's canonical JSON without its `bundle_hash` (throws if not canonical). */
export function bundleHash(bundle: Record<string, unknown>): string {
  const { bundle_hash: _ignored, ...rest } = bundle;
  return "sha256:" + sha256Hex(canonicalJson(rest));
}

/** Assemble the sealed bundle from its core, signature and audit entry hash. */
export function sealBundle(
  core: BundleCore,
  signature: string,
  auditEntryHash: string,
): SealedBundle {
  const unsealed = {
    ...core,
    signature: { alg: "HMAC-SHA256" as const, value: signature },
    audit_entry_hash: auditEntryHash,
  };
  return { ...unsealed, bundle_hash: bundleHash(unsealed) };
}

/** True when `bundle.signature.value` is the HMAC of its core under `key` (constant time). */
export function signatureValid(key: Uint8Array, bundle: Record<string, unknown>): boolean {
  const sig = bundle.signature as { value?: unknown } | undefined;
  if (!sig || typeof sig.value !== "string") return false;
  let expected: string;
  try {
    expected = hmacSha256Hex(key, canonicalJson(coreOf(bundle)));
  } catch {
    return false;
  }
  return constantTimeEqual(expected, sig.value);
}
