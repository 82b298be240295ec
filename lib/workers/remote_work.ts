/**
 * The orchestrator's side of remote workers (DESIGN.md §16), the desk the `/workers/` routes
 * call while a run is live. A worker's claim becomes a `worker_asks` event that the decision
 * core answers with the one scheduling policy; the tasks it gets are claimed in the store on
 * that worker, their base commit is published to the remote, their prompt is rendered as a
 * local agent's would be, and the answer carries them. A report is checked against the session's
 * lease, the pushed branch is fetched and verified (the reported commit, descending from the
 * claim's base), checked out as the session's worktree here, and from then on it is any agent's
 * end: the same diagnosis, spend, capture, gates and landing. A lost lease fetches what the
 * worker last pushed: that is the partial work the next attempt continues.
 */
import {
  mintAgentCredential,
  mintWorkerSessionCredential,
  revokeAgentCredential,
  revokeWorkerSessionCredential,
} from "../auth/agent_credentials.ts";
import { rosterFor } from "./roster.ts";
import { relative } from "node:path";
import type { AgentAdapter } from "../agents/adapters/types.ts";
import { logTail } from "../agents/process.ts";
import { sessionLogPath } from "../agents/runtime_files.ts";
import { readSessionUsage } from "../agents/usage_reader.ts";
import type { SpendTracker } from "../cost/budget.ts";
import { git, resolveCommit } from "../git/git.ts";
import type { RemoteOptions } from "../git/remote.ts";
import type { RoleSettings } from "../config/schema.ts";
import type { RoleTemplate } from "../roles/templates.ts";
import type { TaskStore } from "../tasks/store.ts";
import type { Task } from "../tasks/task.ts";
import { runLogPath, type WorkspacePaths } from "../workspace.ts";
import { earlierWork, supersedeEarlierWork } from "../worktrees/earlier_work.ts";
import { agentBranch, createWorktree } from "../worktrees/worktrees.ts";
import type { WorktreeEnvironments } from "../worktree_env/environments.ts";
import type { WorkerDesk } from "./desk.ts";
import { requireLease } from "./leases.ts";
import type { ClaimBody, ReportAnswer, ReportBody, WorkOrder } from "./protocol.ts";
import { baseRef, fetchSessionBranch, publishBase, pushSessionBranch } from "./remote_refs.ts";
import type { TicketBook, TicketGrant } from "./tickets.ts";
import { ConflictError, DomainError } from "../errors.ts";
import type { WorkerRecord } from "./fleet.ts";
import type { LeftSession } from "./protocol.ts";
import { heartbeatIntervalS } from "./protocol.ts";
import { FleetWatch } from "./fleet_watch.ts";
import type { AgentLaneEvent, ExitDiagnosis } from "../agent_session/events.ts";
import type { EndReason } from "../agents/end_reason.ts";
import type { Dispatch, WorkerLaneEvent } from "./lane_events.ts";
import { type AgentWork, exitReason } from "../agent_session/lane.ts";
import { agentInvocation } from "../agent_session/invocation.ts";
import { followUpsNote, readFollowUps } from "../operator/follow_ups.ts";

/** What the remote-worker lane tells the run loop: its own events and the agents'. */
export type RemoteEvent = AgentLaneEvent | WorkerLaneEvent;

/** Settings of {@link RemoteWork}. */
export interface RemoteWorkOptions {
  paths: WorkspacePaths;
  runId: string;
  store: TaskStore;
  /** The git remote workers fetch from and push to (`landing.remote`, default `origin`). */
  remote: string;
  /** The adapters tasks may start with, by name (prompts and spend are theirs). */
  adapters: ReadonlyMap<string, AgentAdapter>;
  roles: Readonly<Record<string, RoleSettings>>;
  model?: string;
  effort?: string;
  timeoutS: (task: Task) => number;
  graceMs: number;
  work: AgentWork;
  spend: SpendTracker;
  environments?: WorktreeEnvironments;
  template: (role: string) => Promise<RoleTemplate>;
  attemptNumber: (taskId: string) => Promise<number>;
  sessionId: () => string;
  /** Hands a piece of work to the loop: its events are decided in order with the rest. */
  enqueue: (work: () => Promise<RemoteEvent[]>) => void;
  /** Hands an event to the loop. */
  push: (event: RemoteEvent) => void;
  landUnreported: boolean;
  /** A remote session not heard of for this long has lost its lease. */
  heartbeatTimeoutS: number;
  log: (line: string) => void;
  clock: () => number;
  /** The claim tickets of this run's Kubernetes Jobs (DESIGN.md §17), when it starts any. */
  tickets?: TicketBook;
}

