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
import { EVIDENCE_SEALED_EVENT, REVIEW_ACTION_EVENT } from "./chain.ts";
import type { AuditEntry } from "./chain.ts";

/**
 * The fields an audit entry binds besides the head, each read from the entry and from the
 * journal row; a field an older entry does not carry (`scope`, added later) reads undefined
 * there and is not compared. The note is compared by digest, so messages never echo it.
 */
const BOUND_FIELDS = {
  task: { entry: (e: AuditEntry) => e.data.task_id, row: (d: RowData) => d.task_id },
  decision: { entry: (e: AuditEntry) => e.data.decision, row: (d: RowData) => d.decision },
  principal: { entry: (e: AuditEntry) => e.principal, row: (d: RowData) => d.principal },
  scope: { entry: (e: AuditEntry) => e.data.scope, row: (d: RowData) => d.scope },
  note: {
    entry: (e: AuditEntry) => noteDigest(e.data.note),
    row: (d: RowData) => noteDigest(d.note),
  },
  projection_hash: {
    entry: (e: AuditEntry) => e.data.projection_hash,
    row: (d: RowData) => d.projection_hash,
  },
  diff_sha256: {
    entry: (e: AuditEntry) => "diff_sha256" in e.data ? e.data.diff_sha256 : undefined,
    row: (d: RowData) => d.diff_sha256 ?? null,
  },
} as const;

/** A field an audit entry binds (besides the journal head). */
type BoundField = keyof typeof BOUND_FIELDS;

type RowData = Record<string, unknown>;

/** `sha256:<hex>` of a note, `none` when there is none. */
function noteDigest(note: unknown): string {
  return typeof note === "string" ? `sha256:${sha256Hex(note)}` : "none";
}

/** The values bound fields read from an entry or a row (undefined ones left out). */
type Bound = Partial<Record<BoundField, unknown>>;

function boundOf(read: (field: (typeof BOUND_FIELDS)[BoundField]) => unknown): Bound {
  const out: Bound = {};
  for (const name of Object.keys(BOUND_FIELDS) as BoundField[]) {
    const value = read(BOUND_FIELDS[name]);
    if (value !== undefined) out[name] = value;
  }
  return out;
}

/** One review entry of the audit chain, as the cross-check needs it. */
export interface SignedReview {
  seq: number;
  lineHash: string;
  runId: string;
  taskId: string;
  decision: string;
  journalHead: string;
  /** What the entry binds besides the head (fields it predates left out). */
  bound: Bound;
}

/** One review row of a journal. */
export interface ReviewRow {
  seq: number;
  prev: string;
  journalHead: unknown;
  auditEventHash: unknown;
  /** The row's values of the fields an entry binds. */
  bound: Bound;
}

/** An `evidence.sealed` entry: the service signed a task's evidence bundle for a run. */
export interface SignedSeal {
  seq: number;
  lineHash: string;
  runId: string;
  taskId: string;
}

/** A `task_evidence_sealed` row: the task and, in rows written since, the entry it follows. */
export interface SealRow {
  seq: number;
  taskId: unknown;
  auditEventHash?: unknown;
}

/** What the cross-check knows of one run's journal. */
export interface JournalFacts {
  /** Every row's hash (the heads an entry may have signed). */
  hashes: Set<string>;
  reviews: ReviewRow[];
  /** Its `task_evidence_sealed` rows (absent: none). */
  seals?: SealRow[];
}

/** Kinds of disagreement. */
export type FindingKind =
  | "rehashed_row"
  | "head_not_on_journal"
  | "entry_without_row"
  | "row_without_entry"
  | "binding_mismatch"
  | "seal_without_row"
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

/** The entries of an audit chain the cross-check reads. */
export interface SignedEntries {
  reviews: SignedReview[];
  seals: SignedSeal[];
}

/** The review and seal entries of an audit chain's text (lines that parse; verified apart). */
export function signedEntries(auditText: string): SignedEntries {
  const out: SignedEntries = { reviews: [], seals: [] };
  for (const line of auditText.split("\n")) {
    if (!line) continue;
    let entry: AuditEntry;
    try {
      entry = JSON.parse(line);
    } catch {
      continue;
    }
    if (typeof entry?.data !== "object" || entry.data === null) continue;
    const d = entry.data;
    if (entry.event === EVIDENCE_SEALED_EVENT) {
      out.seals.push({
        seq: entry.seq,
        lineHash: sha256Hex(line),
        runId: String(d.run_id),
        taskId: String(d.task_id),
      });
    }
    if (entry.event !== REVIEW_ACTION_EVENT) continue;
    out.reviews.push({
      seq: entry.seq,
      lineHash: sha256Hex(line),
      runId: String(d.run_id),
      taskId: String(d.task_id),
      decision: String(d.decision),
      journalHead: String(d.journal_head),
      bound: boundOf((f) => f.entry(entry)),
    });
  }
  return out;
}

