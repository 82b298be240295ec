/** `service worker`: run the orchestrator's agents on this machine (DESIGN.md §16, §17). */
import { CliError, type Command } from "../command.ts";
import { parseOptions } from "./_options.ts";
import { DEFAULT_DRAIN_TIMEOUT_S, runWorker } from "../../remote_worker/worker.ts";
import { parseHealthAddress, serveWorkerHealth, WorkerStatus } from "../../remote_worker/health.ts";
import { secretEnv, secretFileProblem } from "../../auth/secret_env.ts";
import { printableItem } from "../../util/printable.ts";
import { ID_RULE, isValidId } from "../../ids.ts";

export const workerCommand: Command = {
  name: "worker",
  summary: "run agents for an orchestrator on another machine",
  help:
    `Usage: service worker --server URL [--slots N] [--roles a,b] [--remote NAME] [--dir DIR] [--name NAME]
                      [--poll-ms N] [--once] [--exit-when-idle S] [--clone URL] [--drain-timeout S] [--health-port [HOST:]PORT]
                      [--ticket T]

Registers with the orchestrator at URL, claims tasks with a lease it renews by heartbeat, runs
each agent in a worktree of its own clone (DIR) cut at the commit the claim names, exactly as
the orchestrator runs local agents (service.yaml of DIR: adapters, agent_env, worktree
environments), pushes agent/<session> to the git remote and reports the pushed commit. The
orchestrator fetches, verifies, gates and lands it.

SIGTERM (or Ctrl-C) drains: no new claim; running agents get --drain-timeout to finish, then
they end, their work is pushed and reported as drained (the orchestrator requeues the task at
once, counting no attempt; the next attempt continues from the pushed work). A second signal
ends them at once, and gives up a report no orchestrator answers (the next worker on this clone
hands that session back).

Token: SERVICE_TOKEN, or SERVICE_TOKEN_FILE (a file holding it, e.g. a mounted Kubernetes
Secret, read again when it changes): a token of scope "worker" (auth.tokens in the
orchestrator's service.yaml). It registers and claims; each claimed session comes with its own
capability for its heartbeat and report. Provider keys: this machine's own (ANTHROPIC_API_KEY
…); the orchestrator never sends its keys.

Options:
  --server URL        the orchestrator's URL (behind a reverse proxy: its server.public_url)
  --slots N           agents at once on this machine (default 1; 1 with --once)
  --roles a,b         take only tasks of these roles (default: any)
  --remote NAME       git remote of the clone shared with the orchestrator (default origin)
  --dir DIR           the clone (default: --root, else the repository the current directory
                      is in)
  --name NAME         this worker's name in the journal and on the board (default: the host
                      name, which is a Kubernetes pod's name)
  --poll-ms N         milliseconds between asks for tasks while a slot is free (default 1000;
                      10-60000)
  --once              claim one task, run it, report it and exit 0; exit 0 at once when none
                      is ready (one task per pod)
  --exit-when-idle S  exit 0 after S seconds with nothing running and nothing to claim
  --clone URL         make DIR (empty or absent) a partial clone of URL first
                      (--filter=blob:none); a DIR that is already that clone is reused
  --drain-timeout S   seconds running agents get after SIGTERM (default ${DEFAULT_DRAIN_TIMEOUT_S})
  --health-port P     serve /healthz and /readyz on [HOST:]PORT (HOST default 0.0.0.0)
  --ticket T          a one-time claim ticket (a Kubernetes Job's): claim the one task it is
                      bound to, run it, report, and exit`,
  async run(args, ctx) {
    const values = parseOptions("worker", args, {
      server: { type: "string" },
      slots: { type: "string" },
      roles: { type: "string" },
      remote: { type: "string", default: "origin" },
      dir: { type: "string" },
      name: { type: "string" },
      "poll-ms": { type: "string" },
      once: { type: "boolean" },
      "exit-when-idle": { type: "string" },
      clone: { type: "string" },
      "drain-timeout": { type: "string" },
      "health-port": { type: "string" },
      ticket: { type: "string" },
    });
    const server = values.server as string | undefined;
    if (!server) {
      throw new CliError("--server is required: the orchestrator's URL, e.g. http://10.0.0.5:8052");
    }
    const once = values.once === true;
    const slotsText = (values.slots as string | undefined) ?? "1";
    const slots = Number(slotsText);
    if (!Number.isInteger(slots) || slots < 1 || slots > 256) {
      throw new CliError(`--slots ${slotsText} is not a number of agents (1-256)`);
    }
    if (once && slots !== 1) throw new CliError("--once runs one task: leave --slots out");
    const name = (values.name as string | undefined) ??
      Deno.hostname().replace(/[^A-Za-z0-9._-]/g, "-");
    if (!isValidId(name)) {
      throw new CliError(`--name ${name} must be ${ID_RULE}`);
    }
    const pollText = values["poll-ms"] as string | undefined;
    const pollMs = pollText === undefined ? undefined : Number(pollText);
    if (pollMs !== undefined && !(Number.isInteger(pollMs) && pollMs >= 10 && pollMs <= 60_000)) {
      throw new CliError(
        `--poll-ms ${pollText} is not a number of milliseconds (10-60000)`,
        1,
        "leave it out for the default, 1000",
      );
    }
    const idle = seconds(values["exit-when-idle"], "--exit-when-idle");
    const drain = seconds(values["drain-timeout"], "--drain-timeout");
    const healthText = values["health-port"] as string | undefined;
    const health = healthText === undefined ? undefined : parseHealthAddress(healthText);
    if (healthText !== undefined && !health) {
      throw new CliError(`--health-port ${healthText} is not a port (1-65535) or HOST:PORT`);
    }
    const tokenFile = Deno.env.get("SERVICE_TOKEN_FILE");
    if (!Deno.env.get("SERVICE_TOKEN") && tokenFile) {
      const problem = secretFileProblem(tokenFile);
      if (problem) {
        throw new CliError(`SERVICE_TOKEN_FILE: ${problem}`, 1, "mount the worker token there");
      }
    }
    // First signal: drain. A second: end the agents now.
    const draining = new AbortController();
    const hardStop = new AbortController();
    const onSignal = () => (draining.signal.aborted ? hardStop : draining).abort();
    Deno.addSignalListener("SIGINT", onSignal);
    Deno.addSignalListener("SIGTERM", onSignal);
    const status = new WorkerStatus();
    const probes = new AbortController();
    const log = (line: string) => printableItem(line).forEach((l) => ctx.stdout(l)); // agents' and the server's words
    try {
      if (health) {
        await serveWorkerHealth(health, status, probes.signal);
        log(`worker ${name}: /healthz and /readyz on ${health.hostname}:${health.port}`);
      }
      await runWorker({
        server,
        // Read at every request: a rotated Secret is taken without a restart.
        token: () => secretEnv("SERVICE_TOKEN"),
        name,
        slots,
        roles: values.roles
          ? String(values.roles).split(",").map((r) => r.trim()).filter(Boolean)
          : undefined,
        remote: values.remote as string,
        dir: (values.dir as string | undefined) ?? ctx.root,
        ...(values.clone ? { clone: String(values.clone) } : {}),
        pollMs,
        once,
        ...(idle === undefined ? {} : { exitWhenIdleS: idle }),
        ...(drain === undefined ? {} : { drainTimeoutS: drain }),
        log,
        signal: draining.signal,
        hardStop: hardStop.signal,
        status,
        ...(values.ticket ? { ticket: String(values.ticket) } : {}),
      });
    } finally {
      probes.abort();
      Deno.removeSignalListener("SIGINT", onSignal);
      Deno.removeSignalListener("SIGTERM", onSignal);
    }
    return 0;
  },
};

/** A non-negative number of seconds given as `flag`, or undefined when absent. */
function seconds(value: string | boolean | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (typeof value !== "string" || value.trim() === "" || !Number.isFinite(n) || n < 0) {
    throw new CliError(`${flag} ${value} is not a number of seconds`);
  }
  return n;
}
