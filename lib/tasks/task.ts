/** The task record (spec §2.8, DESIGN.md §6) and the shapes of its inputs. */
import { z } from "zod";
import { ID_RULE, isValidId, ROLE_NAME } from "../ids.ts";
import { STATUSES, type TaskStatus } from "./lifecycle.ts";
import { type CommandCheck, CommandChecksSchema } from "../config/schema.ts";

/** Default priority: lower runs first, 1 is the highest (DESIGN.md §7). */
export const DEFAULT_PRIORITY = 2;

/** A janitor completion signal (spec §2.12, §4.5). */
export const CompletionSignalSchema = z.union([
  z.strictObject({ path_exists: z.string().min(1) }),
  z.strictObject({ glob_exists: z.string().min(1) }),
  z.strictObject({ test_passes: z.string().min(1) }),
]);

/** One completion signal. */
export type CompletionSignal = z.output<typeof CompletionSignalSchema>;

/** Task scope: small, medium or large (spec §8 timeouts). */
export const ScopeSchema = z.enum(["small", "medium", "large"]);
/** Task complexity: `low` routes to the cheapest model. */
export const ComplexitySchema = z.enum(["low", "medium", "high"]);

/** A task, session or worker id: the one id rule of lib/ids.ts. */
const Id = z.string().refine(isValidId, `must be ${ID_RULE}`);

/** The tracker ticket a task was made from (set by the ticket sink, lib/trackers/sink.ts). */
const TaskSourceSchema = z.strictObject({
  tracker: z.string().min(1).max(64),
  key: z.string().min(1).max(500),
  ref: z.string().max(500),
  url: z.string().max(2000),
  updated_at: z.string().optional(),
  ids: z.record(z.string(), z.union([z.string(), z.number()])).optional(),
});

/** Where a task came from. */
export type TaskSource = z.output<typeof TaskSourceSchema>;

/** An adapter name (`claude`, `generic`, `generic:<role>` for a role's own generic command). */
export const AdapterName = z.string().regex(
  /^[a-z][a-z0-9_-]*(?::[a-z][a-z0-9_-]*)?$/,
  "expected an adapter name (claude, codex, generic, generic:<role> …)",
);

/** Body of `POST /tasks` for one task. */
export const TaskInputSchema = z.strictObject({
  id: Id.optional(),
  title: z.string().min(1).max(500),
  role: z.string().regex(
    ROLE_NAME,
    "expected a role name (lower-case letters, digits, _ and -, starting with a letter)",
  ),
  goal: z.string().optional(),
  priority: z.number().int().min(0).max(1000).default(DEFAULT_PRIORITY),
  scope: ScopeSchema.default("medium"),
  complexity: ComplexitySchema.default("medium"),
  depends_on: z.array(Id).default([]),
  owned_files: z.array(z.string().min(1)).default([]),
  completion_signals: z.array(CompletionSignalSchema).default([]),
  /** Evidence producers (DESIGN.md §10): commands whose output is sealed as evidence. */
  evidence: CommandChecksSchema.optional(),
  /** Through the batch lane (DESIGN.md §15); absent: service.yaml's top-level `batch_eligible`. */
  batch_eligible: z.boolean().optional(),
  /** The adapter its agents run (default: its role's); checked before its first agent starts. */
  cli: AdapterName.optional(),
  source: TaskSourceSchema.optional(),
});

/** A validated creation request. */
export type TaskInput = z.output<typeof TaskInputSchema>;

/** Evidence flags as an agent reported them in `POST /tasks/<id>/complete`. */
export interface ReportedEvidence {
  tests_run: boolean;
  quality_gates_run: boolean;
  completion_signals_checked: boolean;
}

