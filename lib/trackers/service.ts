/**
 * The tracker subsystem of one server (one per AppContext): the replay ledger, the webhook
 * receiver, the ticket sink over the task store, the runtime facts and the pollers. Opened when
 * the server starts (`startTrackerService`) and closed when it stops.
 */
import { loadConfig } from "../config/load.ts";
import type { ServiceConfig } from "../config/schema.ts";
import type { AppContext } from "../http/context.ts";
import { taskStoreFor } from "../tasks/registry.ts";
import type { Task } from "../tasks/task.ts";
import { ReplayLedger } from "../webhooks/ledger.ts";
import { WebhookReceiver } from "../webhooks/receiver.ts";
import { HOST_EVENT_ACTIVITY } from "../webhooks/handler.ts";
import { publishActivity } from "../events/hub.ts";
import { loadHandlerModule } from "../webhooks/registry.ts";
import { BUILTIN_TRACKERS } from "./builtin.ts";
import { readRunState } from "../runs/run_state.ts";
import { TrackerPoller } from "./poller.ts";
import { startWriteBack } from "./write_back.ts";
import { hostEventOutside, outsideProject } from "./scope.ts";
import { createTicketSink } from "./sink.ts";
import { TrackerRuntimeStore } from "./state.ts";
import {
  apiAccess,
  apiProblem,
  replaysAtStartup,
  type TrackerSettings,
  trackerSettings,
} from "./settings.ts";
import {
  outcomeSummary,
  type Ticket,
  type TicketOutcome,
  ticketProblem,
  type TicketSink,
} from "./ticket.ts";

/** A server's tracker subsystem. */
export interface TrackerService {
  receiver: WebhookReceiver<Ticket, TicketOutcome>;
  ledger: ReplayLedger;
  runtime: TrackerRuntimeStore;
  /** The sink every source feeds (it advances `last_processed_ts`). */
  sink: TicketSink;
  settings: TrackerSettings[];
  close(): Promise<void>;
}

/** Options of {@link openTrackerService}. */
export interface TrackerServiceOptions {
  /** Where start-up repairs and module failures are reported. */
  warn?: (line: string) => void;
  /** Environment lookup (tests). */
  env?: (name: string) => string | undefined;
  /** Start the pollers (default true). */
  poll?: boolean;
  /** First retry delay of a failed landing comment (tests; default 30 s). */
  commentRetryDelayMs?: number;
  /**
   * A ticket cancelled its task or gave it new attempts: journaled and settled as an operator's
   * cancel or retry through the task API is (the server wires it; a live run does it itself).
   */
  afterTicketChange?: (kind: "cancel" | "retry", task: Task) => Promise<void>;
}

/** What a ticket's outcome did to its task, as an operator's change would name it. */
const CHANGE_OF: Partial<Record<TicketOutcome["action"], "cancel" | "retry">> = {
  cancelled: "cancel",
  reopened: "retry",
  retried: "retry",
};

const services = new WeakMap<AppContext, Promise<TrackerService>>();

/** Open (once) the tracker subsystem of `ctx`. */
export function trackerServiceFor(
  ctx: AppContext,
  options: TrackerServiceOptions = {},
): Promise<TrackerService> {
  let service = services.get(ctx);
  if (!service) {
    service = openTrackerService(ctx, options);
    service.catch(() => services.delete(ctx));
    services.set(ctx, service);
  }
  return service;
}

/** Close the tracker subsystem of `ctx` if it was opened. */
export async function closeTrackerService(ctx: AppContext): Promise<void> {
  const service = services.get(ctx);
  if (!service) return;
  services.delete(ctx);
  await (await service).close();
}

