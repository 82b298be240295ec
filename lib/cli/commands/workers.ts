/**
 * `service workers`: the remote workers of the workspace (slots, free, last heard from, start
 * failures, what each can start, cordon and drain), and an operator's cordon, uncordon and
 * drain — through the live server's `/workers` routes, else on `.sdd/runtime/workers.json`.
 */
import { parseArgs } from "node:util";
import { CliError, colour, type Command } from "../command.ts";
import { loadConfig } from "../../config/load.ts";
import { serverUrlFor, TaskClient, TaskStoreUnavailable } from "../../tasks/client.ts";
import { HttpApiError } from "../../http/api_error.ts";
import { type WorkerView, workerView } from "../../workers/fleet.ts";
import { WorkerRegistry } from "../../workers/registry.ts";
import { actOnWorker, type WorkerAction } from "../../workers/operator.ts";
import { printable } from "../../util/printable.ts";

const ACTIONS: readonly WorkerAction[] = ["cordon", "uncordon", "drain"];

export const workersCommand: Command = {
  name: "workers",
  summary: "list remote workers (slots, heartbeats, failures); cordon, uncordon or drain one",
  help: `Usage: service workers [--json] [--root DIR]
       service workers cordon NAME [--reason TEXT]
       service workers uncordon NAME
       service workers drain NAME

Lists the workers (\`service worker\`) this workspace's orchestrator has heard from: slots and
free slots, when each was last heard from, agents that did not start on it, the adapters it can
start (and what it lacks), and whether it is cordoned or draining, with why.

  cordon NAME    it gets no task until uncordoned (its running agents go on); the orchestrator
                 also cordons a worker on which 3 agents in a row did not start
  uncordon NAME  it gets tasks again
  drain NAME     it claims nothing more and exits once its running agents are done

Works through the live server (a run or \`service serve\`; SERVICE_TOKEN must be an operator's
token when tokens are configured), else on .sdd/runtime/workers.json (the next run keeps it).

Options:
  --json         print JSON
  --reason TEXT  why it is cordoned (shown by \`service workers\` and \`service status\`)`,
  async run(args, ctx) {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: { json: { type: "boolean", default: false }, reason: { type: "string" } },
    });
    const [action, name, ...extra] = positionals;
    const timeout = (await loadConfig(ctx.root))?.heartbeat_timeout_s ?? 45;
    const client = await liveClient(ctx.root);
    if (action === undefined) {
      const workers = client
        ? (await client.request<{ workers: WorkerView[] }>("GET", "/workers"))!.workers
        : (await WorkerRegistry.load(ctx.root)).list().map((r) =>
          workerView(r, Date.now(), timeout)
        );
      if (values.json) ctx.stdout(JSON.stringify({ workers }, null, 2));
      else printTable(workers, ctx.stdout, client === undefined);
      return 0;
    }
    if (!(ACTIONS as string[]).includes(action) || !name || extra.length > 0) {
      throw new CliError(
        `unknown use: service workers ${positionals.join(" ")}`,
        1,
        "service workers [cordon|uncordon|drain NAME]",
      );
    }
    let worker: WorkerView;
    if (client) {
      try {
        worker = (await client.request<{ worker: WorkerView }>(
          "POST",
          `/workers/${encodeURIComponent(name)}/${action}`,
          values.reason ? { reason: values.reason } : {},
        ))!.worker;
      } catch (e) {
        if (e instanceof HttpApiError) throw new CliError(printable(e.message));
        throw e;
      }
    } else {
      const registry = await WorkerRegistry.load(ctx.root);
      try {
        worker = actOnWorker(registry, action as WorkerAction, name, {
          by: Deno.env.get("USER") ?? "operator",
          reason: values.reason,
          now: Date.now(),
          timeoutS: timeout,
        });
      } catch (e) {
        throw new CliError((e as Error).message);
      }
      await registry.flushed();
    }
    ctx.stdout(`worker ${printable(worker.name)}: ${stateWords(worker)}`);
    return 0;
  },
};

/** A client of the workspace's live server, or undefined when none answers. */
async function liveClient(root: string): Promise<TaskClient | undefined> {
  try {
    return new TaskClient({ url: await serverUrlFor(root) });
  } catch (e) {
    if (e instanceof TaskStoreUnavailable) return undefined;
    throw e;
  }
}

/** `idle`, `CORDONED: why`, `draining` … */
function stateWords(w: WorkerView): string {
  if (w.cordoned) return `cordoned by ${w.cordoned.by}: ${w.cordoned.reason}`;
  if (w.draining) return `draining (asked by ${w.draining.by})`;
  return w.state;
}

function printTable(workers: WorkerView[], out: (l: string) => void, offline: boolean): void {
  if (workers.length === 0) {
    out(
      "no worker has registered with this workspace (`service worker --server URL` on a machine)",
    );
    return;
  }
  const rows = [[
    "NAME",
    "SLOTS",
    "FREE",
    "RUNNING",
    "STATE",
    "LAST SEEN",
    "FAILURES",
    "CAN START",
  ]];
  for (const w of workers) {
    const can = (w.adapters ?? []).filter((a) => a.ready)
      .map((a) => a.name);
    rows.push([
      w.name,
      String(w.slots),
      String(w.free),
      String(w.running),
      w.state,
      `${w.heartbeat_age_s} s ago`,
      String(w.failures_total),
      w.adapters ? can.join(",") || "none" : "any",
    ]);
  }
  // A worker names itself and says what it lacks: escaped.
  const cells = rows.map((r) => r.map((c) => printable(c)));
  const widths = cells[0].map((_, i) => Math.max(...cells.map((r) => r[i].length)));
  for (const r of cells) out(r.map((c, i) => c.padEnd(widths[i])).join("  ").trimEnd());
  for (const w of workers) {
    const notes = [
      ...(w.cordoned ? [`cordoned by ${w.cordoned.by}: ${w.cordoned.reason}`] : []),
      ...(w.draining ? [`draining (asked by ${w.draining.by})`] : []),
      ...(w.adapters ?? []).filter((a) => !a.ready).map((a) =>
        `cannot start ${a.name}: ${a.problem ?? "not ready"}`
      ),
      ...(w.last_failure ? [`last agent that did not start: ${w.last_failure}`] : []),
    ];
    for (const n of notes) out(colour.yellow(printable(`  ${w.name}: ${n}`)));
  }
  if (offline) out("(no server of this workspace runs: as last recorded)");
}
