/**
 * `service worker` (DESIGN.md §16, §17): runs the orchestrator's agents on another machine. It
 * registers with its slots and roles, asks for tasks while a slot is free, runs each order
 * (lib/remote_worker/order.ts) and renews each session's lease by heartbeat — with the session's
 * own capability, which its claim carried — while pushing what the agent commits. It never holds
 * the orchestrator's provider keys: the agent runs with this machine's environment.
 *
 * For a cluster: `--once` claims one task (or ends at once when none is ready), runs it, reports
 * and ends; `--exit-when-idle S` ends after S seconds with nothing to run; `--clone URL` prepares
 * its checkout from an empty directory. A stop (SIGTERM: a pod deleted, a node drained) drains:
 * no claim is sent after it, running agents get `--drain-timeout` to finish, then they are ended,
 * what they made is pushed and reported `ended_by: "drain"` (the orchestrator requeues the task at
 * once, counting no attempt, and the next attempt continues from the pushed work). A worker that
 * ends says so (`leave`), so it is no longer counted among the connected workers.
 *
 * Before its token leaves the machine it checks that the server is the orchestrator it means
 * (GET /workers/hello); it ends, pushes and hands back what an earlier process of its name left;
 * its registration says which adapters it can start. An operator's drain (`service workers
 * drain`, told in a claim's or heartbeat's answer) stops its claims and ends it once its agents
 * are done, without ending them.
 */
import { resolve } from "node:path";
import { openWorktree } from "../worktrees/trees.ts";
import { dirtyHistory } from "../worktrees/worktrees.ts";
import { loadWorkspaceConfig, namedAdapter } from "../config/load.ts";
import type { ServiceConfig } from "../config/schema.ts";
import { type RunLaunch, runLaunch } from "../agent_session/run_isolation.ts";
import { teardownsDone } from "../container/reap.ts";
import type { EndReason } from "../agents/end_reason.ts";
import { WorktreeEnvironments } from "../worktree_env/environments.ts";
import { workspacePaths } from "../workspace.ts";
import { ensureServiceExcluded } from "../worktrees/exclude.ts";
import { type RemoteOptions, remoteUrl } from "../git/remote.ts";
import { HttpApiError } from "../http/api_error.ts";
import { TaskClient, TaskStoreUnavailable } from "../tasks/client.ts";
import { isLoopbackHost } from "../util/loopback.ts";
import type { HeartbeatAnswer, RegisterAnswer, WorkOrder } from "../workers/protocol.ts";
import { prepareClone } from "./clone.ts";
import { WorkerStatus } from "./health.ts";
import {
  DRAIN_KILL_GRACE_MS,
  type OrderContext,
  pushTip,
  type Running,
  runOrder,
  sessionPath,
} from "./order.ts";
import { WorkerSetupError } from "./setup_error.ts";
import { serverProblem } from "./server_check.ts";
import { handBackLeftovers } from "./leftovers.ts";
import { checkAdapters } from "./readiness.ts";

export { WorkerSetupError };

/** Default `--drain-timeout`: a little under a pod's default grace (30 s). */
export const DEFAULT_DRAIN_TIMEOUT_S = 25;

/** How long `--once` waits for an orchestrator that does not answer before it gives up. */
export const ONCE_PATIENCE_MS = 60_000;

/** Options of {@link runWorker}. */
export interface WorkerOptions {
  /** The orchestrator's URL (`server.public_url` behind a reverse proxy). */
  server: string;
  /**
   * A `worker`-scope token (SERVICE_TOKEN), or a function asked at every request
   * (SERVICE_TOKEN_FILE, re-read when the mounted Secret changes). It registers and claims only.
   */
  token?: string | (() => string | undefined);
  /** This worker's name (journaled with each task it runs). */
  name: string;
  slots: number;
  /** Roles it takes (any when absent). */
  roles?: string[];
  /** The git remote of its clone that the orchestrator fetches from. */
  remote: string;
  /** Its clone of the repository (with service.yaml). */
  dir: string;
  /** Make `dir` a partial clone of this URL first (an empty directory, a pod's emptyDir). */
  clone?: string;
  /** How often it asks for tasks while a slot is free (default 1000 ms). */
  pollMs?: number;
  /** Claim one task (none ready: end at once), run it, report it, end. */
  once?: boolean;
  /**
   * A one-time claim ticket (the Kubernetes launcher's `--ticket`): the claim names it. With
   * `once` only.
   */
  ticket?: string;
  /** End after this many seconds with nothing running and nothing claimed. */
  exitWhenIdleS?: number;
  /** Seconds running agents get to finish once a drain begins (default 25). */
  drainTimeoutS?: number;
  log: (line: string) => void;
  /** Aborted: drain (no new claim; agents get the drain timeout; then end, push, report). */
  signal?: AbortSignal;
  /** Aborted: end the agents now (a second signal during a drain). */
  hardStop?: AbortSignal;
  /** What `--health-port` reads. */
  status?: WorkerStatus;
}

