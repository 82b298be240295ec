/**
 * One work order on a worker (DESIGN.md §16): fetch the claim's base (and the earlier attempt's
 * work it continues) into the worker's clone, start the agent exactly as the orchestrator would
 * (lib/agent_session/session.ts), wait for it, commit what it left, push `agent/<session>` with a
 * lease, report the pushed commit with the session log — with the session's own capability, never
 * the worker's token — and clean up. An order whose agent has not started when the worker begins
 * to drain is handed back at once (`ended_by: "drain"`, its starting point as its commit): the
 * orchestrator requeues it with no attempt counted. An agent that did not start for this
 * machine's reasons (its CLI, key, image or launch) is reported as a start failure (the worker's
 * fault: no attempt counted, the task goes to another worker); one that ended on its own with an
 * error while no orchestrator answered is reported as such (a stop's end, not a failed attempt).
 */
import { gitWorktree } from "../git/worktree_admin.ts";
import { agentBranch, commitPartialWork, worktreePath } from "../worktrees/worktrees.ts";
import { git, resolveCommit } from "../git/git.ts";
import { namedAdapter } from "../config/load.ts";
import type { ServiceConfig } from "../config/schema.ts";
import type { RunLaunch } from "../agent_session/run_isolation.ts";
import { AgentSession, SessionStartError } from "../agent_session/session.ts";
import { invocationArgv } from "../agent_session/invocation.ts";
import { agentExitCode } from "../agents/exit_status.ts";
import type { WorktreeEnvironments } from "../worktree_env/environments.ts";
import type { WorkspacePaths } from "../workspace.ts";
import { RemoteError, type RemoteOptions } from "../git/remote.ts";
import { HttpApiError } from "../http/api_error.ts";
import { type TaskClient, TaskStoreUnavailable } from "../tasks/client.ts";
import { fetchBase, fetchSessionBranch, pushSessionBranch } from "../workers/remote_refs.ts";
import { dropTreeRecord } from "../worktrees/trees.ts";
import { WorktreeSetupError } from "../worktree_env/environments.ts";
import { isDiskFull } from "../util/disk_full.ts";
import { MAX_REPORT_LOG_BYTES, type ReportBody, type WorkOrder } from "../workers/protocol.ts";

/** SIGTERM to SIGKILL grace of an agent a drain ends: the pod's own grace is short. */
export const DRAIN_KILL_GRACE_MS = 2_000;

/** One agent running here (or about to). */
export interface Running {
  order: WorkOrder;
  session?: AgentSession;
  /** What `agent/<session>` on the remote is at (the lease of the next push). */
  pushed?: string;
  /** Its report was sent (taken or refused): no heartbeat of it follows. */
  reported?: boolean;
  /** A heartbeat request of it is in flight. */
  beating?: boolean;
  /** Its last heartbeat was not delivered (said once; its next delivered one says so). */
  undelivered?: boolean;
  /** A push of what its agent committed meanwhile is under way (the final push waits for it). */
  progress?: Promise<void>;
  done: Promise<void>;
}

/** What an order needs of its worker. */
export interface OrderContext {
  name: string;
  remoteName: string;
  root: string;
  paths: WorkspacePaths;
  config: ServiceConfig;
  remote: RemoteOptions;
  client: TaskClient;
  environments: WorktreeEnvironments;
  /** How `adapter`'s agents start here (decided once per adapter). */
  launch(adapter: string): Promise<RunLaunch>;
  /** Where its agents call the task API. */
  agentServer(): string;
  /** True once the worker drains: an agent not started yet is not started. */
  draining(): boolean;
  /** True once the drain's time is up: an agent that starts now is ended at once. */
  ending(): boolean;
  /**
   * True once a second signal came: a report no orchestrator answers is given up, and its
   * session is left on this clone for the next process to hand back.
   */
  stopped(): boolean;
  log: (line: string) => void;
}

/** The path of a session's route on the orchestrator. */
export function sessionPath(worker: string, sessionId: string, what: string): string {
  return `/workers/${encodeURIComponent(worker)}/sessions/${encodeURIComponent(sessionId)}/${what}`;
}