/** A session running on a worker. */
interface RemoteSession {
  taskId: string;
  worker: string;
  base: string;
  adapter: string;
  startedAt: number;
  /** The last commit the worker said it pushed. */
  pushed?: string;
  /** When its worker was last heard of about it (ms). */
  seen: number;
  /**
   * Claimed with a Kubernetes Job's ticket: an agent that does not start in its pod is the
   * image's fault, which every next pod shares — an attempt, not a worker's start failure.
   */
  ticketed?: boolean;
}

/** The live run's desk for remote workers. */
export class RemoteWork implements WorkerDesk {
  readonly #o: RemoteWorkOptions;
  readonly #asks = new Map<string, (orders: WorkOrder[]) => void>();
  /** Requests that presented a claim ticket, with what it grants. */
  readonly #ticketed = new Map<string, TicketGrant>();
  /** Orders whose claim rows are not journaled yet, by session. */
  readonly #unrecorded = new Map<
    string,
    { orders: WorkOrder[]; left: Set<string>; answer: (orders: WorkOrder[]) => void }
  >();
  readonly #sessions = new Map<string, RemoteSession>();
  /** Sessions the run wants ended, with why (told at their next heartbeat). */
  readonly #ending = new Map<string, string>();
  /** Sessions whose report was taken (a repeated report is answered, not landed again). */
  readonly #reported = new Map<string, ReportAnswer>();
  #publishedBase: string | undefined;
  #publishing: Promise<void> = Promise.resolve();
  #closed = false;
  /** The workers the server heard from (fleet_watch.ts): slots, readiness, start failures. */
  readonly #fleet: FleetWatch;

