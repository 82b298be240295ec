/**
 * What a remote worker and the orchestrator say to each other over HTTP (DESIGN.md §16, §17;
 * the routes under `/workers/<name>/`: register, claim and leave with the worker's token, scope
 * `worker`; a session's heartbeat and report with the capability its claim carried, scope
 * `session`): the request bodies, validated strictly at the edge, and the work order a claim
 * answers. The code travels through a git remote, never
 * in these bodies; provider keys never travel at all.
 */
import { z } from "zod";
import { ID_RULE, isValidId } from "../ids.ts";
import type { Task } from "../tasks/task.ts";

/** Largest session log a report carries (its tail, when longer). */
export const MAX_REPORT_LOG_BYTES = 4 * 1024 * 1024;

/** Body limit of a report: the log plus its JSON envelope. */
export const REPORT_BODY_LIMIT = MAX_REPORT_LOG_BYTES * 2 + 64 * 1024;

const Name = z.string().refine(isValidId, `must be ${ID_RULE}`);
const Sha = z.string().regex(/^[0-9a-f]{40}([0-9a-f]{24})?$/, "must be a full commit id");

/** `POST /workers/<name>/register`. */
export const RegisterBodySchema = z.strictObject({
  slots: z.number().int().min(1).max(256),
  roles: z.array(Name).max(100).optional(),
  version: z.string().max(100).optional(),
});

/** `POST /workers/<name>/claim`: how many tasks the worker can start now. */
export const ClaimBodySchema = z.strictObject({
  free: z.number().int().min(1).max(256),
  roles: z.array(Name).max(100).optional(),
  /** A one-time claim ticket (a Kubernetes Job's, DESIGN.md §17): that one task, once. */
  ticket: z.string().min(8).max(200).regex(/^[A-Za-z0-9_-]+$/, "must be a claim ticket")
    .optional(),
});

/**
 * `POST /workers/<name>/sessions/<session>/heartbeat` (with the session's capability): renews
 * the session's lease, with the tip the worker last pushed; `draining` once the worker is
 * stopping (it claims nothing more).
 */
export const HeartbeatBodySchema = z.strictObject({
  task_id: Name,
  pushed: Sha.optional(),
  draining: z.boolean().optional(),
});

/**
 * `POST /workers/<name>/sessions/<session>/report` (with the session's capability): an agent
 * ended; its branch was pushed (or could not be).
 */
export const ReportBodySchema = z.strictObject({
  task_id: Name,
  session_id: Name,
  exit_code: z.number().int(),
  duration_ms: z.number().int().min(0),
  /**
   * Why the worker ended it: the orchestrator asked (timeout, reported, cancelled, stop), or the
   * worker itself was stopping (`drain`: SIGTERM, DESIGN.md §17).
   */
  ended_by: z.enum(["timeout", "stop", "rate_limit", "reported", "cancelled", "drain"]).optional(),
  /** The commit pushed to `agent/<session_id>`; null when the push failed (`push_error`). */
  commit: Sha.nullable(),
  push_error: z.string().max(4000).optional(),
  /** The session log (its tail when longer than {@link MAX_REPORT_LOG_BYTES}). */
  log: z.string().max(MAX_REPORT_LOG_BYTES).default(""),
  log_truncated: z.boolean().default(false),
});

/** A validated claim request. */
export type ClaimBody = z.output<typeof ClaimBodySchema>;
/** A validated report. */
export type ReportBody = z.output<typeof ReportBodySchema>;

/** What a registration answers: how often to heartbeat, and the run being served. */
export interface RegisterAnswer {
  name: string;
  run_id: string | null;
  heartbeat_timeout_s: number;
  heartbeat_interval_s: number;
  /**
   * The loopback port of the server's agents' listener: a worker on the server's own machine
   * (its `--server` a loopback URL) points its agents there, so no agent request of it can be
   * taken for the local operator.
   */
  agent_port?: number;
}

/** `POST /workers/<name>/leave`: the worker stops; its name is free again at once. */
export const LeaveBodySchema = z.strictObject({});

/** One task handed to a worker: everything it needs besides its clone and its own keys. */
export interface WorkOrder {
  run_id: string;
  task: Task;
  session_id: string;
  attempt: number;
  /** The adapter to run (the worker's service.yaml defines it; its own keys authenticate it). */
  adapter: string;
  model?: string;
  effort?: string;
  /** The prompt, rendered by the orchestrator from its role templates and the task's notes. */
  prompt: string;
  /** The commit the work is based on, and the remote ref that holds it. */
  base: string;
  base_ref: string;
  /** Where the worktree is cut when it continues an earlier attempt's work (on `agent/<session>`). */
  start?: string;
  timeout_s: number;
  grace_ms: number;
  /**
   * The agent's credential (scope `agent`: reads, and its own task's heartbeat, completion and
   * failure while this session holds it). The worker hands the agent this, never its own token.
   */
  agent_token?: string;
  /**
   * The worker's capability for this session alone (scope `session`): its heartbeat and its
   * report. The worker's own token only registers and claims.
   */
  session_token: string;
}

/** A heartbeat's word on one session: go on, or end the agent (and why). */
export interface SessionVerdict {
  task_id: string;
  session_id: string;
  keep: boolean;
  reason?: string;
}

/** What a report answers when accepted. */
export interface ReportAnswer {
  accepted: true;
  task_id: string;
  status: string;
}

/** The seconds between a worker's heartbeats for a lease of `timeoutS` (three per lease). */
export function heartbeatIntervalS(timeoutS: number): number {
  return Math.max(0.2, Math.min(15, timeoutS / 3));
}
