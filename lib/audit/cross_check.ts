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
import { type EventType, readRow } from "../journal/event_reader.ts";
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

/**
 * A review or seal row that counts for nothing (lib/journal/event_reader.ts: the board, the run
 * and the evidence view ignore it), with the entry it cites, if it names one.
 */
export interface MalformedRowFact {
  seq: number;
  type: EventType;
  reason: string;
  auditEventHash?: string;
}

/** What the cross-check knows of one run's journal. */
export interface JournalFacts {
  /** Every row's hash (the heads an entry may have signed). */
  hashes: Set<string>;
  reviews: ReviewRow[];
  /** Its `task_evidence_sealed` rows (absent: none). */
  seals?: SealRow[];
  /** Its review and seal rows that count for nothing (absent: none). */
  malformed?: MalformedRowFact[];
}

/** Kinds of disagreement. */
export type FindingKind =
  | "rehashed_row"
  | "head_not_on_journal"
  | "entry_without_row"
  | "row_without_entry"
  | "binding_mismatch"
  | "seal_without_row"
  | "malformed_row"
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

/**
 * The outcome: findings (faults), rows the chain does not (yet) vouch for, and review or seal
 * rows that count for nothing and that no entry signed (nothing reads them; not a fault of
 * either chain).
 */
export interface CrossReport {
  findings: CrossFinding[];
  unattested: { runId: string; rowSeq: number }[];
  ignored: { runId: string; rowSeq: number; message: string }[];
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

/** The facts of a journal's text (rows that parse; their data read as every reader reads it). */
export function journalFacts(text: string): JournalFacts {
  const hashes = new Set<string>();
  const reviews: ReviewRow[] = [];
  const seals: SealRow[] = [];
  const malformed: MalformedRowFact[] = [];
  for (const line of text.split("\n")) {
    if (!line) continue;
    let row: { seq?: number; prev?: string; hash?: string; type?: string; data?: unknown };
    try {
      row = JSON.parse(line);
    } catch {
      continue;
    }
    if (typeof row?.hash === "string") hashes.add(row.hash);
    if (typeof row?.seq !== "number" || typeof row.type !== "string") continue;
    if (row.type !== "task_review_decision" && row.type !== "task_evidence_sealed") continue;
    const read = readRow({ type: row.type, data: row.data as Record<string, never> });
    if (!read) continue;
    if (!("type" in read)) {
      const data = row.data as Record<string, unknown> | null;
      const cites = typeof data?.audit_event_hash === "string" ? data.audit_event_hash : undefined;
      malformed.push({
        seq: row.seq,
        type: read.malformed,
        reason: read.reason,
        ...(cites === undefined ? {} : { auditEventHash: cites }),
      });
    } else if (read.type === "task_evidence_sealed") {
      seals.push({ seq: row.seq, taskId: read.task_id, auditEventHash: read.audit_event_hash });
    } else if (read.type === "task_review_decision") {
      reviews.push({
        seq: row.seq,
        prev: String(row.prev),
        journalHead: read.journal_head,
        auditEventHash: read.audit_event_hash,
        bound: boundOf((f) => f.row(read)),
      });
    }
  }
  return { hashes, reviews, seals, malformed };
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
  const report: CrossReport = { findings: [], unattested: [], ignored: [] };
  const mine = signed.reviews.filter((e) => e.runId === runId);
  const seals = signed.seals.filter((e) => e.runId === runId);
  if (!journal) {
    const first = mine[0] ?? seals[0];
    if (first) {
      report.findings.push({
        kind: "journal_missing",
        runId,
        auditSeq: first.seq,
        journalContradicted: false,
        message: `audit entry ${first.seq} signed for run ${runId}, whose journal is gone`,
      });
    }
    return report;
  }
  const cited = malformedRows(runId, journal.malformed ?? [], { reviews: mine, seals }, report);
  const sealsLeft = seals.filter((e) => !cited.has(e.lineHash));
  report.findings.push(...sealsWithoutRow(runId, journal.seals ?? [], sealsLeft));
  for (const hash of reviewRows(runId, journal.reviews, mine, report)) cited.add(hash);
  report.findings.push(
    ...entriesWithoutRow(runId, journal, mine.filter((e) => !cited.has(e.lineHash))),
  );
  report.findings.sort((a, b) => (a.rowSeq ?? Infinity) - (b.rowSeq ?? Infinity));
  return report;
}

/**
 * Review and seal rows that count for nothing (pure). One that cites an entry of the chain was
 * edited after that entry signed it: a contradiction. One that cites none is only noted: nothing
 * reads it. Returns the line hashes of the entries such rows cite (they have their row).
 */
function malformedRows(
  runId: string,
  rows: MalformedRowFact[],
  signed: SignedEntries,
  report: CrossReport,
): Set<string> {
  const entries = new Map<string, SignedReview | SignedSeal>();
  for (const e of signed.reviews) entries.set(e.lineHash, e);
  for (const e of signed.seals) entries.set(e.lineHash, e);
  const cited = new Set<string>();
  for (const row of rows) {
    const entry = row.auditEventHash === undefined ? undefined : entries.get(row.auditEventHash);
    const what = `row ${row.seq} of run ${runId} is a ${row.type} that counts for nothing ` +
      `(${row.reason})`;
    if (!entry) {
      report.ignored.push({
        runId,
        rowSeq: row.seq,
        message: `${what}: the board, the run and \`service status\` ignore it`,
      });
      continue;
    }
    cited.add(entry.lineHash);
    report.findings.push({
      kind: "malformed_row",
      runId,
      rowSeq: row.seq,
      auditSeq: entry.seq,
      journalContradicted: true,
      message: `${what}, but audit entry ${entry.seq} signed it whole: the row was edited after ` +
        "it was signed",
    });
  }
  return cited;
}

/**
 * The review rows against the entries they cite (pure): a row chained onto another head than its
 * entry signed was re-hashed, one that records other bound values was edited; one that cites no
 * entry of the chain is unattested before the chain vouches for the run, lost after. Returns the
 * line hashes of the entries cited.
 */
function reviewRows(
  runId: string,
  rows: ReviewRow[],
  mine: SignedReview[],
  report: CrossReport,
): Set<string> {
  const byLine = new Map(mine.map((e) => [e.lineHash, e]));
  const entryOf = (row: ReviewRow) =>
    typeof row.auditEventHash === "string" ? byLine.get(row.auditEventHash) : undefined;
  const cited = new Set<string>();
  const vouchedFrom = rows.find((row) => entryOf(row))?.seq ?? Infinity;
  for (const row of rows) {
    const entry = entryOf(row);
    if (!entry) {
      if (row.seq > vouchedFrom) report.findings.push(rowWithoutEntry(runId, row));
      else report.unattested.push({ runId, rowSeq: row.seq });
      continue;
    }
    cited.add(entry.lineHash);
    const finding = rowAgainstEntry(runId, row, entry);
    if (finding) report.findings.push(finding);
  }
  return cited;
}

function rowWithoutEntry(runId: string, row: ReviewRow): CrossFinding {
  return {
    kind: "row_without_entry",
    runId,
    rowSeq: row.seq,
    journalContradicted: false,
    message: `row ${row.seq} of run ${runId} cites audit entry ${
      String(row.auditEventHash).slice(0, 12)
    }…, which is not on the audit chain (entry removed, or the row forged)`,
  };
}

/** How a review row disagrees with the entry it cites, if it does (pure). */
function rowAgainstEntry(
  runId: string,
  row: ReviewRow,
  entry: SignedReview,
): CrossFinding | undefined {
  if (row.prev !== entry.journalHead || row.journalHead !== entry.journalHead) {
    return {
      kind: "rehashed_row",
      runId,
      rowSeq: row.seq,
      auditSeq: entry.seq,
      journalContradicted: true,
      message: `row ${row.seq} of run ${runId} chains onto ${row.prev.slice(0, 12)}…, but audit ` +
        `entry ${entry.seq} signed journal head ${
          entry.journalHead.slice(0, 12)
        }… for it: the journal was edited and re-hashed`,
    };
  }
  const differ = boundMismatches(entry, row);
  if (differ.length === 0) return undefined;
  return {
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
  };
}

/**
 * Review entries no row cites (pure): the server stopped between the two appends when the head
 * the entry signed is on the journal, else the journal was rewritten after it was signed.
 */
function entriesWithoutRow(
  runId: string,
  journal: JournalFacts,
  entries: SignedReview[],
): CrossFinding[] {
  return entries.map((entry) =>
    entry.journalHead === ZERO_HASH || journal.hashes.has(entry.journalHead)
      ? {
        kind: "entry_without_row",
        runId,
        auditSeq: entry.seq,
        journalContradicted: false,
        message: `audit entry ${entry.seq} (${entry.decision} on ${entry.taskId}, run ${runId}) ` +
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
      }
  );
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