  constructor(options: RemoteWorkOptions) {
    this.#o = options;
    this.#fleet = new FleetWatch({
      root: options.paths.root,
      push: options.push,
      log: options.log,
      clock: options.clock,
    });
  }

  /** The run being served. */
  get runId(): string {
    return this.#o.runId;
  }

  #remote(): RemoteOptions {
    return { root: this.#o.paths.root, remote: this.#o.remote };
  }

  /** True when `taskId` runs on a worker. */
  has(taskId: string): boolean {
    return [...this.#sessions.values()].some((s) => s.taskId === taskId);
  }

  /** The worker running `taskId`, if one does. */
  workerOf(taskId: string): string | undefined {
    return [...this.#sessions.values()].find((s) => s.taskId === taskId)?.worker;
  }

  /** Remote sessions, for `ps`-like displays. */
  live(): { taskId: string; sessionId: string; worker: string; startedAt: number }[] {
    return [...this.#sessions].map(([sessionId, s]) => ({
      taskId: s.taskId,
      sessionId,
      worker: s.worker,
      startedAt: s.startedAt,
    }));
  }

  /**
   * Ask the loop for tasks for `worker` (which can start `offer`'s adapters); resolves once the
   * core has decided. A claim with a ticket asks for the ticket's task only, as the ticket's
   * session; the ticket is used up by asking (403 unknown, 409 used, expired or of another run).
   */
  async claim(
    worker: string,
    body: ClaimBody,
    offer?: { adapters?: string[] },
  ): Promise<WorkOrder[]> {
    if (this.#closed) return [];
    const requestId = crypto.randomUUID();
    const grant = body.ticket === undefined ? undefined : await this.#redeem(body.ticket);
    if (this.#closed) return [];
    const answered = new Promise<WorkOrder[]>((resolve) => this.#asks.set(requestId, resolve));
    if (grant) this.#ticketed.set(requestId, grant);
    this.#o.push({
      type: "worker_asks",
      requestId,
      worker,
      free: grant ? 1 : body.free,
      roles: body.roles,
      ...(grant ? { task: grant.task_id } : {}),
      ...(offer ? { offer } : {}),
    });
    return await answered;
  }

  async #redeem(ticket: string): Promise<TicketGrant> {
    const book = this.#o.tickets;
    if (!book) {
      throw new DomainError(
        "forbidden",
        "ticket_unknown",
        "this run starts no Kubernetes Jobs: a claim ticket takes nothing here",
      );
    }
    const got = await book.redeem(ticket, this.#o.runId);
    if (got.ok) return got.grant;
    if (got.code === "ticket_unknown") throw new DomainError("forbidden", got.code, got.reason);
    throw new ConflictError(got.code, got.reason);
  }

  /**
   * A worker process registered: a new process holds no session, so every one its name held is
   * handed back at once (no attempt counted; what `left` says it pushed is kept).
   */
  registered(worker: string, record: WorkerRecord, left: LeftSession[]): void {
    this.#fleet.registered(record);
    const pushed = new Map(left.map((l) => [l.session_id, l.pushed]));
    for (const [sessionId, s] of this.#sessions) {
      if (s.worker !== worker) continue;
      if (pushed.get(sessionId)) s.pushed = pushed.get(sessionId);
      this.#o.enqueue(() =>
        this.lost(
          sessionId,
          `worker ${worker} restarted: its earlier process's agent ${sessionId} was ended`,
          "restart",
        )
      );
    }
  }

  /**
   * Sessions of `worker` that its process renewed within the last heartbeat interval and a half
   * and that a process registering under that name does not hand back in `left`: another live
   * process holds the name (two machines given one `--name`), not a restart of this one.
   */
  liveElsewhere(worker: string, left: LeftSession[]): string[] {
    const handed = new Set(left.map((l) => l.session_id));
    const window = heartbeatIntervalS(this.#o.heartbeatTimeoutS) * 1500;
    const now = this.#o.clock();
    return [...this.#sessions].filter(([id, s]) =>
      s.worker === worker && !handed.has(id) && Number.isFinite(s.seen) && now - s.seen < window
    ).map(([id]) => id);
  }

  /** Carry out the core's answer to a worker: claim, publish, render; then their events. */
  async dispatch(action: Dispatch): Promise<RemoteEvent[]> {
    const orders: WorkOrder[] = [];
    const events: RemoteEvent[] = [];
    const grant = this.#ticketed.get(action.requestId);
    this.#ticketed.delete(action.requestId);
    for (const t of action.tasks) {
      const out = await this.#handOut(action.worker, t.taskId, t.adapter, t.note, grant);
      events.push(out.event);
      if (out.order) orders.push(out.order);
    }
    const answer = this.#asks.get(action.requestId);
    this.#asks.delete(action.requestId);
    if (!answer) return events; // the loop closed: the claims lapse with their leases
    if (orders.length === 0) answer([]);
    else {
      // Answered once every claim is journaled (see `recorded`): a worker never runs an attempt
      // the journal does not know of, even when this process dies right after answering.
      const waiting = { orders, left: new Set(orders.map((o) => o.session_id)), answer };
      for (const o of orders) this.#unrecorded.set(o.session_id, waiting);
    }
    return events;
  }

  /** `sessionId`'s claim row is in the journal: its worker may hear of it. */
  recorded(sessionId: string): void {
    const waiting = this.#unrecorded.get(sessionId);
    if (!waiting) return;
    this.#unrecorded.delete(sessionId);
    waiting.left.delete(sessionId);
    if (waiting.left.size === 0) waiting.answer(waiting.orders);
  }

  async #handOut(
    worker: string,
    taskId: string,
    adapterName: string,
    note: string | undefined,
    grant?: TicketGrant,
  ): Promise<{ event: RemoteEvent; order?: WorkOrder }> {
    const o = this.#o;
    // A ticket's claim runs as the session its Job was labelled with.
    const sessionId = grant?.task_id === taskId ? grant.session_id : o.sessionId();
    try {
      await o.store.claim(taskId, sessionId, worker);
    } catch {
      return { event: { type: "claim_lost", taskId } };
    }
    const task = o.store.require(taskId);
    const adapter = o.adapters.get(adapterName);
    try {
      if (!adapter) throw new Error(`adapter ${adapterName} is not ready`);
      const tip = await o.work.targetTip();
      const earlier = task.resume_from
        ? await earlierWork(o.paths.root, task.resume_from, tip)
        : undefined;
      const base = earlier?.base ?? tip;
      await this.#publish(base);
      if (earlier) {
        // The earlier attempt's work is where this one starts: on its own branch, on the remote.
        const pushed = await pushSessionBranch(this.#remote(), {
          sessionId,
          sha: earlier.commit,
        });
        if (!pushed.pushed) throw new Error(pushed.detail);
        await supersedeEarlierWork(o.paths.root, task.resume_from!, earlier.commit);
      }
      const role = o.roles[task.role] ?? {};
      const invocation = agentInvocation(adapter, await o.template(task.role), task, {
        model: role.model ?? o.model,
        effort: role.effort ?? o.effort,
        workdir: ".",
        retryNote: note,
        followUps: followUpsNote(await readFollowUps(o.paths, task.id)),
        earlierWork: earlier && { session: task.resume_from!, base: earlier.base },
        ports: o.environments?.spec(task.role).ports,
      });
      const attempt = await o.attemptNumber(taskId);
      const startedAt = o.clock();
      const timeoutS = o.timeoutS(task);
      const isolation = grant?.isolation ?? this.#fleet.isolation(worker, adapter.name);
      this.#sessions.set(sessionId, {
        taskId,
        worker,
        base,
        adapter: adapter.name,
        startedAt,
        seen: startedAt,
        ...(grant?.task_id === taskId ? { ticketed: true } : {}),
      });
      const order: WorkOrder = {
        run_id: o.runId,
        task,
        session_id: sessionId,
        attempt,
        adapter: adapter.name,
        ...(invocation.model ? { model: invocation.model } : {}),
        ...(role.effort ?? o.effort ? { effort: role.effort ?? o.effort } : {}),
        prompt: invocation.prompt,
        base,
        base_ref: baseRef(o.runId),
        ...(earlier ? { start: earlier.commit } : {}),
        timeout_s: timeoutS,
        grace_ms: o.graceMs,
        // The agent's own credential: this session's task only, never the worker's token.
        agent_token: mintAgentCredential(o.paths.root, { runId: o.runId, taskId, sessionId }),
        // The worker's for this session alone (its heartbeat and report).
        session_token: mintWorkerSessionCredential(o.paths.root, {
          runId: o.runId,
          taskId,
          sessionId,
          worker,
        }),
      };
      return {
        order,
        event: {
          type: "spawned",
          taskId,
          sessionId,
          startedAt,
          deadline: startedAt + timeoutS * 1000,
          attempt,
          counted: task.attempts,
          model: invocation.model,
          batchEligible: task.batch_eligible,
          adapter: adapter.name,
          worker,
          // Where the worker runs this adapter's agents: the Job's pod, else as the worker said
          // when it registered.
          ...(isolation ? { isolation } : {}),
        },
      };
    } catch (e) {
      const message = (e as Error).message;
      return {
        event: {
          type: "spawn_failed",
          taskId,
          sessionId,
          diagnosis: {
            kind: "spawn_failed",
            reason: `could not hand the task to worker ${worker}: ${message}`,
            retryable: true,
          },
        },
      };
    }
  }

  /**
   * Publish `base` as the run's base on the remote, one push at a time (claims are handed out
   * side by side, and two pushes of one ref at once make git refuse one); a base already there
   * is not pushed again.
   */
  #publish(base: string): Promise<void> {
    const next = this.#publishing.catch(() => {}).then(async () => {
      if (this.#publishedBase === base) return;
      await publishBase(this.#remote(), this.#o.runId, base);
      this.#publishedBase = base;
    });
    this.#publishing = next;
    return next;
  }

  /** Why the run wants `sessionId` ended, if it does. */
  ending(sessionId: string): string | undefined {
    return this.#ending.get(sessionId);
  }

  /** Ask `taskId`'s worker to end its agent (told at its next heartbeat). */
  end(taskId: string, reason: EndReason): void {
    for (const [sessionId, s] of this.#sessions) {
      if (s.taskId === taskId) this.#ending.set(sessionId, reason);
    }
  }

  /** A heartbeat of `worker` about `sessionId`. */
  touched(worker: string, taskId: string, sessionId: string, pushed?: string): void {
    const s = this.#sessions.get(sessionId);
    if (!s || s.worker !== worker || s.taskId !== taskId) return;
    s.seen = this.#o.clock();
    if (pushed) s.pushed = pushed;
  }

  /**
   * Sessions whose task already reported (DONE, FAILED, CANCELLED) are out of the heartbeat
   * monitor's sight (it watches claimed tasks): one whose worker has not been heard of for a
   * lease is lost here, so a worker that dies between its agent's report and its own never
   * leaves the run waiting.
   */
  expired(): { sessionId: string; reason: string }[] {
    const limit = this.#o.clock() - this.#o.heartbeatTimeoutS * 1000;
    const out: { sessionId: string; reason: string }[] = [];
    for (const [sessionId, s] of this.#sessions) {
      const task = this.#o.store.get(s.taskId);
      // Claimed (or orphaned by it) tasks are the heartbeat monitor's; this is for the others.
      const reported = task?.session_id === sessionId &&
        (task.status === "DONE" || task.status === "FAILED" || task.status === "CANCELLED");
      if (!reported || s.seen > limit) continue;
      s.seen = Number.POSITIVE_INFINITY; // once
      out.push({
        sessionId,
        reason:
          `worker ${s.worker} stopped heartbeating after its agent reported: its lease expired`,
      });
    }
    return out;
  }

  /** A session an earlier process handed to `worker`, still leased: this run waits for it. */
  adopt(task: Task, base: string | undefined): RemoteEvent | undefined {
    if (!task.worker || !task.session_id) return undefined;
    const startedAt = task.updated_at ? Date.parse(task.updated_at) : this.#o.clock();
    this.#sessions.set(task.session_id, {
      taskId: task.id,
      worker: task.worker,
      base: base ?? "",
      adapter: "",
      startedAt,
      seen: this.#o.clock(),
    });
    return {
      type: "remote_adopted",
      taskId: task.id,
      sessionId: task.session_id,
      worker: task.worker,
      startedAt,
      deadline: startedAt + this.#o.timeoutS(task) * 1000,
    };
  }

  /**
   * A worker's report: its lease is checked in the loop's turn, its work fetched and verified,
   * and its end decided like any agent's. A repeated report of a taken session gets the same
   * answer; one whose lease is gone is 409.
   */
  report(worker: string, body: ReportBody): Promise<ReportAnswer> {
    const again = this.#reported.get(body.session_id);
    if (again) return Promise.resolve(again);
    return new Promise<ReportAnswer>((resolve, reject) => {
      this.#o.enqueue(async () => {
        try {
          const { answer, events } = await this.#take(worker, body);
          resolve(answer);
          return events;
        } catch (e) {
          reject(e);
          return [];
        }
      });
    });
  }

  async #take(
    worker: string,
    body: ReportBody,
  ): Promise<{ answer: ReportAnswer; events: RemoteEvent[] }> {
    const o = this.#o;
    const again = this.#reported.get(body.session_id);
    if (again) return { answer: again, events: [] };
    const task = requireLease(o.store, worker, body.task_id, body.session_id);
    const session = this.#sessions.get(body.session_id);
    if (body.start_failure !== undefined && !session?.ticketed) {
      // The worker's fault, not the task's: counted on the worker, never as an attempt.
      const cordoned = await this.#fleet.startFailed(
        worker,
        session?.adapter ?? "",
        body.start_failure,
      );
      this.#sessions.delete(body.session_id);
      this.#ending.delete(body.session_id);
      revokeAgentCredential(o.paths.root, body.session_id);
      revokeWorkerSessionCredential(o.paths.root, body.session_id);
      const answer: ReportAnswer = { accepted: true, task_id: task.id, status: task.status };
      this.#reported.set(body.session_id, answer);
      return {
        answer,
        events: [{
          type: "remote_start_failed",
          taskId: task.id,
          sessionId: body.session_id,
          worker,
          reason: body.start_failure,
          ...(cordoned ? { cordoned } : {}),
        }],
      };
    }
    if (body.start_failure === undefined) this.#fleet.started(worker);
    // A session an earlier process claimed has no base in memory: it is found once its work is
    // fetched (#materialise), never from the target's tip, which may have moved since the claim.
    const base = session?.base ?? "";
    const logPath = sessionLogPath(o.paths.runtime, body.session_id);
    await Deno.mkdir(o.paths.runtime, { recursive: true });
    await Deno.writeTextFile(
      logPath,
      (body.log_truncated ? `[earlier output of this session stayed on worker ${worker}]\n` : "") +
        body.log,
    );
    let work: { hasWork: boolean; problem?: string } = { hasWork: false };
    if (body.commit) {
      work = await this.#materialise(task, body.session_id, base, body.commit, logPath);
    } else if (!body.push_error && task.status === "DONE") {
      // Reported with no change at all: its worktree is the base, landed like a local one's.
      const at = base || await this.#claimedBase(body);
      await this.#checkOut(task, body.session_id, at, at, logPath);
    }
    const adapter = o.adapters.get(session?.adapter || "") ?? [...o.adapters.values()][0];
    await readSessionUsage(adapter, logPath)
      .then((usage) => o.spend.record(task.id, body.session_id, usage, { adapter: adapter.name }))
      .catch((e) => o.log(`${task.id}: could not record spend: ${(e as Error).message}`));
    const rateLimited = body.ended_by === "rate_limit";
    let diagnosis: ExitDiagnosis;
    const problem = body.push_error ?? work.problem;
    if (problem) {
      diagnosis = {
        kind: "push_failed",
        reason: `worker ${worker} could not deliver ${agentBranch(body.session_id)}: ${problem}`,
        retryable: true,
      };
    } else {
      const { fastExit: _f, ...d } = exitReason({
        exitCode: body.exit_code,
        durationMs: body.duration_ms,
        rateLimited,
        endedBy: body.ended_by,
        logPath: relative(o.paths.root, runLogPath(o.paths, o.runId, body.session_id)),
        logTail: await logTail(logPath, 20),
        adapter: adapter.name,
      });
      diagnosis = d;
    }
    const exitedOnItsOwn = !body.ended_by && body.exit_code === 0;
    const signalsPass = work.hasWork && o.landUnreported && !exitedOnItsOwn && !rateLimited
      ? await o.work.signalsPass(task)
      : undefined;
    this.#sessions.delete(body.session_id);
    this.#ending.delete(body.session_id);
    revokeAgentCredential(o.paths.root, body.session_id);
    // Its capability ends with its report (a repeated report finds it gone: 401, the worker
    // knows its report was taken or its run ended).
    revokeWorkerSessionCredential(o.paths.root, body.session_id);
    const answer: ReportAnswer = { accepted: true, task_id: task.id, status: task.status };
    this.#reported.set(body.session_id, answer);
    return {
      answer,
      events: [{
        type: "agent_exited",
        taskId: task.id,
        sessionId: body.session_id,
        exitCode: body.exit_code,
        durationMs: body.duration_ms,
        rateLimited,
        hasWork: work.hasWork,
        ...(signalsPass === undefined ? {} : { signalsPass }),
        diagnosis,
        remote: {
          worker,
          commit: work.hasWork || !problem ? body.commit : null,
          ...(problem ? { push_error: problem } : {}),
          ...(body.ended_by === "drain" ? { drained: true } : {}),
          // Ended while no run answered (a stop): not a failed attempt.
          ...(body.orchestrator_away && !body.ended_by ? { interrupted: "stop" as const } : {}),
        },
      }],
    };
  }

  /** The base of a session this process did not start: the claim's, known to the target. */
  async #claimedBase(body: ReportBody): Promise<string> {
    const root = this.#o.paths.root;
    const tip = await this.#o.work.targetTip();
    // Without the claim in memory (the orchestrator restarted), the base is where the pushed
    // work meets the target branch: the commit the worktree was cut from, or later.
    if (body.commit && await resolveCommit(body.commit, { cwd: root })) {
      const r = await git(["merge-base", tip, body.commit], { cwd: root, allowFailure: true });
      if (r.code === 0) return r.stdout.trim();
    }
    return tip;
  }

  /**
   * Fetch `agent/<session>` and check it out as the session's worktree here, when it is the
   * reported commit and descends from `base`; what went wrong otherwise.
   */
  async #materialise(
    task: Task,
    sessionId: string,
    base: string,
    commit: string,
    logPath: string,
  ): Promise<{ hasWork: boolean; problem?: string }> {
    const o = this.#o;
    const root = o.paths.root;
    let tip: string;
    try {
      tip = await fetchSessionBranch(this.#remote(), sessionId);
    } catch (e) {
      return { hasWork: false, problem: (e as Error).message };
    }
    if (tip !== commit) {
      return {
        hasWork: false,
        problem: `the remote's ${agentBranch(sessionId)} is at ${tip.slice(0, 12)}, ` +
          `not the reported ${commit.slice(0, 12)}`,
      };
    }
    if (!base) base = await this.#claimedBase({ commit } as ReportBody);
    const descends = await git(["merge-base", "--is-ancestor", base, commit], {
      cwd: root,
      allowFailure: true,
    });
    if (descends.code !== 0) {
      return {
        hasWork: false,
        problem: `${commit.slice(0, 12)} does not descend from the claim's base ${
          base.slice(0, 12)
        }`,
      };
    }
    if (commit === base && task.status !== "DONE") return { hasWork: false };
    await this.#checkOut(task, sessionId, base, commit, logPath);
    return { hasWork: commit !== base };
  }

  /** Check `commit` out as `sessionId`'s worktree here, its diff taken from `base`. */
  async #checkOut(task: Task, sessionId: string, base: string, commit: string, logPath: string) {
    const cut = await createWorktree(this.#o.paths.root, sessionId, commit);
    this.#o.work.set(task.id, { worktree: { ...cut, base }, sessionId, logPath, role: task.role });
  }

  /**
   * `sessionId`'s worker lost its lease: what it last pushed is fetched and kept (the next
   * attempt continues it); then the agent's end is decided as an interrupted one's.
   */
  async lost(
    sessionId: string,
    reason: string,
    interrupted?: "restart",
  ): Promise<RemoteEvent[]> {
    const o = this.#o;
    const session = this.#sessions.get(sessionId);
    if (!session) return []; // reported, or lost already
    const taskId = session.taskId;
    this.#sessions.delete(sessionId);
    this.#ending.delete(sessionId);
    revokeAgentCredential(o.paths.root, sessionId);
    // Its worker keeps its capability: a late report is 409. (A restarted worker's session is
    // handed back, not lost.)
    if (!interrupted) rosterFor(o.paths.root).leaseLost();

    const logPath = sessionLogPath(o.paths.runtime, sessionId);
    let hasWork = false;
    let commit: string | null = null;
    try {
      const tip = await fetchSessionBranch(this.#remote(), sessionId);
      const task = o.store.require(taskId);
      const base = session.base || await this.#claimedBase({ commit: tip } as ReportBody);
      const got = await this.#materialise(task, sessionId, base, tip, logPath);
      hasWork = got.hasWork;
      commit = got.hasWork ? tip : null;
    } catch {
      // Nothing pushed (no such branch) or the remote is unreachable: nothing to continue from.
    }
    return [{
      type: "agent_exited",
      taskId,
      sessionId,
      exitCode: -9,
      durationMs: o.clock() - session.startedAt,
      rateLimited: false,
      hasWork,
      diagnosis: {
        kind: "agent_lost",
        reason: `${reason}; ${hasWork ? "the work it pushed is kept" : "it pushed no work"}`,
        retryable: true,
      },
      remote: {
        worker: session.worker,
        commit,
        // A reported task whose worker vanished: its final work never arrived.
        // (A restarted worker pushed what its dead process left: that work arrived.)
        ...(o.store.get(taskId)?.status === "DONE" && !(interrupted && hasWork)
          ? { push_error: reason }
          : {}),
        // No end of its agent was seen: the exit code above is a stand-in (the board says so).
        ...(interrupted ? { interrupted } : { lease_lost: true as const }),
      },
    }];
  }

  /** The loop ended: requests still waiting get nothing. */
  close(): void {
    this.#closed = true;
    this.#fleet.close();
    for (const answer of this.#asks.values()) answer([]);
    this.#asks.clear();
    this.#ticketed.clear();
    for (const w of this.#unrecorded.values()) {
      w.answer(w.orders.filter((o) => !w.left.has(o.session_id)));
    }
    this.#unrecorded.clear();
  }
}
