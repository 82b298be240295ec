/**
 * The read side of the journal's vocabulary (`events.ts` is the write side): one typed reader
 * per event type, so every part that reads a journal — the board fold, the activity view, the
 * review watcher, the audit cross-check, the runs trail, landing, write-back — takes the same
 * rows as counting and ignores the same rows as malformed.
 *
 * The rule. A row of a known type counts when its `data` is an object holding the event's key
 * fields with their types: `task_id` (a string) for a task's events; `session_id` too for the
 * rows matched to an attempt (exit, log, worktree, verification record); the pull request's
 * `number` (an integer) for `task_pr_*`; `decision` (approve, request_changes or merge) and
 * `principal` for a review decision; `sha256` and the three counts for a diff; and for the run
 * envelope and a gate receipt, values that have a canonical form (DESIGN.md §3). Every other
 * field an event names is optional: read when it has its type, read as absent when it does not.
 * Keys an event does not name are ignored. The board's events ask exactly what the board fold
 * needs to fold them (spec §3.2, DESIGN.md §5), so their projection is unchanged; a malformed
 * row changes nothing anywhere, and the views that show a run say which rows they ignored.
 */
import { type JsonValue } from "./canonical_json.ts";
import type { JournalEvent } from "./row.ts";

/** Review decisions an operator can take (spec §2.6). */
export const REVIEW_DECISIONS = ["approve", "request_changes", "merge"] as const;
/** A review decision. */
export type ReviewDecisionKind = typeof REVIEW_DECISIONS[number];

type Data = Record<string, unknown>;

/** A planned task of `run_started` (items without a string `task_id` are left out). */
export interface PlannedRead {
  task_id: string;
  title?: string;
  role?: string;
  stage?: string;
  step_key?: string;
  depends_on: string[];
}

/** A setup command of `task_worktree_prepared` (items without a string `command` left out). */
export interface SetupRead {
  command: string;
  exit_code?: number;
  ms?: number;
}

