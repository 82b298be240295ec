/**
 * The review board's JSON answers (spec §4): a run's tasks, one task's detail, its diff, its
 * evidence bundle and a review receipt. Types only, importing only other type modules, so the
 * browser bundle names them without reaching the journal (lib/import_graph_test.ts keeps it so).
 */
import type {
  AlreadyLanded,
  Attempt,
  IgnoredRow,
  OutlineTask,
  TaskActivity,
} from "../board/activity_types.ts";

/** A sealed evidence bundle's check, as the run outline serves it for the cards. */
export interface EvidenceMark {
  verified: boolean;
  problems: string[];
}

/** `GET /review-board/runs/<run_id>/tasks`. */
export interface RunOutline {
  run_id: string;
  /** False also when the signed audit chain contradicts the journal (see `audit_disagreement`). */
  journal_verified: boolean;
  tasks: OutlineTask[];
  already_landed: AlreadyLanded[];
  /** The first row where the journal and the audit chain disagree (an edited, re-hashed journal). */
  audit_disagreement?: { row?: number; audit_entry?: number; message: string };
  /** The check of every sealed evidence bundle, by task id (a tampered one shows on its card). */
  evidence: Record<string, EvidenceMark>;
  /**
   * Rows of known types that count for nothing (lib/journal/event_reader.ts: the board, the run
   * and `service status` ignore them too): how many, and the first of them with why.
   */
  ignored_rows?: { count: number; rows: IgnoredRow[] };
}

/** A kept session log as served: its tail and whether the whole file matches the journal. */
export interface ServedLog {
  sha256: string;
  bytes: number;
  /** False when the file is gone or its bytes no longer hash to the journal's digest. */
  verified: boolean;
  missing?: true;
  /** The log's last 16 KiB (from a line start), when the file exists. */
  tail?: string;
  truncated?: true;
}

/** `GET /review-board/runs/<run_id>/tasks/<task_id>`. */
export interface TaskDetailResponse {
  run_id: string;
  journal_verified: boolean;
  /** Why the task has no evidence bundle (the evidence endpoint's 404), absent when it has one. */
  evidence_absent?: EvidenceAbsence;
  task: Omit<TaskActivity, "attempts"> & {
    attempts: (Omit<Attempt, "log"> & { log?: ServedLog })[];
  };
}

/** Why a task has no evidence to show: the code and words of the evidence endpoint's 404. */
export interface EvidenceAbsence {
  code: "no_evidence_producers" | "evidence_not_sealed";
  message: string;
}

/** `GET /review-board/runs/<run_id>/diff/<task_id>`: the stored diff, re-hashed and summed. */
export interface DiffResponse {
  sha256: string;
  verified: boolean;
  added: number;
  removed: number;
  files: string[];
  diff_text: string;
}

/** What each check of a bundle found. */
export interface EvidenceChecks {
  outputs_rehash: boolean;
  bundle_hash_chained: boolean;
  journal_verified: boolean;
  signature_valid: boolean;
  audit_entry_valid: boolean;
}

/**
 * `GET /review-board/runs/<run_id>/evidence/<task_id>`: the stored bundle, with `bundle_hash`
 * recomputed, `verified` and why.
 */
export type EvidenceResponse = Record<string, unknown> & {
  bundle_hash: string | null;
  verified: boolean;
  checks: EvidenceChecks;
  problems: string[];
};

/** The receipt of spec §2.6. */
export interface ReviewReceipt {
  decision: string;
  principal: string;
  scope: string;
  projection_hash: string;
  journal_head: string;
  journal_entry_hash: string;
  diff_sha256: string | null;
  audit_event_hash: string;
}
