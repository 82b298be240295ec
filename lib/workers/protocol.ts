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

/**
 * Whether a worker can start one adapter's agents, as it checked at registration (its CLI and
 * provider key, or its container image): what it lacks, and where its agents run.
 */
export const AdapterReadinessSchema = z.strictObject({
  name: Name,
  ready: z.boolean(),
  /** What it lacks, with the fix (`API key not set: ANTHROPIC_API_KEY (…)`). */
  problem: z.string().max(2000).optional(),
  /** `worktree` or `container:<runtime>:<image id>` (journaled with each claim it runs). */
  isolation: z.string().max(300).optional(),
});

/** A session a worker's earlier process left, ended by the new process and handed back. */
export const LeftSessionSchema = z.strictObject({
  task_id: Name,
  session_id: Name,
  /** What the new process pushed of its work (`agent/<session>`), when it had any. */
  pushed: z.string().regex(/^[0-9a-f]{40}([0-9a-f]{24})?$/).optional(),
});

/** `POST /workers/<name>/register`. */
export const RegisterBodySchema = z.strictObject({
  slots: z.number().int().min(1).max(256),
  roles: z.array(Name).max(100).optional(),
  version: z.string().max(100).optional(),
  /** The adapters it can (and cannot) start: tasks needing one it cannot start never reach it. */
  adapters: z.array(AdapterReadinessSchema).max(32).optional(),
  /**
   * A new worker process holds no session: every lease its name held is handed back at once
   * (no attempt counted), these with the work it pushed for them.
   */
  left: z.array(LeftSessionSchema).max(1024).optional(),
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
  /**
   * The agent did not start on the worker (its CLI, key, image or launch failed): the worker's
   * fault, not the task's — no attempt is counted and the task goes to another worker.
   */
  start_failure: z.string().max(4000).optional(),
  /**
   * No orchestrator answered when the agent ended (the run was stopped): its end is a stop's,
   * never a failed attempt; its pushed work is kept.
   */
  orchestrator_away: z.boolean().optional(),
});

/** A validated registration. */
export type RegisterBody = z.output<typeof RegisterBodySchema>;
/** A validated claim request. */
export type ClaimBody = z.output<typeof ClaimBodySchema>;
/** A validated report. */
export type ReportBody = z.output<typeof ReportBodySchema>;
/** One adapter's readiness on a worker. */
export type AdapterReadiness = z.output<typeof AdapterReadinessSchema>;
/** A session an earlier worker process left. */
export type LeftSession = z.output<typeof LeftSessionSchema>;

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
  /** An operator cordoned it: it gets no task until uncordoned (`service workers uncordon`). */
  cordoned?: string;
  /** An operator asked it to drain: it claims nothing more and ends once its agents are done. */
  drain?: boolean;
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

/** What a session's heartbeat answers: its verdict, and whether the worker should drain. */
export interface HeartbeatAnswer extends SessionVerdict {
  /** Claim nothing more; end once the running agents are done (`service workers drain`). */
  drain?: boolean;
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
