/**
 * The journal and the audit chain vouch for each other (docs/security.md "Two chains"). A review
 * action signs its audit entry (binding the journal head it chains onto) and then appends the
 * journal row citing that entry's line hash. So:
 *
 * - every review row citing an entry on the chain chains onto the head that entry signed
 *   (`prev` = the entry's `journal_head`) and attests it (`journal_head` = `prev`);
 * - every review entry has its row, or else the server stopped between the two appends (the
 *   action did not happen: no receipt was returned) and the head it signed is still on the
 *   journal;
 * - a review row citing an entry that is not on the chain, after the chain started vouching for
 *   that run, has lost its entry.
 *
 * A journal edited and re-hashed from some row on verifies as a chain, but contradicts the
 * signed heads: the first disagreeing row is named. Rows before the chain vouches for a run
 * (an imported run, the golden fixture's placeholders) are reported as unattested, not as faults.
 */
import { sha256Hex, ZERO_HASH } from "../journal/hash.ts";
import { REVIEW_ACTION_EVENT } from "./chain.ts";
import type { AuditEntry } from "./chain.ts";

/** One review entry of the audit chain, as the cross-check needs it. */
export interface SignedReview {
  seq: number;
  lineHash: string;
  runId: string;
  taskId: string;
  decision: string;
  journalHead: string;
}

/** One review row of a journal. */
export interface ReviewRow {
  seq: number;
  prev: string;
  journalHead: unknown;
  auditEventHash: unknown;
  taskId: unknown;
  decision: unknown;
}

/** What the cross-check knows of one run's journal. */
export interface JournalFacts {
  /** Every row's hash (the heads an entry may have signed). */
  hashes: Set<string>;
  reviews: ReviewRow[];
}

/** Kinds of disagreement. */
export type FindingKind =
  | "rehashed_row"
  | "head_not_on_journal"
  | "entry_without_row"
  | "row_without_entry"
  | "binding_mismatch"
  | "journal_missing";

/** One disagreement between the two chains. */
export interface CrossFinding {
  kind: FindingKind;
  runId: string;
  /** The journal row it concerns (the first that disagrees), if any. */
  rowSeq?: number;
  /** The audit entry it concerns, if any. */
  auditSeq?: number;
  /** True when the journal itself is contradicted (it was edited): board unverified. */
  journalContradicted: boolean;
  message: string;
}

/** The outcome: findings (faults), and rows the chain does not (yet) vouch for. */
export interface CrossReport {
  findings: CrossFinding[];
  unattested: { runId: string; rowSeq: number }[];
}

/** The review entries of an audit chain's text (lines that parse; the chain is verified apart). */
export function signedReviews(auditText: string): SignedReview[] {
  const out: SignedReview[] = [];
  for (const line of auditText.split("\n")) {
    if (!line) continue;
    let entry: AuditEntry;
    try {
      entry = JSON.parse(line);
    } catch {
      continue;
    }
    if (entry?.event !== REVIEW_ACTION_EVENT || typeof entry.data !== "object") continue;
    const d = entry.data;
    out.push({
      seq: entry.seq,
      lineHash: sha256Hex(line),
      runId: String(d.run_id),
      taskId: String(d.task_id),
      decision: String(d.decision),
      journalHead: String(d.journal_head),
    });
  }
  return out;
}

/** The facts of a journal's text (rows that parse). */
export function journalFacts(text: string): JournalFacts {
  const hashes = new Set<string>();
  const reviews: ReviewRow[] = [];
  for (const line of text.split("\n")) {
    if (!line) continue;
    let row: {
      seq?: number;
      prev?: string;
      hash?: string;
      type?: string;
      data?: Record<string, unknown>;
    };
    try {
      row = JSON.parse(line);
    } catch {
      continue;
    }
    if (typeof row.hash === "string") hashes.add(row.hash);
    if (row.type === "task_review_decision" && row.data && typeof row.seq === "number") {
      reviews.push({
        seq: row.seq,
        prev: String(row.prev),
        journalHead: row.data.journal_head,
        auditEventHash: row.data.audit_event_hash,
        taskId: row.data.task_id,
        decision: row.data.decision,
      });
    }
  }
  return { hashes, reviews };
}

