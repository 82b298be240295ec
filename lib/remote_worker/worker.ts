/**
 * `service worker` (DESIGN.md §16): runs the orchestrator's agents on another machine. It
 * registers with its slots and roles, asks for tasks while a slot is free, and for each order
 * fetches the claim's base (and the earlier attempt's work it continues) from the git remote into
 * its own clone, starts the agent exactly as the orchestrator would (lib/orchestrator/session.ts:
 * the same worktree, environment allow-list, worktree environment, isolation, headless launch,
 * PID and heartbeat files), renews its lease by heartbeat while pushing what the agent commits, and when
 * the agent ends commits its leftovers, pushes `agent/<session>` with a lease and reports the
 * pushed commit with the session log. It never holds the orchestrator's provider keys: the agent
 * runs with this machine's environment.
 */
import { gitWorktree } from "../git/worktree_admin.ts";
import { resolve } from "node:path";
import { commitPartialWork, worktreePath } from "../worktrees/worktrees.ts";
import { dropTreeRecord, openWorktree } from "../worktrees/trees.ts";
import { git, resolveCommit } from "../git/git.ts";
import { loadWorkspaceConfig, namedAdapter } from "../config/load.ts";
import type { ServiceConfig } from "../config/schema.ts";
import { type RunLaunch, runLaunch } from "../orchestrator/run_isolation.ts";
import { AgentSession, SessionStartError } from "../orchestrator/session.ts";
import { invocationArgv } from "../orchestrator/invocation.ts";
import type { EndReason } from "../orchestrator/core/state.ts";
import { agentExitCode } from "../agents/exit_status.ts";
import { WorktreeEnvironments } from "../worktree_env/environments.ts";
import { type WorkspacePaths, workspacePaths } from "../workspace.ts";
import { ensureServiceExcluded } from "../worktrees/exclude.ts";
import {
  fetchBranch,
  pushBranch,
  RemoteError,
  type RemoteOptions,
  remoteUrl,
} from "../landing/push.ts";
import { TaskApiError, TaskClient, TaskStoreUnavailable } from "../tasks/client.ts";
import { UserFacingError } from "../errors.ts";
import { isLoopbackHost } from "../util/loopback.ts";
import { fetchBase } from "../workers/remote_refs.ts";
import {
  type HeartbeatAnswer,
  MAX_REPORT_LOG_BYTES,
  type RegisterAnswer,
  type ReportBody,
  type WorkOrder,
} from "../workers/protocol.ts";
import { WorktreeSetupError } from "../worktree_env/environments.ts";
import { serverProblem } from "./server_check.ts";
import { handBackLeftovers } from "./leftovers.ts";
import { checkAdapters } from "./readiness.ts";

/** Options of {@link runWorker}. */
export interface WorkerOptions {
  /** The orchestrator's URL (`server.public_url` behind a reverse proxy). */
  server: string;
  /** A `worker`-scope token (SERVICE_TOKEN). */
  token?: string;
  /** This worker's name (journaled with each task it runs). */
  name: string;
  slots: number;
  /** Roles it takes (any when absent). */
  roles?: string[];
  /** The git remote of its clone that the orchestrator fetches from. */
  remote: string;
  /** Its clone of the repository (with service.yaml). */
  dir: string;
  /** How often it asks for tasks while a slot is free (default 1000 ms). */
  pollMs?: number;
  log: (line: string) => void;
  /** Aborted: agents are ended (their work pushed and reported), then it returns. */
  signal?: AbortSignal;
}

/** The worker cannot start (no clone, no service.yaml, no such remote). */
export class WorkerSetupError extends UserFacingError {
  constructor(message: string, fix: string) {
    super(message, 1, fix);
    this.name = "WorkerSetupError";
  }
}

const END_REASONS: readonly EndReason[] = [
  "timeout",
  "stop",
  "rate_limit",
  "reported",
  "cancelled",
];