async function openTrackerService(
  ctx: AppContext,
  options: TrackerServiceOptions,
): Promise<TrackerService> {
  const warn = options.warn ?? ((line: string) => console.warn(line));
  const config = await loadConfig(ctx.paths.root);
  const settings = config ? trackerSettings(config, BUILTIN_TRACKERS) : [];
  for (const s of settings) {
    if (!s.module) continue;
    try {
      await loadHandlerModule(s.name, s.module, ctx.paths.root);
    } catch (e) {
      warn((e as Error).message);
    }
  }
  const { ledger, repair } = await ReplayLedger.open(ctx.paths.webhookLedger);
  if (repair) {
    warn(
      `repaired ${repair.path}: kept ${repair.kept} line(s), moved ${repair.dropped} to ${repair.movedTo}`,
    );
  }
  const runtime = await TrackerRuntimeStore.open(ctx.paths.trackerState);
  const store = await taskStoreFor(ctx);
  const byName = new Map(settings.map((s) => [s.name, s]));
  const outside = (name: string, t: Ticket) => {
    const s = byName.get(name);
    return s && outsideProject(s, { ref: t.ref, ids: t.raw.ids });
  };
  const inner = createTicketSink({
    store,
    routing: (name) => byName.get(name),
    outside: (t) => outside(t.tracker, t),
  });
  const sink: TicketSink = async (tickets) => {
    const out = await inner(tickets);
    for (const o of out) {
      const kind = CHANGE_OF[o.action];
      const task = kind && o.task_id ? store.get(o.task_id) : undefined;
      if (!kind || !task || !options.afterTicketChange) continue;
      await options.afterTicketChange(kind, task).catch((e) =>
        warn(`${task.id}: its ticket's ${kind} was not journaled: ${(e as Error).message}`)
      );
    }
    const newest = newestUpdate(tickets);
    for (const [tracker, ts] of newest) runtime.update(tracker, { last_processed_ts: ts });
    return out;
  };
  const receiver = new WebhookReceiver<Ticket, TicketOutcome>({
    ledger,
    settings: (name) => webhookOf(config, name),
    context: (name) => ({
      tracker: name,
      project: byName.get(name)?.project,
      apiUrl: byName.get(name)?.apiUrl,
    }),
    sink,
    problem: ticketProblem,
    scope: outside,
    describe: outcomeSummary,
    env: options.env,
    onDelivery: (name, record) => runtime.update(name, { last_delivery: record }),
    // A pull request's checks or reviews changed: the landing looks again now (lib/landing).
    onHostEvent: (event) => publishActivity(HOST_EVENT_ACTIVITY, event),
    hostScope: (name, event) =>
      hostEventOutside(byName.get(name) ?? { name }, event, landingRepo(config)),
  });
  const env = options.env ?? ((n: string) => Deno.env.get(n));
  const pollers: TrackerPoller[] = [];
  for (const s of settings) {
    if (!s.adapter || options.poll === false) continue;
    const replay = replaysAtStartup(s, env);
    if (!s.polling && !replay) continue;
    const problem = s.polling && apiProblem(s, env);
    if (problem) warn(`tracker ${s.name}: not polling yet: ${problem}`);
    const poller = new TrackerPoller(s, s.adapter, {
      fetch: globalThis.fetch,
      now: ctx.now ? () => ctx.now!().getTime() : Date.now,
      env,
      sink,
      runtime,
      warn,
    });
    if (s.polling) poller.start();
    else poller.startBootReplay();
    pollers.push(poller);
  }
  let stopWriteBack = () => Promise.resolve();
  try {
    stopWriteBack = await startWriteBack({
      paths: ctx.paths,
      settings,
      runtime,
      warn,
      access: (s) => apiAccess(s, env),
      boardUrl: async (s) =>
        s.webhook?.publicUrlBase?.replace(/\/+$/, "") ?? (await readRunState(ctx.paths))?.url,
      firstRetryDelayMs: options.commentRetryDelayMs,
    });
  } catch (e) {
    warn(`tracker write-back is off: ${(e as Error).message}`);
  }
  return {
    receiver,
    ledger,
    runtime,
    sink,
    settings,
    async close() {
      await stopWriteBack();
      await Promise.all(pollers.map((p) => p.stop()));
      await ledger.close();
      await runtime.close();
    },
  };
}

/** The repository pull requests land in, when the landing opens pull requests. */
function landingRepo(config: ServiceConfig | undefined) {
  const l = config?.landing;
  return l?.mode === "pull_request" && l.provider && l.repo
    ? { provider: l.provider, repo: l.repo }
    : undefined;
}

function webhookOf(config: ServiceConfig | undefined, name: string) {
  const webhook = config?.trackers[name]?.webhook;
  return webhook && { enabled: webhook.enabled, secretEnv: webhook.secret_env };
}

/** The newest `raw.updated_at` per tracker among `tickets`. */
function newestUpdate(tickets: Ticket[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const t of tickets) {
    const ts = t.raw.updated_at;
    if (ts && ts > (out.get(t.tracker) ?? "")) out.set(t.tracker, ts);
  }
  return out;
}