/** Cross-check one run (pure): its journal facts against the entries signed for it. */
export function crossCheckRun(
  runId: string,
  journal: JournalFacts | undefined,
  entries: SignedReview[],
): CrossReport {
  const findings: CrossFinding[] = [];
  const unattested: CrossReport["unattested"] = [];
  const mine = entries.filter((e) => e.runId === runId);
  if (!journal) {
    if (mine.length > 0) {
      findings.push({
        kind: "journal_missing",
        runId,
        auditSeq: mine[0].seq,
        journalContradicted: false,
        message: `audit entry ${
          mine[0].seq
        } signed a review of run ${runId}, whose journal is gone`,
      });
    }
    return { findings, unattested };
  }
  const byLine = new Map(mine.map((e) => [e.lineHash, e]));
  const cited = new Set<string>();
  let vouchedFrom = Infinity;
  for (const row of journal.reviews) {
    const entry = typeof row.auditEventHash === "string"
      ? byLine.get(row.auditEventHash)
      : undefined;
    if (entry && vouchedFrom === Infinity) vouchedFrom = row.seq;
  }
  for (const row of journal.reviews) {
    const entry = typeof row.auditEventHash === "string"
      ? byLine.get(row.auditEventHash)
      : undefined;
    if (!entry) {
      if (row.seq > vouchedFrom) {
        findings.push({
          kind: "row_without_entry",
          runId,
          rowSeq: row.seq,
          journalContradicted: false,
          message: `row ${row.seq} of run ${runId} cites audit entry ${
            String(row.auditEventHash).slice(0, 12)
          }…, which is not on the audit chain (entry removed, or the row forged)`,
        });
      } else unattested.push({ runId, rowSeq: row.seq });
      continue;
    }
    cited.add(entry.lineHash);
    if (row.prev !== entry.journalHead || row.journalHead !== entry.journalHead) {
      findings.push({
        kind: "rehashed_row",
        runId,
        rowSeq: row.seq,
        auditSeq: entry.seq,
        journalContradicted: true,
        message:
          `row ${row.seq} of run ${runId} chains onto ${row.prev.slice(0, 12)}…, but audit ` +
          `entry ${entry.seq} signed journal head ${
            entry.journalHead.slice(0, 12)
          }… for it: the journal was edited and re-hashed`,
      });
    } else if (row.taskId !== entry.taskId || row.decision !== entry.decision) {
      findings.push({
        kind: "binding_mismatch",
        runId,
        rowSeq: row.seq,
        auditSeq: entry.seq,
        journalContradicted: true,
        message: `row ${row.seq} of run ${runId} records ${String(row.decision)} on ${
          String(row.taskId)
        }, but audit entry ${entry.seq} signed ${entry.decision} on ${entry.taskId}`,
      });
    }
  }
  for (const entry of mine) {
    if (cited.has(entry.lineHash)) continue;
    const onChain = entry.journalHead === ZERO_HASH || journal.hashes.has(entry.journalHead);
    findings.push(
      onChain
        ? {
          kind: "entry_without_row",
          runId,
          auditSeq: entry.seq,
          journalContradicted: false,
          message:
            `audit entry ${entry.seq} (${entry.decision} on ${entry.taskId}, run ${runId}) ` +
            "has no journal row: the server stopped between the two appends, so the action did " +
            "not happen and no receipt was returned (review again if it is still wanted)",
        }
        : {
          kind: "head_not_on_journal",
          runId,
          auditSeq: entry.seq,
          journalContradicted: true,
          message: `audit entry ${entry.seq} signed journal head ${
            entry.journalHead.slice(0, 12)
          }… of run ${runId}, which no row of its journal has: the journal was rewritten after it was signed`,
        },
    );
  }
  findings.sort((a, b) => (a.rowSeq ?? Infinity) - (b.rowSeq ?? Infinity));
  return { findings, unattested };
}

/** Read `path` as text; undefined when it does not exist. */
export async function readIfExists(path: string): Promise<string | undefined> {
  try {
    return await Deno.readTextFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    throw e;
  }
}