/**
 * The URL this worker's agents call: the server's agents' listener when the server is on this
 * machine (a loopback `--server`) and has one, else `--server` itself (pure).
 */
function agentServerUrl(server: string, agentPort: number | undefined): string {
  if (!agentPort) return server;
  const url = new URL(server);
  if (!isLoopbackHost(url.hostname.replace(/^\[|\]$/g, ""))) return server;
  return `http://127.0.0.1:${agentPort}`; // where the agents' listener is bound
}

/** Run the worker until it drains (`signal`), it is idle for long, or its `once` task is done. */
export async function runWorker(o: WorkerOptions): Promise<void> {
  const root = resolve(o.dir);
  if (o.clone) await prepareClone({ url: o.clone, dir: root, remote: o.remote, log: o.log });
  const { config } = await loadWorkspaceConfig(root);
  if (!config) {
    throw new WorkerSetupError(
      `no service.yaml in ${root}`,
      "--dir must be a clone of the repository whose service.yaml the orchestrator runs " +
        "(or give --clone URL with an empty --dir)",
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
  await new Worker(o, root, config, remote).run();
}

class Worker {
  readonly #o: WorkerOptions;
  readonly #client: TaskClient;
  readonly #orders: OrderContext;
  readonly #status: WorkerStatus;
  readonly #launches = new Map<string, Promise<RunLaunch>>();
  readonly #running = new Map<string, Running>();
  /** Why claims get nothing now: no answer (or refused), or a server that takes no workers. */
  #away: "silent" | "foreign" | undefined;
  #agentServer: string;
  #draining = false;
  /** The drain's time is up (or a second signal came): agents are being ended. */
  #ending = false;
  #idleSince = Date.now();
  #wake: () => void = () => {};
  /** The claim ticket, until its claim was answered. */
  #ticket: string | undefined;
  /** An operator drained it (`service workers drain`): no claim, end once its agents are done. */
  #drained = false;

  constructor(o: WorkerOptions, root: string, config: ServiceConfig, remote: RemoteOptions) {
    this.#o = o;
    this.#status = o.status ?? new WorkerStatus();
    this.#client = new TaskClient({ url: o.server, token: o.token, timeoutMs: 30_000 });
    this.#agentServer = o.server;
    const paths = workspacePaths(root);
    this.#orders = {
      name: o.name,
      remoteName: o.remote,
      root,
      paths,
      config,
      remote,
      client: this.#client,
      environments: new WorktreeEnvironments({
        root,
        config: { worktree: config.worktree, roles: config.roles },
        portsDir: paths.portLeases,
      }),
      launch: (adapter) => this.#launch(adapter),
      agentServer: () => this.#agentServer,
      draining: () => this.#draining,
      ending: () => this.#ending,
      stopped: () => this.#o.hardStop?.aborted ?? false,
      log: o.log,
    };
  }

  #path(what: string): string {
    return `/workers/${encodeURIComponent(this.#o.name)}/${what}`;
  }

  async run(): Promise<void> {
    const o = this.#o;
    o.signal?.addEventListener("abort", () => this.#drain(), { once: true });
    o.hardStop?.addEventListener("abort", () => this.#endAgents("now"), { once: true });
    if (o.signal?.aborted) this.#drain(); // stopped while it cloned: it claims nothing
    const registered = await this.#register();
    if (!registered) return;
    if (registered.cordoned) {
      o.log(
        `worker ${o.name}: cordoned by the orchestrator: ${registered.cordoned}; it gets no task ` +
          `until \`service workers uncordon ${o.name}\``,
      );
    }
    if (registered.drain) this.#drainedBy();
    this.#agentServer = agentServerUrl(o.server, registered.agent_port);
    this.#status.registered = true;
    this.#idleSince = Date.now(); // idle from now: a slow start is not idleness
    o.log(
      `worker ${o.name}: registered with ${o.server} (${o.slots} slot(s)` +
        `${o.roles ? `, roles ${o.roles.join(", ")}` : ""}); run ${
          registered.run_id ?? "none yet"
        }`,
    );
    const beat = setInterval(() => void this.#heartbeat(), registered.heartbeat_interval_s * 1000);
    try {
      if (o.once) await this.#claimOne(o.ticket);
      else await this.#serve();
      // Whatever runs finishes (or is drained) and is reported before the worker ends.
      while (this.#running.size > 0) {
        this.#status.alive();
        await Promise.all([...this.#running.values()].map((r) => r.done));
      }
    } finally {
      clearInterval(beat);
      await this.#leave();
      await teardownsDone(); // no container of its agents is listed after it
    }
  }

  /**
   * Register until the orchestrator answers (it may be restarting); undefined once draining.
   * First the server proves it is the orchestrator this worker means (its token is sent to no
   * other), what an earlier process left is handed back, and the adapters are checked.
   */
  async #register(): Promise<RegisterAnswer | undefined> {
    const o = this.#o;
    const token = typeof o.token === "function" ? o.token() : o.token;
    const problem = await this.#untilAnswered(async () =>
      (await serverProblem({ server: o.server, token, root: this.#orders.root })) ?? ""
    );
    if (problem) {
      throw new WorkerSetupError(
        `worker ${o.name} will not join ${o.server}: ${problem}; its token was not sent`,
        "check --server (another team's orchestrator on the same host and port?) and that " +
          "SERVICE_TOKEN is a token that orchestrator's auth.tokens lists",
      );
    }
    if (problem === undefined) return undefined; // stopped while it waited
    // What an earlier process of this worker left is ended, pushed and handed back.
    const left = await handBackLeftovers({
      paths: this.#orders.paths,
      remote: this.#orders.remote,
      name: o.name,
      graceMs: 5000,
      log: o.log,
    });
    // What it can start: tasks needing an adapter it cannot start never reach it.
    const adapters = await checkAdapters(this.#orders.config, (name) => this.#launch(name));
    for (const a of adapters.filter((a) => !a.ready)) {
      o.log(
        `worker ${o.name}: cannot start ${a.name}: ${a.problem}; its tasks go to other workers`,
      );
    }
    try {
      return await this.#untilAnswered(() =>
        this.#client.request<RegisterAnswer>("POST", this.#path("register"), {
          slots: o.slots,
          ...(o.roles ? { roles: o.roles } : {}),
          adapters,
          ...(left.length > 0 ? { left } : {}),
        })
      );
    } catch (e) {
      if (e instanceof HttpApiError && (e.status === 401 || e.status === 403)) {
        throw new WorkerSetupError(
          `${o.server} refused this worker: ${e.message}`,
          takesNoWorkers(e)
            ? "on the orchestrator, add a token of scope worker to auth.tokens in service.yaml; " +
              "here, set SERVICE_TOKEN (or SERVICE_TOKEN_FILE) to that token"
            : "set SERVICE_TOKEN (or SERVICE_TOKEN_FILE) to a token of scope worker from the " +
              "orchestrator's auth.tokens; a name another token already uses needs its own --name",
        );
      }
      throw e;
    }
  }

  /**
   * Call `ask` until the server answers; undefined once draining. With `--once` it gives up
   * after {@link ONCE_PATIENCE_MS}: a pod that cannot reach its orchestrator fails, visibly.
   */
  async #untilAnswered<T>(ask: () => Promise<T | undefined>): Promise<T | undefined> {
    let told = false;
    const since = Date.now();
    while (!this.#draining) {
      try {
        return await ask();
      } catch (e) {
        // Another live process under this --name: it is said, and asked again until that one
        // stops heartbeating (then this one takes the name, as a restart would).
        const retry = e instanceof TaskStoreUnavailable ||
          (e instanceof HttpApiError &&
            (e.status === 503 || e.status === 502 || e.status === 504 ||
              (e.status === 409 && e.code === "worker_name_in_use")));
        if (!retry) throw e;
        if (this.#o.once && Date.now() - since > ONCE_PATIENCE_MS) {
          throw new WorkerSetupError(
            `${this.#o.server} did not answer for ${ONCE_PATIENCE_MS / 1000} s: ` +
              (e as Error).message,
            "check --server and that `service run` serves there",
          );
        }
        if (!told) this.#o.log(`worker ${this.#o.name}: ${(e as Error).message}; trying again`);
        told = true;
        await this.#sleep(1000);
      }
    }
    return undefined;
  }

  /** Claim while a slot is free, until the worker drains or has been idle for long enough. */
  async #serve(): Promise<void> {
    const o = this.#o;
    while (!this.#draining) {
      this.#status.alive();
      if (this.#drained) {
        // An operator's drain: its agents finish (run() waits for them); nothing more is claimed.
        if (this.#running.size === 0) return;
        await this.#sleep(o.pollMs ?? 1000);
        continue;
      }
      const idleS = (Date.now() - this.#idleSince) / 1000;
      if (
        o.exitWhenIdleS !== undefined && this.#running.size === 0 && idleS >= o.exitWhenIdleS
      ) {
        o.log(
          `worker ${o.name}: nothing to run for ${o.exitWhenIdleS} s (--exit-when-idle): ending`,
        );
        return;
      }
      const free = o.slots - this.#running.size;
      if (free > 0) await this.#claim(free);
      await this.#sleep(o.pollMs ?? 1000);
    }
  }

  /** `--once`: one claim of one task (none ready: say so and end). */
  async #claimOne(ticket?: string): Promise<void> {
    if (this.#drained) return; // drained by an operator before it claimed
    const answer = await this.#untilAnswered(() => this.#ask(1, ticket)).catch((e) => {
      if (!ticket || !(e instanceof HttpApiError) || e.status >= 500) throw e;
      throw new WorkerSetupError(
        `${this.#o.server} refused this worker's claim ticket: ${e.message}`,
        "a ticket claims one task once, for the Job it was minted for; the orchestrator " +
          "creates a new Job with a new ticket",
      );
    });
    if (answer === undefined) return; // drained before anything was claimed
    if (answer.drain) return this.#drainedBy();
    if (answer.orders.length === 0) {
      this.#o.log(`worker ${this.#o.name}: nothing to claim (--once): ending`);
    }
    this.#start(answer.orders);
  }

  /**
   * Ask for up to `free` tasks (the claim names `ticket` when there is one); `drain` when an
   * operator drains this worker.
   */
  async #ask(free: number, ticket?: string): Promise<{ orders: WorkOrder[]; drain?: boolean }> {
    const answer = await this.#client.request<{ orders: WorkOrder[]; drain?: boolean }>(
      "POST",
      this.#path("claim"),
      {
        free,
        ...(this.#o.roles ? { roles: this.#o.roles } : {}),
        ...(ticket ? { ticket } : {}),
      },
    );
    return { orders: answer?.orders ?? [], ...(answer?.drain ? { drain: true } : {}) };
  }

  async #claim(free: number): Promise<void> {
    let answer: { orders: WorkOrder[]; drain?: boolean };
    try {
      answer = await this.#ask(free);
    } catch (e) {
      // A refused token (a Secret rotated on one side first) or a proxy's 5xx passes: ask again.
      const passing = e instanceof TaskStoreUnavailable ||
        (e instanceof HttpApiError && (e.status === 401 || e.status === 403 || e.status >= 500));
      if (!passing) throw e;
      // The run ended or its orchestrator restarts: say so once, and ask again later.
      // Another workspace's server that takes no workers is said apart from silence, once each.
      const away = takesNoWorkers(e) ? "foreign" : "silent";
      if (this.#away !== away) {
        this.#o.log(
          `worker ${this.#o.name}: ${this.#o.server} ${
            takesNoWorkers(e)
              ? "takes no remote workers"
              : e instanceof HttpApiError
              ? "refuses the claim"
              : "does not answer"
          } (${(e as Error).message}); asking again every ${(this.#o.pollMs ?? 1000) / 1000} s`,
        );
      }
      this.#away = away;
      return;
    }
    if (this.#away) this.#o.log(`worker ${this.#o.name}: ${this.#o.server} answers again`);
    this.#away = undefined;
    if (answer.drain) return this.#drainedBy();
    this.#start(answer.orders);
  }

  /** Run `orders` (a drain that began while they were on their way hands them back). */
  #start(orders: WorkOrder[]): void {
    for (const order of orders) {
      const running: Running = { order, done: Promise.resolve() };
      this.#running.set(order.session_id, running);
      running.done = runOrder(this.#orders, running).catch((e) =>
        this.#o.log(`${order.task.id}: worker failed: ${(e as Error).message}`)
      ).finally(() => {
        this.#running.delete(order.session_id);
        if (this.#running.size === 0) this.#idleSince = Date.now();
        this.#wake();
      });
    }
  }

  /** Drained by an operator: it claims nothing more and ends once its agents are done. */
  #drainedBy(): void {
    if (this.#drained) return;
    this.#drained = true;
    this.#o.log(
      `worker ${this.#o.name}: drained by an operator; claiming nothing more, exiting once ` +
        `${this.#running.size} running agent(s) are done`,
    );
    this.#wake();
  }

  /** The first stop: claim nothing more; agents get the drain timeout, then end. */
  #drain(): void {
    if (this.#draining) return;
    this.#draining = true;
    this.#status.draining = true;
    this.#wake();
    const timeoutS = this.#o.drainTimeoutS ?? DEFAULT_DRAIN_TIMEOUT_S;
    const live = [...this.#running.values()].filter((r) => r.session?.proc.alive).length;
    this.#o.log(
      `worker ${this.#o.name}: draining: no new claims` +
        (live > 0 ? `; ${live} agent(s) get ${timeoutS} s to finish, then end and are pushed` : ""),
    );
    if (this.#running.size === 0) return;
    const t = setTimeout(() => this.#endAgents(`after ${timeoutS} s`), timeoutS * 1000);
    Deno.unrefTimer(t);
    void this.#heartbeat(); // the orchestrator hears at once that this worker drains
  }

  /** End every running agent as drained (the drain's time is up, or a second signal). */
  #endAgents(when: string): void {
    if (this.#ending) return;
    this.#draining = this.#status.draining = true;
    this.#ending = true;
    for (const r of this.#running.values()) {
      if (!r.session?.proc.alive || r.session.endedBy) continue;
      this.#o.log(`${r.order.task.id}: ending agent ${r.order.session_id} (drain, ${when})`);
      void r.session.terminate("drain", DRAIN_KILL_GRACE_MS);
    }
  }

  /**
   * Every interval, for each session on its own: renew its lease (a request in flight is not
   * doubled), then push what its agent committed since (a slow push delays no heartbeat).
   */
  #heartbeat(): void {
    this.#status.alive();
    // Every session until it is reported: one whose agent ended is still pushing its work.
    for (const r of this.#running.values()) {
      void this.#beat(r).then(() => this.#pushProgress(r));
    }
  }

  async #beat(r: Running): Promise<void> {
    const o = this.#o;
    if (r.reported || r.beating) return; // reported: its capability ended with its report
    r.beating = true;
    let v: HeartbeatAnswer | undefined;
    try {
      v = await this.#client.request<HeartbeatAnswer>(
        "POST",
        sessionPath(o.name, r.order.session_id, "heartbeat"),
        {
          task_id: r.order.task.id,
          ...(r.pushed ? { pushed: r.pushed } : {}),
          ...(this.#draining ? { draining: true } : {}),
        },
        { token: r.order.session_token },
      );
    } catch (e) {
      if (r.reported) return; // reported meanwhile: its capability ended with it
      // Unreachable: the agent goes on; the lease runs out only on the orchestrator's clock.
      // Said once per outage, not at every interval.
      if (!r.undelivered) {
        o.log(
          `worker ${o.name}: heartbeat of ${r.order.session_id} not delivered: ${
            (e as Error).message
          }; its agent goes on, trying again`,
        );
      }
      r.undelivered = true;
      return;
    } finally {
      r.beating = false;
    }
    if (r.undelivered) {
      o.log(
        `worker ${o.name}: heartbeat of ${r.order.session_id} delivered again` +
          (v?.keep === false ? "" : ": its lease holds"),
      );
      r.undelivered = false;
    }
    if (v?.drain) this.#drainedBy();
    if (!v || v.keep || !r.session || r.session.endedBy) return;
    const reason: EndReason = (END_REASONS as string[]).includes(v.reason ?? "")
      ? v.reason as EndReason
      : "cancelled";
    o.log(`${v.task_id}: ending agent ${v.session_id}: ${v.reason ?? reason}`);
    void r.session.terminate(reason);
  }

  /** Push what a live agent committed since the last push (one push of a session at a time). */
  #pushProgress(r: Running): void {
    const session = r.session;
    if (r.progress || !session?.proc.alive) return;
    r.progress = (async () => {
      await session.writeHeartbeat().catch(() => {});
      const head = await headWhileRunning(session.worktree.path, r.order.base);
      if (head && head !== r.order.base && head !== r.pushed) await pushTip(this.#orders, r, head);
    })().catch(() => {}).finally(() => r.progress = undefined);
  }

  /** Tell the orchestrator this worker ends (best effort: it is forgotten after a lease anyway). */
  async #leave(): Promise<void> {
    const client = new TaskClient({ url: this.#o.server, token: this.#o.token, timeoutMs: 3000 });
    await client.request("POST", this.#path("leave"), {}).catch(() => {});
  }

  /**
   * How `adapterName`'s agents start here, decided once as `service run` decides it
   * (lib/agent_session/run_isolation.ts): host processes, or containers under `isolation:
   * container` (the probe passes or the agent does not start, never a fallback to the host).
   */
  #launch(adapterName: string): Promise<RunLaunch> {
    let launch = this.#launches.get(adapterName);
    if (!launch) {
      const config = this.#orders.config;
      launch = runLaunch(config, namedAdapter(config, adapterName), {
        root: this.#orders.root,
        runtimeDir: this.#orders.paths.runtime,
        env: Deno.env.toObject(),
        out: (line) => this.#o.log(line),
      });
      launch.catch(() => this.#launches.delete(adapterName));
      this.#launches.set(adapterName, launch);
    }
    return launch;
  }

  /** Wait `ms`, or less when woken (an order ended, a drain began). */
  #sleep(ms: number): Promise<void> {
    return new Promise<void>((r) => {
      const t = setTimeout(r, ms);
      this.#wake = () => {
        clearTimeout(t);
        r();
      };
    });
  }
}

/**
 * The commit a running agent's worktree has checked out, read with the hardened git of agent
 * trees and only while its git files are as the service made them (they are not rewritten under
 * a running agent); undefined otherwise, and while its commits since `base` hold an ignored or
 * copied file (lib/worktrees/keep_out.ts: they are pushed only once rewritten, when the agent
 * has ended).
 */
async function headWhileRunning(worktree: string, base: string): Promise<string | undefined> {
  try {
    const tree = await openWorktree(worktree, { repair: false });
    const r = await tree.git(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], {
      allowFailure: true,
    });
    if (r.code !== 0) return undefined;
    if ((await dirtyHistory(tree, base)).length > 0) return undefined;
    return r.stdout.trim();
  } catch {
    return undefined; // handed to a container's user, or not as the service made it
  }
}

/**
 * True when the server that answered takes no remote workers (lib/workers/admission.ts): at a
 * loopback address this is usually another workspace's run, so the worker waits for its own.
 */
function takesNoWorkers(e: unknown): boolean {
  return e instanceof HttpApiError && e.status === 403 && e.code === "workers_not_configured";
}

const END_REASONS: readonly EndReason[] = [
  "timeout",
  "stop",
  "rate_limit",
  "reported",
  "cancelled",
];