/** What each known event reads as when it counts (besides its `type`). */
export interface EventReads {
  /** `data` is the row's whole data, verbatim (the board's `run.started`). */
  run_started: {
    data: Record<string, JsonValue>;
    run_id?: string;
    plan?: string;
    plan_file?: string;
    planned: PlannedRead[];
    already_landed: { task_id: string; run_id?: string; commit?: string }[];
    done_by_operator: { task_id: string; run_id?: string }[];
  };
  run_resumed: { run_id?: string; pid?: number };
  run_completed: { data: Record<string, JsonValue>; run_id?: string; status?: string };
  task_claimed: {
    task_id: string;
    session_id?: string;
    title?: string;
    role?: string;
    attempt?: number;
    model?: string;
    batch_eligible?: boolean;
    isolation?: string;
    adapter?: string;
    lane?: string;
    worker?: string;
  };
  task_batch_submitted: {
    task_id: string;
    provider?: string;
    batch_id?: string;
    custom_id?: string;
  };
  task_batch_result: { task_id: string; batch_id?: string; outcome?: string; reason?: string };
  /** `signals`, verbatim, when it is an array with a canonical form (the card's gates). */
  task_verification_failed: { task_id: string; signals?: JsonValue[] };
  task_retried: { task_id: string; reason?: string };
  task_completed: {
    task_id: string;
    summary?: string;
    recovered?: boolean;
    interrupted?: boolean;
  };
  task_merged: { task_id: string; commit?: string; pr?: string; empty?: boolean };
  /** Its completed work changes nothing on the target: nothing merged, the task closed. */
  task_unchanged: { task_id: string };
  /** An operator's follow-up to the task's agent (lib/operator/follow_ups.ts). */
  task_follow_up: {
    task_id: string;
    seq?: number;
    principal?: string;
    text: string;
    audit_event_hash?: string;
  };
  /** Ignored or copied files kept out of the branch's commits (lib/worktrees/keep_out.ts). */
  task_files_kept_out: {
    task_id: string;
    paths: string[];
    paths_total?: number;
    rewritten_commits?: number;
  };
  task_diff_captured: {
    task_id: string;
    sha256: string;
    added: number;
    removed: number;
    files: number;
    truncated?: { bytes: number; files: number };
  };
  task_review_decision: {
    task_id: string;
    decision: ReviewDecisionKind;
    principal: string;
    note?: string;
    scope?: string;
    projection_hash?: string;
    journal_head?: string;
    diff_sha256?: string | null;
    audit_event_hash?: string;
  };
  task_failed: { task_id: string; reason?: string; files: string[] };
  agent_exited: {
    task_id: string;
    session_id: string;
    exit_code: number;
    duration_ms: number;
    ended_by?: string;
    worker?: string;
    commit?: string | null;
    push_error?: string;
    start_failure?: string;
    interrupted?: string;
    lease_lost?: boolean;
  };
  merge_conflict: { task_id: string; files: string[]; attempt?: number };
  budget_exceeded: {
    total_micro_usd: number;
    budget_micro_usd: number;
    estimate_micro_usd: number;
  };
  rate_limited: {
    task_id: string;
    adapter: string;
    session_id?: string;
    rule?: string;
    line?: string;
    until?: number;
    reset_named?: boolean;
  };
  task_cancelled: { task_id: string; reason?: string };
  task_done_by_operator: { task_id: string; reason?: string };
  task_waiting: { task_id: string; reason?: string };
  task_protected_paths: { task_id: string; paths: string[]; error?: string };
  task_oversized_files: {
    task_id: string;
    files: { path: string; bytes: number }[];
    files_total?: number;
    limit_bytes?: number;
  };
  task_owned_files_exceeded: {
    task_id: string;
    paths: string[];
    owned_files: string[];
    enforced?: boolean;
  };
  task_rebased: { task_id: string; onto?: string; head?: string; diff_changed?: boolean };
  task_log_captured: { task_id: string; session_id: string; sha256: string; bytes: number };
  task_worktree_prepared: {
    task_id: string;
    session_id: string;
    copied: string[];
    copied_total?: number;
    linked: string[];
    setup: SetupRead[];
    ports: number[];
  };
  task_verification_recorded: {
    task_id: string;
    session_id: string;
    tests_run?: boolean;
    quality_gates_run?: boolean;
    completion_signals_checked?: boolean;
    verified?: boolean;
    test_runs: { runner: string; outcome?: string; line?: string }[];
  };
  task_evidence_sealed: { task_id: string; bundle_hash: string; audit_event_hash?: string };
  task_evidence_unsealed: { task_id: string; reason?: string };
  task_pr_opened: {
    task_id: string;
    number: number;
    url?: string;
    head_sha?: string;
    branch?: string;
    base?: string;
  };
  task_pr_updated: { task_id: string; number: number; head_sha?: string; reason?: string };
  task_pr_closed: { task_id: string; number: number; reason?: string; by?: string };
  task_pr_check_rerun: {
    task_id: string;
    number: number;
    head_sha?: string;
    check?: string;
    rerun?: number;
    of?: number;
    summary?: string;
  };
  task_pr_status: {
    task_id: string;
    number: number;
    state?: string;
    head_sha?: string;
    checks: { name?: string; state?: string; required?: boolean; url?: string }[];
    reviews: { user?: string; state?: string }[];
    waits_for?: string;
  };
  task_ticket_moved: {
    task_id: string;
    tracker?: string;
    ref?: string;
    event?: string;
    to?: string;
    outcome?: string;
    state?: string;
    detail?: string;
  };
}

/** A known event type. */
export type EventType = keyof EventReads;

/** A row that counts, typed by its event. */
export type ReadEvent = { [T in EventType]: { type: T } & EventReads[T] }[EventType];

/** The read of event type `T`. */
export type ReadOf<T extends EventType> = Extract<ReadEvent, { type: T }>;

/** A row of a known type that counts for nothing, and why. */
export interface MalformedRow {
  malformed: EventType;
  /** What is wrong with it (`\`principal\` missing`). */
  reason: string;
  /** Its `task_id`, when it has one. */
  task_id?: string;
}

// ---- field readers ----------------------------------------------------------------------------

/** Why a row is malformed: thrown by the readers below, caught in {@link readRow} only. */
class Malformed {
  constructor(readonly reason: string) {}
}

function kindOf(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  if (typeof v === "number") return Number.isSafeInteger(v) ? "an integer" : "a number";
  return typeof v === "object" ? "an object" : `a ${typeof v}`;
}

function wrong(d: Data, key: string, want: string): Malformed {
  const v = d[key];
  return new Malformed(
    v === undefined ? `\`${key}\` missing` : `\`${key}\` is ${kindOf(v)}, not ${want}`,
  );
}

function reqStr(d: Data, key: string): string {
  const v = d[key];
  if (typeof v === "string") return v;
  throw wrong(d, key, "a string");
}

function reqInt(d: Data, key: string): number {
  const v = d[key];
  if (Number.isSafeInteger(v)) return v as number;
  throw wrong(d, key, "an integer");
}

const str = (v: unknown): string | undefined => typeof v === "string" ? v : undefined;
const int = (v: unknown): number | undefined => Number.isSafeInteger(v) ? v as number : undefined;
const bool = (v: unknown): boolean | undefined => typeof v === "boolean" ? v : undefined;