/** Run one order to its report. */
export async function runOrder(c: OrderContext, r: Running): Promise<void> {
  const { order } = r;
  const task = order.task;
  const started = Date.now();
  if (c.draining()) return await handBack(c, r, started);
  c.log(
    `${task.id}: agent ${order.session_id} starting (attempt ${order.attempt}, ${order.adapter})`,
  );
  let exitCode = -1;
  /** Why the agent did not start, when that is this machine's fault (not the task's). */
  let startFailure: string | undefined;
  /** No orchestrator answered when the agent ended on its own (the run was stopped). */
  let away = false;
  try {
    await fetchBase(c.remote, order.base_ref).catch((e) => {
      // The run published its base before the claim was answered: a fetch that fails is this
      // machine's access to its remote (network, credentials), not the task's doing.
      startFailure = `could not fetch the run's base from ${c.remoteName}: ${(e as Error).message}`;
      throw e;
    });
    if (!await resolveCommit(order.base, { cwd: c.root })) {
      throw new Error(
        `the base ${order.base.slice(0, 12)} is not on ${c.remoteName} (${order.base_ref})`,
      );
    }
    if (order.start) {
      const tip = await fetchSessionBranch(c.remote, order.session_id);
      if (tip !== order.start) {
        throw new Error(`agent/${order.session_id} is not at ${order.start}`);
      }
      r.pushed = order.start;
    }
    const adapter = namedAdapter(c.config, order.adapter);
    const { launch, isolation } = await c.launch(order.adapter).catch((e) => {
      startFailure = (e as Error).message;
      throw e;
    });
    // The last moment not to start it: a drain that began meanwhile hands it back.
    if (c.draining()) return await handBack(c, r, started);
    const role = c.config.roles[task.role] ?? {};
    r.session = await AgentSession.start({
      paths: c.paths,
      runId: order.run_id,
      task,
      sessionId: order.session_id,
      baseCommit: order.base,
      startCommit: order.start,
      adapter,
      launch,
      argv: invocationArgv(adapter, task, {
        prompt: order.prompt,
        model: order.model,
        effort: order.effort,
        workdir: worktreePath(c.root, order.session_id),
      }),
      // Its own credential, never this worker's token (docs/security.md "Agents").
      serverUrl: c.agentServer(),
      ...(order.agent_token ? { token: order.agent_token } : {}),
      timeoutS: order.timeout_s,
      graceMs: order.grace_ms,
      agentEnv: [...c.config.agent_env, ...(role.agent_env ?? [])],
      environments: c.environments,
      ...(isolation ? { isolation } : {}),
    });
    if (c.ending()) void r.session.terminate("drain", DRAIN_KILL_GRACE_MS);
    const status = await r.session.proc.status;
    exitCode = agentExitCode({
      code: status.code,
      signal: status.signal ?? null,
      timedOut: r.session.endedBy === "timeout",
    });
    // Ended on its own with an error while no run answered: its report may have met a stop.
    if (!r.session.endedBy && exitCode !== 0) away = !(await orchestratorAnswers(c, r));
  } catch (e) {
    const err = e instanceof SessionStartError ? e.cause as Error : e as Error;
    // Its launch on this machine failed (CLI, key, image, spawn): not the task's doing. A
    // worktree setup that failed is the task's attempt, as on the orchestrator.
    if (e instanceof SessionStartError && !(err instanceof WorktreeSetupError)) {
      startFailure ??= err.message;
    }
    // A full disk here (cutting the worktree, the agent's log) is this machine's, not the task's.
    if (isDiskFull(err)) startFailure ??= `the disk is full on worker ${c.name}: ${err.message}`;
    c.log(`${task.id}: agent ${order.session_id} did not start: ${err.message}`);
    await writeLog(c, order, `service worker ${c.name}: the agent did not start: ${err.message}\n`);
  }
  const delivered = await deliver(c, r);
  if (away) {
    c.log(
      `${task.id}: agent ${order.session_id} ended while no orchestrator answered (a stop): ` +
        "its pushed work is kept for the next run, no attempt counted",
    );
  }
  const taken = await report(c, r, {
    task_id: task.id,
    session_id: order.session_id,
    exit_code: exitCode,
    duration_ms: Date.now() - started,
    ...(r.session?.endedBy ? { ended_by: r.session.endedBy } : {}),
    commit: delivered.commit,
    ...(delivered.error ? { push_error: delivered.error } : {}),
    ...await logOf(c, order),
    ...(startFailure !== undefined ? { start_failure: startFailure.slice(0, 4000) } : {}),
    ...(away ? { orchestrator_away: true } : {}),
  });
  // Given up: its worktree and PID file stay, so the next process here hands the session back.
  if (taken) await cleanUp(c, r);
}

