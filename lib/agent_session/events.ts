/**
 * What the run's agents tell the run loop (its decision core takes these events as they are):
 * an agent started, could not start, ended, or hit its provider's rate limit; or its task was
 * claimed by someone else first. Local agents (agent_pool.ts) and remote workers' sessions
 * (lib/workers) speak the same events.
 */
import type { WorktreePreparedData } from "../journal/events.ts";

/** Whether an agent's failure would repeat, and the line that says why (from the exit diagnosis). */
export interface ExitDiagnosis {
  retryable: boolean;
  /** One line for the operator, with the CLI's last error line when there is one. */
  reason: string;
  /** The kind named on the card's gate receipt (agent_failed, agent_timeout, spawn_error …). */
  kind: string;
}

/** What an agent's worktree got before its agent started (DESIGN.md §13). */
export type PreparedView = Omit<WorktreePreparedData, "task_id" | "session_id">;

/** An agent started on its task. */
export interface Spawned {
  type: "spawned";
  taskId: string;
  sessionId: string;
  startedAt: number;
  deadline: number;
  /** The attempt's number: one more than the task's claims in the run journal. */
  attempt: number;
  /**
   * Its number among the attempts that count against the retry limit (the task store's count
   * after the claim): lower than `attempt` after runs that counted none (a limit, a batch try).
   */
  counted?: number;
  model?: string;
  batchEligible?: boolean;
  /** Where the agent runs: `worktree` or `container:<runtime>:<image id>` (DESIGN.md §14). */
  isolation?: string;
  /** What its worktree environment gave it (absent when nothing was configured). */
  prepared?: PreparedView;
  /** The adapter that runs it. */
  adapter: string;
  /** The remote worker that runs it (`service worker`, DESIGN.md §16); absent: this machine. */
  worker?: string;
}

/** An agent could not start (its worktree, its environment's setup, or its process failed). */
export interface SpawnFailed {
  type: "spawn_failed";
  taskId: string;
  sessionId: string;
  diagnosis: ExitDiagnosis;
  /**
   * Set when the attempt got as far as its worktree environment (its setup failed): the claim
   * it made is journaled with this number, then what the worktree got.
   */
  attempt?: number;
  model?: string;
  /** The adapter the attempt was started with (set with `attempt`). */
  adapter?: string;
  prepared?: PreparedView;
  /** Where its setup ran (set with `attempt`): `worktree` or `container:<runtime>:<id>`. */
  isolation?: string;
}

/** An agent ended (on this machine, or on a remote worker). */
export interface AgentExited {
  type: "agent_exited";
  taskId: string;
  sessionId: string;
  exitCode: number;
  durationMs: number;
  /** The log matched a rate-limit rule. */
  rateLimited: boolean;
  /** The agent's branch holds work beyond its base (leftovers committed). */
  hasWork: boolean;
  /**
   * Asked only under `recovery.land_unreported` for interrupted work: true when the task has
   * completion signals and every one passes on that work.
   */
  signalsPass?: boolean;
  diagnosis: ExitDiagnosis;
  /**
   * It ran on a remote worker: which, and the commit it delivered (null: none); `drained` when
   * the worker ended it because the worker itself was stopping (`ended_by: "drain"`).
   */
  remote?: {
    worker: string;
    commit: string | null;
    push_error?: string;
    drained?: boolean;
    /**
     * Its end was not the task's doing: no orchestrator answered when it ended (`stop`: the
     * run was stopped), or its worker's process restarted (`restart`). No attempt is counted;
     * its pushed work is kept.
     */
    interrupted?: "stop" | "restart";
    /**
     * Its worker stopped heartbeating and its lease ran out: the agent's end was never seen
     * (its exit code is a stand-in), it may even run on.
     */
    lease_lost?: true;
  };
}

/** An agent's log showed its provider's rate limit. */
export interface RateLimitHit {
  type: "rate_limit_hit";
  taskId: string;
  sessionId: string;
  adapter: string;
  rule: string;
  line: string;
  until: number;
  /** `until` is the reset time the limit named (else the cooldown). */
  named: boolean;
}

/** The task was claimed through the task API before the loop could claim it. */
export interface ClaimLost {
  type: "claim_lost";
  taskId: string;
}

/** An event of the run's agents, for the run loop's decision core. */
export type AgentLaneEvent = Spawned | SpawnFailed | AgentExited | RateLimitHit | ClaimLost;
