/**
 * Every command of the `service` CLI, in help order: its name and summary, and its module, which
 * is loaded only when the command runs or its help is shown. A process then holds the code of the
 * one command it runs — `service serve` does not load the orchestrator, the doctor or the worker —
 * and starts sooner. lib/cli/commands/mod_test.ts checks each entry against its module.
 */
import type { Command } from "../command.ts";

/** A command as `service --help` lists it. */
export interface CommandEntry {
  name: string;
  summary: string;
  /** The command itself (its module, imported on first use). */
  load(): Promise<Command>;
}

/** The commands, in the order `service --help` lists them. */
export const COMMANDS: CommandEntry[] = [
  {
    name: "demo",
    summary: "run the embedded demo plan with scripted agents (no API key needed)",
    load: async () => (await import("./demo.ts")).demoCommand,
  },
  {
    name: "run",
    summary: "run a plan: agents in git worktrees, verified and merged",
    load: async () => (await import("./run.ts")).runCommand,
  },
  {
    name: "stop",
    summary: "stop the current run: agents get SIGTERM, then SIGKILL; work is kept",
    load: async () => (await import("./stop.ts")).stopCommand,
  },
  {
    name: "runs",
    summary: "list runs: status, board columns and board URL",
    load: async () => (await import("./runs.ts")).runsCommand,
  },
  {
    name: "cancel",
    summary: "cancel tasks (a running agent is ended; its work stays on a rescue ref)",
    load: async () => (await import("./cancel.ts")).cancelCommand,
  },
  {
    name: "retry",
    summary: "give FAILED or CANCELLED tasks new attempts",
    load: async () => (await import("./retry.ts")).retryCommand,
  },
  {
    name: "serve",
    summary: "serve the task API and the review board",
    load: async () => (await import("./serve.ts")).serveCommand,
  },
  {
    name: "gui serve",
    summary: "serve only the review board page, its JSON API and /events (no task API)",
    load: async () => (await import("./gui_serve.ts")).guiServeCommand,
  },
  {
    name: "status",
    summary: "tasks, agents, spend and the verification alert",
    load: async () => (await import("./status.ts")).statusCommand,
  },
  {
    name: "ps",
    summary: "list agent processes (local PID files, and remote workers' agents)",
    load: async () => (await import("./ps.ts")).psCommand,
  },
  {
    name: "agents",
    summary: "agent adapters and their readiness; live agent sessions",
    load: async () => (await import("./agents.ts")).agentsCommand,
  },
  {
    name: "cost",
    summary: "spend by model or task, against the budget",
    load: async () => (await import("./cost.ts")).costCommand,
  },
  {
    name: "backlog claim",
    summary: "claim the next ready task over HTTP and print it as JSON",
    load: async () => (await import("./backlog_claim.ts")).backlogClaimCommand,
  },
  {
    name: "worker",
    summary: "run agents for an orchestrator on another machine",
    load: async () => (await import("./worker.ts")).workerCommand,
  },
  {
    name: "workers",
    summary: "list remote workers (slots, heartbeats, failures); cordon, uncordon or drain one",
    load: async () => (await import("./workers.ts")).workersCommand,
  },
  {
    name: "doctor",
    summary: "check deno, git, the workspace, config, templates, port, agent CLIs, PID files",
    load: async () => (await import("./doctor.ts")).doctorCommand,
  },
  {
    name: "debug",
    summary: "write a redacted diagnostic bundle under .sdd/debug/",
    load: async () => (await import("./debug.ts")).debugCommand,
  },
  {
    name: "integrations list",
    summary: "trackers: polling or webhook, variables set, URL to register, last delivery and poll",
    load: async () => (await import("./integrations_list.ts")).integrationsListCommand,
  },
  {
    name: "preview",
    summary: "expose the local server through a tunnel and print the webhook URLs to register",
    load: async () => (await import("./preview.ts")).previewCommand,
  },
  {
    name: "audit verify",
    summary: "recompute every entry of the signed audit chain",
    load: async () => (await import("./audit_verify.ts")).auditVerifyCommand,
  },
  {
    name: "mcp catalog",
    summary: "browse the MCP server catalog; install, upgrade and health-check MCP servers",
    load: async () => (await import("./mcp_catalog.ts")).mcpCatalogCommand,
  },
  {
    name: "verification reset",
    summary: "reset the verification alert (moves the ledger aside, never deletes it)",
    load: async () => (await import("./verification_reset.ts")).verificationResetCommand,
  },
  {
    name: "scripted-agent",
    summary: "a scripted agent program speaking the agent protocol (demo, tests)",
    load: async () => (await import("./scripted_agent.ts")).scriptedAgentCommand,
  },
];