function strs(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
}

/** A cut diff's `{bytes, files}` (undefined unless both are integers). */
function cutDiff(v: unknown): { bytes: number; files: number } | undefined {
  return isObject(v) && Number.isSafeInteger(v.bytes) && Number.isSafeInteger(v.files)
    ? { bytes: v.bytes as number, files: v.files as number }
    : undefined;
}

/** `[{path, bytes}]` items whose two fields are what they say (others are dropped). */
function sizedFiles(v: unknown): { path: string; bytes: number }[] {
  return Array.isArray(v)
    ? v.flatMap((x) =>
      isObject(x) && typeof x.path === "string" && Number.isSafeInteger(x.bytes)
        ? [{ path: x.path, bytes: x.bytes as number }]
        : []
    )
    : [];
}

function ints(v: unknown): number[] {
  return Array.isArray(v) ? v.filter((x): x is number => Number.isSafeInteger(x)) : [];
}

function isObject(v: unknown): v is Data {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The items of `v` that are objects (a list whose items must be objects). */
function objects(v: unknown): Data[] {
  return Array.isArray(v) ? v.filter(isObject) : [];
}

/** True when `value` has a canonical form: JSON whose every number is a safe integer. */
function hasCanonicalForm(value: unknown): value is JsonValue {
  switch (typeof value) {
    case "string":
    case "boolean":
      return true;
    case "number":
      return Number.isSafeInteger(value);
    case "object":
      if (value === null) return true;
      if (Array.isArray(value)) return value.every(hasCanonicalForm);
      return Object.values(value).every(hasCanonicalForm);
    default:
      return false;
  }
}

function canonicalData(d: Data): Record<string, JsonValue> {
  if (hasCanonicalForm(d)) return d as Record<string, JsonValue>;
  throw new Malformed("`data` holds a value with no canonical form (a non-integer number)");
}

function taskOnly(d: Data): { task_id: string; reason?: string } {
  return { task_id: reqStr(d, "task_id"), reason: str(d.reason) };
}

// ---- one reader per event ---------------------------------------------------------------------

type Readers = { [T in EventType]: (d: Data) => EventReads[T] };

const READERS: Readers = {
  run_started: (d) => ({
    data: canonicalData(d),
    run_id: str(d.run_id),
    plan: str(d.plan),
    plan_file: str(d.plan_file),
    planned: objects(d.planned).flatMap((p) =>
      typeof p.task_id === "string"
        ? [{
          task_id: p.task_id,
          title: str(p.title),
          role: str(p.role),
          stage: str(p.stage),
          step_key: str(p.step_key),
          depends_on: strs(p.depends_on),
        }]
        : []
    ),
    already_landed: objects(d.already_landed).flatMap((l) =>
      typeof l.task_id === "string"
        ? [{ task_id: l.task_id, run_id: str(l.run_id), commit: str(l.commit) }]
        : []
    ),
    done_by_operator: objects(d.done_by_operator).flatMap((l) =>
      typeof l.task_id === "string" ? [{ task_id: l.task_id, run_id: str(l.run_id) }] : []
    ),
  }),
  run_resumed: (d) => ({ run_id: str(d.run_id), pid: int(d.pid) }),
  run_completed: (d) => ({ data: canonicalData(d), run_id: str(d.run_id), status: str(d.status) }),
  task_claimed: (d) => ({
    task_id: reqStr(d, "task_id"),
    session_id: str(d.session_id),
    title: str(d.title),
    role: str(d.role),
    attempt: int(d.attempt),
    model: str(d.model),
    batch_eligible: bool(d.batch_eligible),
    isolation: str(d.isolation),
    adapter: str(d.adapter),
    lane: str(d.lane),
    worker: str(d.worker),
  }),
  task_batch_submitted: (d) => ({
    task_id: reqStr(d, "task_id"),
    provider: str(d.provider),
    batch_id: str(d.batch_id),
    custom_id: str(d.custom_id),
  }),
  task_batch_result: (d) => ({
    ...taskOnly(d),
    batch_id: str(d.batch_id),
    outcome: str(d.outcome),
  }),
  task_verification_failed: (d) => ({
    task_id: reqStr(d, "task_id"),
    signals: Array.isArray(d.signals) && hasCanonicalForm(d.signals) ? d.signals : undefined,
  }),
  task_retried: taskOnly,
  task_completed: (d) => ({
    task_id: reqStr(d, "task_id"),
    summary: str(d.summary),
    recovered: bool(d.recovered),
    interrupted: bool(d.interrupted),
  }),
  task_merged: (d) => ({
    task_id: reqStr(d, "task_id"),
    commit: str(d.commit),
    pr: str(d.pr),
    empty: bool(d.empty),
  }),
  task_unchanged: (d) => ({ task_id: reqStr(d, "task_id") }),
  task_follow_up: (d) => ({
    task_id: reqStr(d, "task_id"),
    seq: int(d.seq),
    principal: str(d.principal),
    text: reqStr(d, "text"),
    audit_event_hash: str(d.audit_event_hash),
  }),
  task_files_kept_out: (d) => ({
    task_id: reqStr(d, "task_id"),
    paths: strs(d.paths),
    paths_total: int(d.paths_total),
    rewritten_commits: int(d.rewritten_commits),
  }),
  task_diff_captured: (d) => ({
    task_id: reqStr(d, "task_id"),
    sha256: reqStr(d, "sha256"),
    added: reqInt(d, "added"),
    removed: reqInt(d, "removed"),
    files: reqInt(d, "files"),
    truncated: cutDiff(d.truncated),
  }),
  task_review_decision: (d) => ({
    task_id: reqStr(d, "task_id"),
    decision: decisionOf(d),
    principal: reqStr(d, "principal"),
    note: str(d.note),
    scope: str(d.scope),
    projection_hash: str(d.projection_hash),
    journal_head: str(d.journal_head),
    diff_sha256: d.diff_sha256 === null ? null : str(d.diff_sha256),
    audit_event_hash: str(d.audit_event_hash),
  }),
  task_failed: (d) => ({ ...taskOnly(d), files: strs(d.files) }),
  agent_exited: (d) => ({
    task_id: reqStr(d, "task_id"),
    session_id: reqStr(d, "session_id"),
    exit_code: reqInt(d, "exit_code"),
    duration_ms: reqInt(d, "duration_ms"),
    ended_by: str(d.ended_by),
    worker: str(d.worker),
    commit: d.commit === null ? null : str(d.commit),
    push_error: str(d.push_error),
    start_failure: str(d.start_failure),
    interrupted: str(d.interrupted),
    lease_lost: bool(d.lease_lost),
  }),
  merge_conflict: (d) => ({
    task_id: reqStr(d, "task_id"),
    files: strs(d.files),
    attempt: int(d.attempt),
  }),
  budget_exceeded: (d) => ({
    total_micro_usd: reqInt(d, "total_micro_usd"),
    budget_micro_usd: reqInt(d, "budget_micro_usd"),
    estimate_micro_usd: reqInt(d, "estimate_micro_usd"),
  }),
  rate_limited: (d) => ({
    task_id: reqStr(d, "task_id"),
    adapter: reqStr(d, "adapter"),
    session_id: str(d.session_id),
    rule: str(d.rule),
    line: str(d.line),
    until: int(d.until),
    reset_named: bool(d.reset_named),
  }),
  task_cancelled: taskOnly,
  task_done_by_operator: taskOnly,
  task_waiting: taskOnly,
  task_protected_paths: (d) => ({
    task_id: reqStr(d, "task_id"),
    paths: strs(d.paths),
    error: str(d.error),
  }),
  task_oversized_files: (d) => ({
    task_id: reqStr(d, "task_id"),
    files: sizedFiles(d.files),
    files_total: int(d.files_total),
    limit_bytes: int(d.limit_bytes),
  }),
  task_owned_files_exceeded: (d) => ({
    task_id: reqStr(d, "task_id"),
    paths: strs(d.paths),
    owned_files: strs(d.owned_files),
    enforced: bool(d.enforced),
  }),
  task_rebased: (d) => ({
    task_id: reqStr(d, "task_id"),
    onto: str(d.onto),
    head: str(d.head),
    diff_changed: bool(d.diff_changed),
  }),
  task_log_captured: (d) => ({
    task_id: reqStr(d, "task_id"),
    session_id: reqStr(d, "session_id"),
    sha256: reqStr(d, "sha256"),
    bytes: reqInt(d, "bytes"),
  }),
  task_worktree_prepared: (d) => ({
    task_id: reqStr(d, "task_id"),
    session_id: reqStr(d, "session_id"),
    copied: strs(d.copied),
    copied_total: int(d.copied_total),
    linked: strs(d.linked),
    setup: objects(d.setup).flatMap((s) =>
      typeof s.command === "string"
        ? [{ command: s.command, exit_code: int(s.exit_code), ms: int(s.ms) }]
        : []
    ),
    ports: ints(d.ports),
  }),
  task_verification_recorded: (d) => ({
    task_id: reqStr(d, "task_id"),
    session_id: reqStr(d, "session_id"),
    tests_run: bool(d.tests_run),
    quality_gates_run: bool(d.quality_gates_run),
    completion_signals_checked: bool(d.completion_signals_checked),
    verified: bool(d.verified),
    test_runs: objects(d.test_runs).flatMap((r) =>
      typeof r.runner === "string"
        ? [{ runner: r.runner, outcome: str(r.outcome), line: str(r.line) }]
        : []
    ),
  }),
  task_evidence_sealed: (d) => ({
    task_id: reqStr(d, "task_id"),
    bundle_hash: reqStr(d, "bundle_hash"),
    audit_event_hash: str(d.audit_event_hash),
  }),
  task_evidence_unsealed: taskOnly,
  task_pr_opened: (d) => ({
    task_id: reqStr(d, "task_id"),
    number: reqInt(d, "number"),
    url: str(d.url),
    head_sha: str(d.head_sha),
    branch: str(d.branch),
    base: str(d.base),
  }),
  task_pr_updated: (d) => ({
    ...taskOnly(d),
    number: reqInt(d, "number"),
    head_sha: str(d.head_sha),
  }),
  task_pr_closed: (d) => ({ ...taskOnly(d), number: reqInt(d, "number"), by: str(d.by) }),
  task_pr_check_rerun: (d) => ({
    task_id: reqStr(d, "task_id"),
    number: reqInt(d, "number"),
    head_sha: str(d.head_sha),
    check: str(d.check),
    rerun: int(d.rerun),
    of: int(d.of),
    summary: str(d.summary),
  }),
  task_pr_status: (d) => ({
    task_id: reqStr(d, "task_id"),
    number: reqInt(d, "number"),
    state: str(d.state),
    head_sha: str(d.head_sha),
    checks: objects(d.checks).map((c) => ({
      name: str(c.name),
      state: str(c.state),
      required: bool(c.required),
      url: str(c.url),
    })),
    reviews: objects(d.reviews).map((r) => ({ user: str(r.user), state: str(r.state) })),
    waits_for: str(d.waits_for),
  }),
  task_ticket_moved: (d) => ({
    task_id: reqStr(d, "task_id"),
    tracker: str(d.tracker),
    ref: str(d.ref),
    event: str(d.event),
    to: str(d.to),
    outcome: str(d.outcome),
    state: str(d.state),
    detail: str(d.detail),
  }),
};

function decisionOf(d: Data): ReviewDecisionKind {
  const v = d.decision;
  if ((REVIEW_DECISIONS as readonly unknown[]).includes(v)) return v as ReviewDecisionKind;
  throw v === undefined || typeof v === "string"
    ? new Malformed(
      v === undefined
        ? "`decision` missing"
        : `\`decision\` ${JSON.stringify(v)} is not approve, request_changes or merge`,
    )
    : wrong(d, "decision", "a string");
}

/** Every event type with a reader, in the order above. */
export const EVENT_TYPES = Object.keys(READERS) as EventType[];

/** True when `type` is an event type this release reads. */
function isEventType(type: string): type is EventType {
  return Object.hasOwn(READERS, type);
}

/**
 * Read one row: its typed event when it counts, a {@link MalformedRow} saying why not when its
 * type is known but its data breaks the rule (see the header), undefined when its type is one
 * this release does not know (spec §9.3: such rows are ignored).
 */
export function readRow(row: JournalEvent): ReadEvent | MalformedRow | undefined {
  const type = row.type;
  if (!isEventType(type)) return undefined;
  const data: unknown = row.data;
  if (!isObject(data)) return { malformed: type, reason: "`data` is not an object" };
  try {
    const event = READERS[type](data) as ReadEvent;
    event.type = type;
    return event;
  } catch (e) {
    if (!(e instanceof Malformed)) throw e;
    const out: MalformedRow = { malformed: type, reason: e.reason };
    if (typeof data.task_id === "string") out.task_id = data.task_id;
    return out;
  }
}

/** The typed event of a row that counts; undefined for an unknown type or a malformed row. */
export function readEvent(row: JournalEvent): ReadEvent | undefined {
  const read = readRow(row);
  return read && "type" in read ? read : undefined;
}

/**
 * Read one journal line (for readers that scan a journal's text rather than fold it): its
 * event when the line parses to a row that counts, undefined otherwise (a torn line, an
 * unknown type, a malformed row).
 */
export function readLine(line: string): ReadEvent | undefined {
  let row: unknown;
  try {
    row = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (!isObject(row) || typeof row.type !== "string") return undefined;
  return readEvent(row as unknown as JournalEvent);
}