/**
 * True when the orchestrator answers now: the session's own heartbeat is sent (a lease renewed
 * just before its report changes nothing); a server that does not answer, or answers 502-504, is
 * away.
 */
async function orchestratorAnswers(c: OrderContext, r: Running): Promise<boolean> {
  try {
    await c.client.request(
      "POST",
      sessionPath(c.name, r.order.session_id, "heartbeat"),
      { task_id: r.order.task.id, ...(r.pushed ? { pushed: r.pushed } : {}) },
      { token: r.order.session_token },
    );
    return true;
  } catch (e) {
    return !(e instanceof TaskStoreUnavailable ||
      (e instanceof HttpApiError && (e.status === 502 || e.status === 503 || e.status === 504)));
  }
}

/**
 * The worker drains before this order's agent started: hand it back at once. Its commit is where
 * it would have started (the earlier attempt's work, already on `agent/<session>`), so nothing
 * of that is lost.
 */
async function handBack(c: OrderContext, r: Running, started: number): Promise<void> {
  const { order } = r;
  c.log(`${order.task.id}: handing ${order.session_id} back unstarted: this worker is draining`);
  const taken = await report(c, r, {
    task_id: order.task.id,
    session_id: order.session_id,
    exit_code: -1,
    duration_ms: Date.now() - started,
    ended_by: "drain",
    commit: order.start ?? null,
    log: `service worker ${c.name}: drained before its agent started\n`,
    log_truncated: false,
  });
  if (taken) await cleanUp(c, r);
}

/** Commit what the agent left and push `agent/<session>`; the commit, or why not. */
async function deliver(
  c: OrderContext,
  r: Running,
): Promise<{ commit: string | null; error?: string }> {
  await r.progress; // a heartbeat's push of earlier commits first: its lease is the next one's
  const path = worktreePath(c.root, r.order.session_id);
  let tip: string;
  try {
    tip = (await commitPartialWork(path, `service: work of ${r.order.task.id} on ${c.name}`, {
      // Ignored and copied files are kept out of what is pushed (lib/worktrees/keep_out.ts).
      base: r.order.base,
    })).tip;
  } catch {
    return { commit: null }; // no worktree: the agent never started
  }
  if (tip === r.order.base) return { commit: null };
  return await pushTip(c, r, tip);
}

/** Push `tip` to `agent/<session>` with the lease of the last push (three tries when offline). */
export async function pushTip(
  c: OrderContext,
  r: Running,
  tip: string,
): Promise<{ commit: string | null; error?: string }> {
  if (r.pushed === tip) return { commit: tip };
  for (let attempt = 1;; attempt++) {
    try {
      const out = await pushSessionBranch(c.remote, {
        sessionId: r.order.session_id,
        sha: tip,
        expected: r.pushed,
      });
      if (!out.pushed) return { commit: null, error: out.detail };
      r.pushed = tip;
      return { commit: tip };
    } catch (e) {
      const retryable = e instanceof RemoteError && e.retryable;
      if (!retryable || attempt >= 3) return { commit: null, error: (e as Error).message };
      await new Promise((res) => setTimeout(res, 1000 * attempt));
    }
  }
}