/** A task as stored in memory, in the YAML specs and in every JSON answer. */
export interface Task {
  id: string;
  status: TaskStatus;
  title: string;
  role: string;
  goal: string;
  priority: number;
  scope: "small" | "medium" | "large";
  complexity: "low" | "medium" | "high";
  depends_on: string[];
  owned_files: string[];
  completion_signals: CompletionSignal[];
  /** Evidence producers run on the merged tree after the gates. */
  evidence: CommandCheck[];
  batch_eligible: boolean;
  session_id: string | null;
  attempts: number;
  verification_count: number;
  flagged_unverified: boolean;
  /** The evidence flags the agent reported itself: a hint, never the ledger's flags. */
  reported_evidence: ReportedEvidence | null;
  summary: string | null;
  created_at: string;
  updated_at: string;
  /** Last heartbeat (or claim) of the current claimant; null when unclaimed. */
  heartbeat_at: string | null;
  /** Creation order, used to break priority ties. */
  seq: number;
  /** Incremented on every change; the highest wins when a crash left two copies on disk. */
  revision: number;
  /** The run (`service run`) the task belongs to; null for tasks created through the API. */
  run_id: string | null;
  /** The tracker ticket it was made from, if any (its URL is kept here). */
  source?: TaskSource;
  /**
   * An operator marked it DONE while no agent worked on it: done for good, nothing to merge
   * (absent otherwise).
   */
  operator_done?: true;
  /**
   * The session of an interrupted attempt (stopped, killed, timed out, lost with the
   * orchestrator) whose kept work the next attempt starts from (absent otherwise).
   */
  resume_from?: string;
  /** The worker (`service worker --name`) whose claim holds it, or held its last (absent: local). */
  worker?: string;
  /** The adapter its agents run, when the task chose one (absent: its role's). */
  cli?: string;
}

/**
 * True when nothing more will happen to `task` on its own: it landed (CLOSED), FAILED, was
 * CANCELLED, or an operator marked it DONE without an agent's work to merge.
 */
export function isFinished(task: Pick<Task, "status" | "operator_done">): boolean {
  return task.status === "CLOSED" || task.status === "FAILED" || task.status === "CANCELLED" ||
    (task.status === "DONE" && task.operator_done === true);
}

/** The stored task schema (YAML specs), strict so hand edits with typos are caught. */
export const StoredTaskSchema = z.strictObject({
  id: Id,
  status: z.enum(STATUSES),
  title: z.string(),
  role: z.string(),
  goal: z.string().default(""),
  priority: z.number().int(),
  scope: ScopeSchema,
  complexity: ComplexitySchema,
  depends_on: z.array(Id),
  owned_files: z.array(z.string()),
  completion_signals: z.array(CompletionSignalSchema),
  evidence: CommandChecksSchema.default([]),
  batch_eligible: z.boolean(),
  session_id: z.string().nullable(),
  attempts: z.number().int().min(0),
  verification_count: z.number().int().min(0).max(3),
  flagged_unverified: z.boolean(),
  reported_evidence: z.strictObject({
    tests_run: z.boolean(),
    quality_gates_run: z.boolean(),
    completion_signals_checked: z.boolean(),
  }).nullable().default(null),
  summary: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  heartbeat_at: z.string().nullable().default(null),
  seq: z.number().int().min(0),
  revision: z.number().int().min(0),
  run_id: z.string().nullable().default(null),
  source: TaskSourceSchema.optional(),
  operator_done: z.literal(true).optional(),
  resume_from: Id.optional(),
  worker: Id.optional(),
  cli: AdapterName.optional(),
});

/** What the store decides of a new task: its status, place and time, its run. */
export interface NewTaskOptions {
  status: TaskStatus;
  /** Its creation order in the store. */
  seq: number;
  /** `created_at` and `updated_at` (ISO 8601). */
  now: string;
  /** The run that created it (default: none). */
  runId?: string | null;
  /** `batch_eligible` of an input that does not say (service.yaml's top-level; default false). */
  batchEligible?: boolean;
}

/** A new task record from a validated input (its status is decided by the store). */
export function newTask(
  input: TaskInput & { id: string },
  { status, seq, now, runId = null, batchEligible = false }: NewTaskOptions,
): Task {
  return {
    id: input.id,
    status,
    title: input.title,
    role: input.role,
    goal: input.goal ?? "",
    priority: input.priority,
    scope: input.scope,
    complexity: input.complexity,
    depends_on: [...new Set(input.depends_on)],
    owned_files: input.owned_files,
    completion_signals: input.completion_signals,
    evidence: input.evidence ?? [],
    batch_eligible: input.batch_eligible ?? batchEligible,
    session_id: null,
    attempts: 0,
    verification_count: 0,
    flagged_unverified: false,
    reported_evidence: null,
    summary: null,
    created_at: now,
    updated_at: now,
    heartbeat_at: null,
    seq,
    revision: 0,
    run_id: runId,
    ...(input.source ? { source: input.source } : {}),
    ...(input.cli ? { cli: input.cli } : {}),
  };
}
