/** `service worker`: run the orchestrator's agents on this machine (DESIGN.md §16). */
import { parseArgs } from "node:util";
import { CliError, type Command } from "../command.ts";
import { runWorker } from "../../remote_worker/worker.ts";
import { printableItem } from "../../util/printable.ts";

export const workerCommand: Command = {
  name: "worker",
  summary: "run agents for an orchestrator on another machine",
  help:
    `Usage: service worker --server URL [--slots N] [--roles a,b] [--remote NAME] [--dir DIR] [--name NAME] [--ticket T]

Registers with the orchestrator at URL, claims tasks with a lease it renews by heartbeat, runs
each agent in a worktree of its own clone (DIR) cut at the commit the claim names, exactly as
the orchestrator runs local agents (service.yaml of DIR: adapters, agent_env, worktree
environments), pushes agent/<session> to the git remote and reports the pushed commit. The
orchestrator fetches, verifies, gates and lands it. Stops on Ctrl-C or SIGTERM: its agents
end, their work is pushed and reported.

Token: SERVICE_TOKEN, a token of scope "worker" (auth.tokens in the orchestrator's
service.yaml). Provider keys: this machine's own (ANTHROPIC_API_KEY …); the orchestrator never
sends its keys.

Options:
  --server URL    the orchestrator's URL (behind a reverse proxy: its server.public_url)
  --slots N       agents at once on this machine (default 1)
  --roles a,b     take only tasks of these roles (default: any)
  --remote NAME   git remote of the clone shared with the orchestrator (default origin)
  --dir DIR       the clone (default: --root, else the current directory)
  --name NAME     this worker's name in the journal and on the board (default: hostname)
  --ticket T      a one-time claim ticket (a Kubernetes Job's): claim the one task it is
                  bound to, run it, report, and exit`,
  async run(args, ctx) {
    const { values } = parseArgs({
      args,
      options: {
        server: { type: "string" },
        slots: { type: "string", default: "1" },
        roles: { type: "string" },
        remote: { type: "string", default: "origin" },
        dir: { type: "string" },
        name: { type: "string" },
        "poll-ms": { type: "string" },
        ticket: { type: "string" },
      },
    });
    if (!values.server) {
      throw new CliError("--server is required: the orchestrator's URL, e.g. http://10.0.0.5:8052");
    }
    const slots = Number(values.slots);
    if (!Number.isInteger(slots) || slots < 1 || slots > 256) {
      throw new CliError(`--slots ${values.slots} is not a number of agents (1-256)`);
    }
    const name = values.name ?? Deno.hostname().replace(/[^A-Za-z0-9._-]/g, "-");
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(name)) {
      throw new CliError(`--name ${name} must be letters, digits, '.', '_', '-'`);
    }
    const controller = new AbortController();
    const stop = () => controller.abort();
    Deno.addSignalListener("SIGINT", stop);
    Deno.addSignalListener("SIGTERM", stop);
    try {
      await runWorker({
        server: values.server,
        token: Deno.env.get("SERVICE_TOKEN") || undefined,
        name,
        slots,
        roles: values.roles
          ? values.roles.split(",").map((r) => r.trim()).filter(Boolean)
          : undefined,
        remote: values.remote!,
        dir: values.dir ?? ctx.root,
        pollMs: values["poll-ms"] ? Number(values["poll-ms"]) : undefined,
        ...(values.ticket ? { ticket: values.ticket } : {}),
        log: (line) => printableItem(line).forEach((l) => ctx.stdout(l)), // agents' and the server's words
        signal: controller.signal,
      });
    } finally {
      Deno.removeSignalListener("SIGINT", stop);
      Deno.removeSignalListener("SIGTERM", stop);
    }
    return 0;
  },
};
