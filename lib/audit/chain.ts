/**
 * The signed audit chain (DESIGN.md §6): `.sdd/audit/audit.jsonl`, one canonical JSON entry per
 * line, `hmac` = HMAC-SHA256(key, canonical entry without `hmac`), `prev` = the previous entry's
 * `hmac`. A receipt's `audit_event_hash` is the SHA-256 of the entry's line, so anyone can match
 * a receipt to its line without the key; only the key holder can forge or verify an entry.
 */
import { canonicalJson, type JsonValue } from "../journal/canonical_json.ts";
import { constantTimeEqual, HEX64, hmacSha256Hex, sha256Hex, ZERO_HASH } from "../journal/hash.ts";
import type { ChainPosition } from "../journal/row.ts";

/** The event name of a review-board action. */
export const REVIEW_ACTION_EVENT = "review_board.action";

/** The event name of a sealed evidence bundle (DESIGN.md §10). */
export const EVIDENCE_SEALED_EVENT = "evidence.sealed";

/** One audit entry as stored. */
export interface AuditEntry {
  data: Record<string, JsonValue>;
  event: string;
  hmac: string;
  prev: string;
  principal: string;
  seq: number;
  ts: string;
  v: number;
}

/** What the caller supplies for a new entry. */
export interface AuditEvent {
  event: string;
  principal: string;
  data: Record<string, JsonValue>;
}

/** The first entry that fails verification, with evidence. */
export interface AuditFault {
  seq: number;
  reason: string;
  expected?: string;
  actual?: string;
}

/** Result of walking an audit chain. */
export interface AuditReport {
  ok: boolean;
  entries: number;
  /** `hmac` of the last entry (ZERO_HASH when empty): the next entry's `prev`. */
  head: string;
  fault?: AuditFault;
}

/** Build an entry, its stored line and the line's SHA-256 (the receipt's `audit_event_hash`). */
export function signAuditEntry(
  key: Uint8Array,
  event: AuditEvent,
  { prev, seq, ts }: ChainPosition,
): { entry: AuditEntry; line: string; lineHash: string } {
  const unsigned = {
    data: event.data,
    event: event.event,
    prev,
    principal: event.principal,
    seq,
    ts,
    v: 1,
  };
  const hmac = hmacSha256Hex(key, canonicalJson(unsigned));
  const entry: AuditEntry = { ...unsigned, hmac };
  const line = canonicalJson(entry);
  return { entry, line, lineHash: sha256Hex(line) };
}

/** Verify every entry of an audit chain text (pure). Reports the first bad entry. */
export function verifyAuditText(key: Uint8Array, text: string): AuditReport {
  let head = ZERO_HASH;
  let seq = 0;
  const lines = text.split("\n");
  const tail = lines.pop()!; // "" when the text ends with a newline
  for (const line of lines) {
    const bad = (reason: string, expected?: string, actual?: string): AuditReport => ({
      ok: false,
      entries: seq,
      head,
      fault: { seq, reason, expected, actual },
    });
    let entry: AuditEntry;
    try {
      entry = JSON.parse(line);
    } catch {
      return bad("line does not parse");
    }
    if (
      typeof entry !== "object" || entry === null || typeof entry.hmac !== "string" ||
      !HEX64.test(entry.hmac)
    ) {
      return bad("not an audit entry (missing or malformed hmac)");
    }
    if (entry.seq !== seq) return bad("seq out of order", String(seq), String(entry.seq));
    if (entry.prev !== head) {
      return bad("prev does not chain onto the previous entry", head, String(entry.prev));
    }
    const { hmac, ...unsigned } = entry;
    let expected: string;
    try {
      expected = hmacSha256Hex(key, canonicalJson(unsigned));
    } catch {
      return bad("entry has no canonical form");
    }
    if (!constantTimeEqual(expected, hmac)) {
      return bad("hmac does not verify (edited entry or wrong key)");
    }
    head = hmac;
    seq++;
  }
  if (tail !== "") {
    return { ok: false, entries: seq, head, fault: { seq, reason: "torn last line (no newline)" } };
  }
  return { ok: true, entries: seq, head };
}