/** The facts of a journal's text (rows that parse). */
export function journalFacts(text: string): JournalFacts {
  const hashes = new Set<string>();
  const reviews: ReviewRow[] = [];
  const seals: SealRow[] = [];
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
    const data = row.data;
    if (!data || typeof data !== "object" || typeof row.seq !== "number") continue;
    if (row.type === "task_evidence_sealed") {
      seals.push({ seq: row.seq, taskId: data.task_id, auditEventHash: data.audit_event_hash });
    }
    if (row.type !== "task_review_decision") continue;
    reviews.push({
      seq: row.seq,
      prev: String(row.prev),
      journalHead: data.journal_head,
      auditEventHash: data.audit_event_hash,
      bound: boundOf((f) => f.row(data)),
    });
  }
  return { hashes, reviews, seals };
}

/** The bound fields on which a row and the entry it cites disagree (pure). */
function boundMismatches(entry: SignedReview, row: ReviewRow): BoundField[] {
  return (Object.keys(entry.bound) as BoundField[]).filter((f) => entry.bound[f] !== row.bound[f]);
}

/** How a bound value reads in a message. */
function shown(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value) ?? "nothing";
}

/**
 * Seal entries of a run without their `task_evidence_sealed` row (pure). The entry is signed
 * first and the row appended after it (lib/verification/seal.ts), so a crash between the two
 * leaves exactly this. Rows written since cite their entry; older rows match entries of their
 * task in order.
 */
function sealsWithoutRow(runId: string, seals: SealRow[], entries: SignedSeal[]): CrossFinding[] {
  const cited = new Set(seals.map((r) => r.auditEventHash).filter((h) => typeof h === "string"));
  const legacy = new Map<string, number>();
  for (const r of seals) {
    if (r.auditEventHash === undefined) {
      legacy.set(String(r.taskId), (legacy.get(String(r.taskId)) ?? 0) + 1);
    }
  }
  const findings: CrossFinding[] = [];
  for (const entry of entries) {
    if (cited.has(entry.lineHash)) continue;
    const left = legacy.get(entry.taskId) ?? 0;
    if (left > 0) {
      legacy.set(entry.taskId, left - 1);
      continue;
    }
    findings.push({
      kind: "seal_without_row",
      runId,
      auditSeq: entry.seq,
      journalContradicted: false,
      message: `audit entry ${entry.seq} sealed the evidence of ${entry.taskId} (run ${runId}), ` +
        "but the journal has no task_evidence_sealed row for it: sealing stopped between the " +
        "audit entry and the journal row, so that bundle was never recorded (the task's next " +
        "landing seals its evidence again)",
    });
  }
  return findings;
}

/** Cross-check one run (pure): its journal facts against the entries signed for it. */
export function crossCheckRun(
  runId: string,
  journal: JournalFacts | undefined,
  signed: SignedEntries,
): CrossReport {
  const findings: CrossFinding[] = [];
  const unattested: CrossReport["unattested"] = [];
  const mine = signed.reviews.filter((e) => e.runId === runId);
  const seals = signed.seals.filter((e) => e.runId === runId);
  if (!journal) {
    const first = mine[0] ?? seals[0];
    if (first) {
      findings.push({
        kind: "journal_missing",
        runId,
        auditSeq: first.seq,
        journalContradicted: false,
        message: `audit entry ${first.seq} signed for run ${runId}, whose journal is gone`,
      });
    }
    return { findings, unattested };
  }
  findings.push(...sealsWithoutRow(runId, journal.seals ?? [], seals));
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
    } else {
      const differ = boundMismatches(entry, row);
      if (differ.length > 0) {
        findings.push({
          kind: "binding_mismatch",
          runId,
          rowSeq: row.seq,
          auditSeq: entry.seq,
          journalContradicted: true,
          message: `row ${row.seq} of run ${runId} records ${
            differ.map((f) => `${f} ${shown(row.bound[f])}`).join(", ")
          }, but audit entry ${entry.seq} signed ${
            differ.map((f) => `${f} ${shown(entry.bound[f])}`).join(", ")
          }: the review row was edited after it was signed`,
        });
      }
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