async function writeLog(c: OrderContext, order: WorkOrder, text: string): Promise<void> {
  await Deno.mkdir(c.paths.runtime, { recursive: true });
  await Deno.writeTextFile(`${c.paths.runtime}/${order.session_id}.log`, text, { append: true });
}

/** The session log for the report (its tail when longer than the report carries). */
async function logOf(
  c: OrderContext,
  order: WorkOrder,
): Promise<Pick<ReportBody, "log" | "log_truncated">> {
  let bytes: Uint8Array;
  try {
    bytes = await Deno.readFile(`${c.paths.runtime}/${order.session_id}.log`);
  } catch {
    return { log: "", log_truncated: false };
  }
  const truncated = bytes.length > MAX_REPORT_LOG_BYTES;
  const tail = truncated ? bytes.subarray(bytes.length - MAX_REPORT_LOG_BYTES) : bytes;
  return { log: new TextDecoder().decode(tail), log_truncated: truncated };
}

/**
 * Report with the session's capability until the orchestrator answers: accepted, 409 (the lease
 * is gone), or 401 after an unanswered try (that try was taken: the capability ends with it).
 */
async function report(c: OrderContext, r: Running, body: ReportBody): Promise<boolean> {
  try {
    return await sendReport(c, r, body);
  } finally {
    r.reported = true;
  }
}

/** True when the orchestrator answered it (taken or refused); false when it was given up. */
async function sendReport(c: OrderContext, r: Running, body: ReportBody): Promise<boolean> {
  const id = body.task_id;
  const path = sessionPath(c.name, body.session_id, "report");
  let tried = false;
  // A worker that is stopping still reports: its agent's work is what the run waits for.
  for (;;) {
    try {
      await c.client.request("POST", path, body, { token: r.order.session_token });
      c.log(
        `${id}: agent ${body.session_id} ${
          body.ended_by === "drain" ? "drained" : `exited ${body.exit_code}`
        }; reported ` +
          (body.commit ? `commit ${body.commit.slice(0, 12)}` : "no commit") +
          (body.push_error ? ` (push failed: ${body.push_error})` : ""),
      );
      return true;
    } catch (e) {
      if (e instanceof HttpApiError && (e.status === 409 || (e.status === 401 && tried))) {
        c.log(
          `${id}: report refused: ${e.message}` +
            (e.status === 401 ? " (an earlier try was taken, or its run ended)" : ""),
        );
        return true;
      }
      const again = e instanceof TaskStoreUnavailable ||
        (e instanceof HttpApiError && e.status >= 500);
      if (!again) {
        c.log(`${id}: report refused: ${(e as Error).message}`);
        return true;
      }
      if (c.stopped()) {
        c.log(
          `${id}: report of ${body.session_id} given up: no orchestrator answers and the worker ` +
            `was stopped again; its work is on ${agentBranch(body.session_id)}` +
            (body.commit ? ` at ${body.commit.slice(0, 12)}` : "") +
            ", and the next `service worker` on this clone hands the session back",
        );
        return false;
      }
      if (!tried) c.log(`${id}: report not taken yet (${(e as Error).message}); trying again`);
      tried = true;
      await new Promise((res) => setTimeout(res, 1000));
    }
  }
}

/** Remove the session's worktree and branch here (the remote keeps the work). */
async function cleanUp(c: OrderContext, r: Running): Promise<void> {
  const id = r.order.session_id;
  const path = worktreePath(c.root, id);
  try {
    await r.session?.cleanup();
    const role = r.order.task.role;
    if (r.session && c.environments.spec(role).teardown.length > 0) {
      await c.environments.teardown({
        tree: path,
        role,
        env: r.session.env,
        logPath: r.session.logPath,
      });
    }
  } catch (e) {
    c.log(`${r.order.task.id}: teardown failed: ${(e as Error).message}`);
  }
  await gitWorktree(c.root, ["remove", "--force", path], { allowFailure: true });
  await dropTreeRecord(c.root, id);
  await git(["branch", "-D", `agent/${id}`], { cwd: c.root, allowFailure: true });
  await c.environments.releasePorts(id).catch(() => {});
}