/** One agent running here. */
interface Running {
  order: WorkOrder;
  session?: AgentSession;
  /** What `agent/<session>` on the remote is at (the lease of the next push). */
  pushed?: string;
  done: Promise<void>;
}

/**
 * The URL this worker's agents call: the server's agents' listener when the server is on this
 * machine (a loopback `--server`) and has one, else `--server` itself (pure).
 */
export function agentServerUrl(server: string, agentPort: number | undefined): string {
  if (!agentPort) return server;
  const url = new URL(server);
  if (!isLoopbackHost(url.hostname.replace(/^\[|\]$/g, ""))) return server;
  return `http://127.0.0.1:${agentPort}`; // where the agents' listener is bound
}

/** Run the worker until `signal` aborts. */
export async function runWorker(o: WorkerOptions): Promise<void> {
  const root = resolve(o.dir);
  const { config } = await loadWorkspaceConfig(root);
  if (!config) {
    throw new WorkerSetupError(
      `no service.yaml in ${root}`,
      "--dir must be a clone of the repository whose service.yaml the orchestrator runs",
    );
  }
  const remote: RemoteOptions = { root, remote: o.remote };
  if (!await remoteUrl(remote)) {
    throw new WorkerSetupError(
      `the clone in ${root} has no remote ${o.remote}`,
      `git -C ${root} remote add ${o.remote} <url of the repository the orchestrator uses>`,
    );
  }
  await ensureServiceExcluded(root);
  const worker = new Worker(o, root, config, remote);
  await worker.run();
}

class Worker {
  readonly #o: WorkerOptions;
  /** The orchestrator stopped answering claims (said once until it answers again). */
  #away = false;
  readonly #root: string;
  readonly #paths: WorkspacePaths;
  readonly #config: ServiceConfig;
  readonly #remote: RemoteOptions;
  readonly #client: TaskClient;
  readonly #environments: WorktreeEnvironments;
  readonly #launches = new Map<string, Promise<RunLaunch>>();
  readonly #running = new Map<string, Running>();
  #intervalMs = 5000;
  /** Where its agents call the task API (the server's agents' listener when on this machine). */
  #agentServer: string;
  #wake: () => void = () => {};
  /** An operator drained it (`service workers drain`): no claim, exit once its agents are done. */
  #drained = false;

  constructor(o: WorkerOptions, root: string, config: ServiceConfig, remote: RemoteOptions) {
    this.#o = o;
    this.#root = root;
    this.#paths = workspacePaths(root);
    this.#config = config;
    this.#remote = remote;
    this.#client = new TaskClient({ url: o.server, token: o.token, timeoutMs: 30_000 });
    this.#agentServer = o.server;
    this.#environments = new WorktreeEnvironments({
      root,
      config: { worktree: config.worktree, roles: config.roles },
      portsDir: this.#paths.portLeases,
    });
  }

  #path(what: string): string {
    return `/workers/${encodeURIComponent(this.#o.name)}/${what}`;
  }

  async run(): Promise<void> {
    const o = this.#o;
    // Its token goes only to the orchestrator it means: the server proves that first.
    const problem = await this.#untilAnswered(async () =>
      (await serverProblem({ server: o.server, token: o.token, root: this.#root })) ?? ""
    );
    if (problem) {
      throw new WorkerSetupError(
        `worker ${o.name} will not join ${o.server}: ${problem}; its token was not sent`,
        "check --server (another team's orchestrator on the same host and port?) and that " +
          "SERVICE_TOKEN is a token that orchestrator's auth.tokens lists",
      );
    }
    if (problem === undefined) return; // stopped while it waited
    // What an earlier process of this worker left is ended, pushed and handed back.
    const left = await handBackLeftovers({
      paths: this.#paths,
      remote: this.#remote,
      name: o.name,
      graceMs: 5000,
      log: o.log,
    });
    // What it can start: tasks needing an adapter it cannot start never reach it.
    const adapters = await checkAdapters(this.#config, (name) => this.#launch(name));
    for (const a of adapters.filter((a) => !a.ready)) {
      o.log(
        `worker ${o.name}: cannot start ${a.name}: ${a.problem}; its tasks go to other workers`,
      );
    }
    const registered = await this.#untilAnswered(() =>
      this.#client.request<RegisterAnswer>("POST", this.#path("register"), {
        slots: o.slots,
        ...(o.roles ? { roles: o.roles } : {}),
        adapters,
        ...(left.length > 0 ? { left } : {}),
      })
    ).catch((e) => {
      if (e instanceof TaskApiError && (e.status === 401 || e.status === 403)) {
        throw new WorkerSetupError(
          `${o.server} refused this worker: ${e.message}`,
          "export SERVICE_TOKEN=<a token of scope worker from the orchestrator's auth.tokens>; " +
            "a name another token already uses needs its own --name",
        );
      }
      throw e;
    });
    if (!registered) return;
    this.#intervalMs = registered.heartbeat_interval_s * 1000;
    this.#agentServer = agentServerUrl(o.server, registered.agent_port);
    o.log(
      `worker ${o.name}: registered with ${o.server} (${o.slots} slot(s)` +
        `${o.roles ? `, roles ${o.roles.join(", ")}` : ""}); run ${
          registered.run_id ?? "none yet"
        }`,
    );
    if (registered.cordoned) {
      o.log(
        `worker ${o.name}: cordoned by the orchestrator: ${registered.cordoned}; it gets no task ` +
          `until \`service workers uncordon ${o.name}\``,
      );
    }
    if (registered.drain) this.#drain();
    const beat = setInterval(() => void this.#heartbeat(), this.#intervalMs);
    o.signal?.addEventListener("abort", () => this.#wake(), { once: true });
    try {
      while (!o.signal?.aborted) {
        if (this.#drained && this.#running.size === 0) break;
        const free = o.slots - this.#running.size;
        if (free > 0 && !this.#drained) await this.#claim(free);
        await new Promise<void>((r) => {
          const t = setTimeout(r, o.pollMs ?? 1000);
          this.#wake = () => {
            clearTimeout(t);
            r();
          };
        });
      }
      for (const r of this.#running.values()) void r.session?.terminate("stop");
      await Promise.all([...this.#running.values()].map((r) => r.done));
    } finally {
      clearInterval(beat);
    }
  }

  /** Drained by an operator: it claims nothing more and exits once its agents are done. */
  #drain(): void {
    if (this.#drained) return;
    this.#drained = true;
    this.#o.log(
      `worker ${this.#o.name}: drained by an operator; claiming nothing more, exiting once ` +
        `${this.#running.size} running agent(s) are done`,
    );
    this.#wake();
  }

  /** True when the orchestrator answers now (a heartbeat of no session renews nothing). */
  async #orchestratorAnswers(): Promise<boolean> {
    try {
      await this.#client.request("POST", this.#path("heartbeat"), { sessions: [] });
      return true;
    } catch (e) {
      return !(e instanceof TaskStoreUnavailable ||
        (e instanceof TaskApiError && (e.status === 502 || e.status === 503 || e.status === 504)));
    }
  }

  /** Call `ask` until the server answers (it may be restarting); undefined once aborted. */
  async #untilAnswered<T>(ask: () => Promise<T | undefined>): Promise<T | undefined> {
    let told = false;
    while (!this.#o.signal?.aborted) {
      try {
        return await ask();
      } catch (e) {
        const retry = e instanceof TaskStoreUnavailable ||
          (e instanceof TaskApiError && (e.status === 503 || e.status === 502 || e.status === 504));
        if (!retry) throw e;
        if (!told) this.#o.log(`worker ${this.#o.name}: ${(e as Error).message}; trying again`);
        told = true;
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
    return undefined;
  }

  async #claim(free: number): Promise<void> {
    let answer: { orders: WorkOrder[]; drain?: boolean } | undefined;
    try {
      answer = await this.#client.request<{ orders: WorkOrder[]; drain?: boolean }>(
        "POST",
        this.#path("claim"),
        {
          free,
          ...(this.#o.roles ? { roles: this.#o.roles } : {}),
        },
      );
    } catch (e) {
      if (!(e instanceof TaskStoreUnavailable)) throw e;
      // The run ended or its orchestrator restarts: say so once, and ask again later.
      if (!this.#away) {
        this.#o.log(
          `worker ${this.#o.name}: ${this.#o.server} does not answer (${
            (e as Error).message
          }); asking again every ${(this.#o.pollMs ?? 1000) / 1000} s`,
        );
      }
      this.#away = true;
      return;
    }
    if (this.#away) this.#o.log(`worker ${this.#o.name}: ${this.#o.server} answers again`);
    this.#away = false;
    if (answer?.drain) return this.#drain();
    for (const order of answer?.orders ?? []) {
      const running: Running = { order, done: Promise.resolve() };
      this.#running.set(order.session_id, running);
      running.done = this.#work(running).catch((e) =>
        this.#o.log(`${order.task.id}: worker failed: ${(e as Error).message}`)
      ).finally(() => {
        this.#running.delete(order.session_id);
        this.#wake();
      });
    }
  }

  /**
   * How `adapterName`'s agents start here, decided once as `service run` decides it
   * (lib/orchestrator/run_isolation.ts): host processes, or containers under `isolation:
   * container` (the probe passes or the agent does not start, never a fallback to the host).
   */
  #launch(adapterName: string): Promise<RunLaunch> {
    let launch = this.#launches.get(adapterName);
    if (!launch) {
      launch = runLaunch(this.#config, namedAdapter(this.#config, adapterName), {
        root: this.#root,
        runtimeDir: this.#paths.runtime,
        env: Deno.env.toObject(),
        out: (line) => this.#o.log(line),
      });
      launch.catch(() => this.#launches.delete(adapterName));
      this.#launches.set(adapterName, launch);
    }
    return launch;
  }

  /** One order: fetch, start, wait, push, report, clean up. */
  async #work(r: Running): Promise<void> {
    const { order } = r;
    const o = this.#o;
    const task = order.task;
    const started = Date.now();
    o.log(
      `${task.id}: agent ${order.session_id} starting (attempt ${order.attempt}, ${order.adapter})`,
    );
    let exitCode = -1;
    /** Why the agent did not start, when that is this machine's fault (not the task's). */
    let startFailure: string | undefined;
    /** No orchestrator answered when the agent ended on its own (the run was stopped). */
    let away = false;
    try {
      await fetchBase(this.#remote, order.base_ref);
      if (!await resolveCommit(order.base, { cwd: this.#root })) {
        throw new Error(
          `the base ${order.base.slice(0, 12)} is not on ${o.remote} (${order.base_ref})`,
        );
      }
      if (order.start) {
        const tip = await fetchBranch(this.#remote, `agent/${order.session_id}`);
        if (tip !== order.start) {
          throw new Error(`agent/${order.session_id} is not at ${order.start}`);
        }
        r.pushed = order.start;
      }
      const adapter = namedAdapter(this.#config, order.adapter);
      const { launch, isolation } = await this.#launch(order.adapter).catch((e) => {
        startFailure = (e as Error).message;
        throw e;
      });
      const role = this.#config.roles[task.role] ?? {};
      r.session = await AgentSession.start({
        paths: this.#paths,
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
          workdir: worktreePath(this.#root, order.session_id),
        }),
        // Its own credential, never this worker's token (docs/security.md "Agents").
        serverUrl: this.#agentServer,
        ...(order.agent_token ? { token: order.agent_token } : {}),
        timeoutS: order.timeout_s,
        graceMs: order.grace_ms,
        agentEnv: [...this.#config.agent_env, ...(role.agent_env ?? [])],
        environments: this.#environments,
        ...(isolation ? { isolation } : {}),
      });
      const status = await r.session.proc.status;
      exitCode = agentExitCode({
        code: status.code,
        signal: status.signal ?? null,
        timedOut: r.session.endedBy === "timeout",
      });
      // Ended on its own with an error while no run answered: its report may have met a stop.
      if (!r.session.endedBy && exitCode !== 0) away = !(await this.#orchestratorAnswers());
    } catch (e) {
      const err = e instanceof SessionStartError ? e.cause as Error : e as Error;
      // Its launch on this machine failed (CLI, key, image, spawn): not the task's doing. A
      // worktree setup that failed is the task's attempt, as on the orchestrator.
      if (e instanceof SessionStartError && !(err instanceof WorktreeSetupError)) {
        startFailure ??= err.message;
      }
      o.log(`${task.id}: agent ${order.session_id} did not start: ${err.message}`);
      await this.#writeLog(
        order,
        `service worker ${o.name}: the agent did not start: ${err.message}\n`,
      );
    }
    const delivered = await this.#deliver(r);
    if (away) {
      o.log(
        `${task.id}: agent ${order.session_id} ended while no orchestrator answered (a stop): ` +
          "its pushed work is kept for the next run, no attempt counted",
      );
    }
    await this.#report({
      task_id: task.id,
      session_id: order.session_id,
      exit_code: exitCode,
      duration_ms: Date.now() - started,
      ...(r.session?.endedBy ? { ended_by: r.session.endedBy } : {}),
      commit: delivered.commit,
      ...(delivered.error ? { push_error: delivered.error } : {}),
      ...await this.#log(order),
      ...(startFailure !== undefined ? { start_failure: startFailure.slice(0, 4000) } : {}),
      ...(away ? { orchestrator_away: true } : {}),
    });
    await this.#cleanUp(r);
  }

  /** Commit what the agent left and push `agent/<session>`; the commit, or why not. */
  async #deliver(r: Running): Promise<{ commit: string | null; error?: string }> {
    const path = worktreePath(this.#root, r.order.session_id);
    let tip: string;
    try {
      tip =
        (await commitPartialWork(path, `service: work of ${r.order.task.id} on ${this.#o.name}`))
          .tip;
    } catch {
      return { commit: null }; // no worktree: the agent never started
    }
    if (tip === r.order.base) return { commit: null };
    return await this.#push(r, tip);
  }

  /** Push `tip` to `agent/<session>` with the lease of the last push (three tries when offline). */
  async #push(r: Running, tip: string): Promise<{ commit: string | null; error?: string }> {
    if (r.pushed === tip) return { commit: tip };
    const branch = `agent/${r.order.session_id}`;
    for (let attempt = 1;; attempt++) {
      try {
        const out = await pushBranch(this.#remote, branch, tip, r.pushed);
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

  async #writeLog(order: WorkOrder, text: string): Promise<void> {
    await Deno.mkdir(this.#paths.runtime, { recursive: true });
    await Deno.writeTextFile(`${this.#paths.runtime}/${order.session_id}.log`, text, {
      append: true,
    });
  }

  /** The session log for the report (its tail when longer than the report carries). */
  async #log(order: WorkOrder): Promise<Pick<ReportBody, "log" | "log_truncated">> {
    let bytes: Uint8Array;
    try {
      bytes = await Deno.readFile(`${this.#paths.runtime}/${order.session_id}.log`);
    } catch {
      return { log: "", log_truncated: false };
    }
    const truncated = bytes.length > MAX_REPORT_LOG_BYTES;
    const tail = truncated ? bytes.subarray(bytes.length - MAX_REPORT_LOG_BYTES) : bytes;
    return { log: new TextDecoder().decode(tail), log_truncated: truncated };
  }

  /** Report until the orchestrator answers: accepted, or 409 (the lease is gone). */
  async #report(body: ReportBody): Promise<void> {
    const o = this.#o;
    const id = body.task_id;
    try {
      // A worker that is stopping still reports: its agent's work is what the run waits for.
      let told = false;
      for (;;) {
        try {
          await this.#client.request("POST", this.#path("report"), body);
          o.log(
            `${id}: agent ${body.session_id} exited ${body.exit_code}; reported ` +
              (body.commit ? `commit ${body.commit.slice(0, 12)}` : "no commit") +
              (body.push_error ? ` (push failed: ${body.push_error})` : ""),
          );
          return;
        } catch (e) {
          const again = e instanceof TaskStoreUnavailable ||
            (e instanceof TaskApiError && e.status >= 500);
          if (!again) throw e;
          if (!told) o.log(`${id}: report not taken yet (${(e as Error).message}); trying again`);
          told = true;
          await new Promise((res) => setTimeout(res, 1000));
        }
      }
    } catch (e) {
      if (e instanceof TaskApiError && e.status === 409) {
        o.log(`${id}: report refused: ${e.message}`);
        return;
      }
      throw e;
    }
  }

  /** Every interval: push new commits, renew the leases, end the agents the run wants ended. */
  async #heartbeat(): Promise<void> {
    // Every session until it is reported: one whose agent ended is still pushing its work.
    const live = [...this.#running.values()];
    if (live.length === 0) return;
    for (const r of live) {
      if (!r.session?.proc.alive) continue;
      await r.session.writeHeartbeat().catch(() => {});
      const head = await this.#headWhileRunning(r.session.worktree.path);
      if (head && head !== r.order.base && head !== r.pushed) await this.#push(r, head);
    }
    let answer: HeartbeatAnswer | undefined;
    try {
      answer = await this.#client.request<HeartbeatAnswer>(
        "POST",
        this.#path("heartbeat"),
        {
          sessions: live.map((r) => ({
            task_id: r.order.task.id,
            session_id: r.order.session_id,
            ...(r.pushed ? { pushed: r.pushed } : {}),
          })),
        },
      );
    } catch (e) {
      // Unreachable: the agents go on; the lease runs out only on the orchestrator's clock.
      this.#o.log(`worker ${this.#o.name}: heartbeat not delivered: ${(e as Error).message}`);
      return;
    }
    if (answer?.drain) this.#drain();
    for (const v of answer?.sessions ?? []) {
      if (v.keep) continue;
      const r = this.#running.get(v.session_id);
      if (!r?.session || r.session.endedBy) continue;
      const reason = (END_REASONS as string[]).includes(v.reason ?? "")
        ? v.reason as EndReason
        : "cancelled";
      this.#o.log(`${v.task_id}: ending agent ${v.session_id}: ${v.reason ?? reason}`);
      void r.session.terminate(reason);
    }
  }

  /**
   * The commit a running agent's worktree has checked out, read with the hardened git of agent
   * trees and only while its git files are as the service made them (they are not rewritten
   * under a running agent); undefined otherwise.
   */
  async #headWhileRunning(worktree: string): Promise<string | undefined> {
    try {
      const tree = await openWorktree(worktree, { repair: false });
      const r = await tree.git(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], {
        allowFailure: true,
      });
      return r.code === 0 ? r.stdout.trim() : undefined;
    } catch {
      return undefined; // handed to a container's user, or not as the service made it
    }
  }

  /** Remove the session's worktree and branch here (the remote keeps the work). */
  async #cleanUp(r: Running): Promise<void> {
    const id = r.order.session_id;
    const path = worktreePath(this.#root, id);
    try {
      await r.session?.cleanup();
      const role = r.order.task.role;
      if (r.session && this.#environments.spec(role).teardown.length > 0) {
        await this.#environments.teardown({
          tree: path,
          role,
          env: r.session.env,
          logPath: r.session.logPath,
        });
      }
    } catch (e) {
      this.#o.log(`${r.order.task.id}: teardown failed: ${(e as Error).message}`);
    }
    await gitWorktree(this.#root, ["remove", "--force", path], { allowFailure: true });
    await dropTreeRecord(this.#root, id);
    await git(["branch", "-D", `agent/${id}`], { cwd: this.#root, allowFailure: true });
    await this.#environments.releasePorts(id).catch(() => {});
  }
}
