/**
 * Worktree environments (DESIGN.md §13): what an agent's fresh worktree gets before its agent
 * starts — the checkout's untracked files the `copy` patterns and `.worktreeinclude` name, links
 * to its shared directories (`symlink`), its own ignores (build caches, the linked and copied
 * paths), leased ports, and the `setup` commands run with the agent's environment — and, when
 * the work is captured, the `teardown` commands. The tree the gates run on gets the same copies
 * and links (setup is not re-run there).
 *
 * A setup that fails or runs out of time is the environment's fault, not the agent's: it is a
 * {@link WorktreeSetupError} whose reason is `setup_failed: <command>: <last error line>`; the
 * attempt ends there (it counts) and the agent never starts.
 */
import type { Launcher } from "../process/launcher.ts";
import { writeWorktreeIgnores } from "../worktrees/ignores.ts";
import { type CommandRun, type CommandsOutcome, runEnvCommands } from "./commands.ts";
import { type Populated, populateTree, type Skipped } from "./populate.ts";
import {
  type LeaseOptions,
  leasePorts,
  type PortLease,
  reclaimStaleLeases,
  releasePorts,
} from "./ports.ts";
import { copySources, linkSources, readWorktreeInclude } from "./select.ts";
import {
  ignoreLinesFor,
  isPlainWorktree,
  SETUP_FAILED,
  type WorktreeEnvConfig,
  worktreeEnvFor,
} from "./spec.ts";
import type { WorktreeEnvSpec } from "./spec.ts";

/** What a worktree got (the data of `task_worktree_prepared`, without the ids). */
export interface PreparedWorktree {
  /** Files copied from the checkout, relative to the worktree. */
  copied: string[];
  /** Paths linked to the checkout's. */
  linked: string[];
  /** The setup commands as they ran (up to the first that failed). */
  setup: CommandRun[];
  ports: number[];
  /** What was chosen but not copied or linked, and why. */
  skipped: Skipped[];
  /** False when nothing was asked of the environment (only the default ignores applied). */
  configured: boolean;
}

/** A worktree's setup failed: the attempt ends, the agent never starts. */
export class WorktreeSetupError extends Error {
  constructor(
    /** `setup_failed: <command>: <last error line>`. */
    readonly reason: string,
    /** What the worktree got before the failure. */
    readonly prepared: PreparedWorktree,
  ) {
    super(reason);
    this.name = "WorktreeSetupError";
  }
}

/** `setup_failed: <command>: <line>`, one line of bounded length. */
function setupFailedReason(command: string, line: string): string {
  const cmd = command.replace(/\s+/g, " ").trim();
  return `${SETUP_FAILED}: ${cmd.length > 120 ? cmd.slice(0, 117) + "…" : cmd}: ${line}`;
}

/** Options of {@link WorktreeEnvironments}. */
export interface WorktreeEnvironmentsOptions {
  /** The workspace root (the user's checkout). */
  root: string;
  /** `worktree` and `roles` of service.yaml. */
  config: WorktreeEnvConfig;
  /** Where port leases are kept (`.sdd/runtime/ports`). */
  portsDir: string;
  /** Lease checks (tests replace the process and port probes). */
  lease?: LeaseOptions;
}

/** A worktree to prepare for an agent. */
export interface PrepareRequest {
  tree: string;
  sessionId: string;
  role: string;
  /** The agent's environment, the leased ports included: setup runs with exactly this. */
  env: Record<string, string>;
  /** The leased ports (from {@link WorktreeEnvironments.leasePorts}). */
  ports: number[];
  /** The session log; setup output goes there. */
  logPath: string;
  signal?: AbortSignal;
  /**
   * Where the setup commands run (default: host processes; under `isolation: container`, the
   * session's phase-1 container, DESIGN.md §14).
   */
  launcher?: Launcher;
}

/** A worktree whose teardown runs before it is removed. */
export interface TeardownRequest {
  tree: string;
  role: string;
  env: Record<string, string>;
  logPath: string;
  signal?: AbortSignal;
  /** Where the commands run (default: host processes; a container under isolation: container). */
  launcher?: Launcher;
}

/** The worktree environments of a workspace, by role. */
export class WorktreeEnvironments {
  readonly #o: WorktreeEnvironmentsOptions;

  constructor(options: WorktreeEnvironmentsOptions) {
    this.#o = options;
  }

  /** The environment of `role`'s worktrees. */
  spec(role: string): WorktreeEnvSpec {
    return worktreeEnvFor(this.#o.config, role);
  }

  /** Lease the ports `role`'s worktrees get (none unless `ports` is set). */
  leasePorts(sessionId: string, role: string): Promise<number[]> {
    const spec = this.spec(role);
    return leasePorts(this.#o.portsDir, sessionId, spec.ports, spec.port_range, this.#o.lease);
  }

  /** Release the ports of `sessionId` (its worktree is reaped, or it never started). */
  releasePorts(sessionId: string): Promise<number[]> {
    return releasePorts(this.#o.portsDir, sessionId);
  }

  /** Take back the leases of sessions whose orchestrator is gone. */
  reclaimStaleLeases(): Promise<PortLease[]> {
    return reclaimStaleLeases(this.#o.portsDir, this.#o.lease);
  }

  /** Copy and link what `role`'s worktrees get from the checkout into `tree`. */
  async #populate(tree: string, spec: WorktreeEnvSpec, include: string[]): Promise<Populated> {
    const root = this.#o.root;
    const links = await linkSources(root, spec.symlink);
    const copy = await copySources(root, [...spec.copy, ...include], { linked: links.found });
    return await populateTree(root, tree, { copy, link: links.found });
  }

  /**
   * Prepare an agent's new worktree: copies, links, its own ignores ({@link populate}), then the
   * setup commands ({@link setup}). Throws a {@link WorktreeSetupError} when a step fails.
   */
  async prepare(req: PrepareRequest): Promise<PreparedWorktree> {
    return await this.setup(req, await this.populate(req));
  }

  /**
   * The host's part of preparing a worktree: copies, links and its own ignores. Throws a
   * {@link WorktreeSetupError} when a step fails.
   */
  async populate(req: Omit<PrepareRequest, "env" | "launcher">): Promise<PreparedWorktree> {
    const spec = this.spec(req.role);
    const include = await readWorktreeInclude(this.#o.root);
    const prepared: PreparedWorktree = {
      copied: [],
      linked: [],
      setup: [],
      ports: req.ports,
      skipped: [],
      configured: !isPlainWorktree(spec, include),
    };
    try {
      const populated = await this.#populate(req.tree, spec, include);
      Object.assign(prepared, {
        copied: populated.copied,
        linked: populated.linked,
        skipped: populated.skipped,
      });
      await writeWorktreeIgnores(
        req.tree,
        ignoreLinesFor(spec, populated.linked, populated.copied),
        req.signal,
      );
    } catch (e) {
      throw new WorktreeSetupError(
        setupFailedReason("copying and linking the worktree environment", (e as Error).message),
        prepared,
      );
    }
    if (prepared.configured) await logEnvironment(req.logPath, prepared);
    return prepared;
  }

  /**
   * Run the setup commands of a {@link populate}d worktree (where `req.launcher` says). Throws a
   * {@link WorktreeSetupError} when one fails.
   */
  async setup(req: PrepareRequest, prepared: PreparedWorktree): Promise<PreparedWorktree> {
    const spec = this.spec(req.role);
    const outcome = await runEnvCommands(spec.setup, {
      phase: "setup",
      cwd: req.tree,
      env: req.env,
      logPath: req.logPath,
      timeoutMs: spec.setup_timeout_s * 1000,
      stopOnFailure: true,
      signal: req.signal,
      launcher: req.launcher,
    });
    prepared.setup = outcome.runs;
    if (outcome.failure) {
      throw new WorktreeSetupError(
        setupFailedReason(outcome.failure.command, outcome.failure.line),
        prepared,
      );
    }
    return prepared;
  }

  /** The tree the gates run on gets the same copies and links (setup is not re-run there). */
  async prepareGateTree(role: string, tree: string): Promise<Populated> {
    return await this.#populate(tree, this.spec(role), await readWorktreeInclude(this.#o.root));
  }

  /** Run `role`'s teardown commands in the worktree (every one, whatever the others did). */
  async teardown(req: TeardownRequest): Promise<CommandsOutcome | undefined> {
    const spec = this.spec(req.role);
    if (spec.teardown.length === 0) return undefined;
    return await runEnvCommands(spec.teardown, {
      phase: "teardown",
      cwd: req.tree,
      env: req.env,
      logPath: req.logPath,
      timeoutMs: spec.setup_timeout_s * 1000,
      stopOnFailure: false,
      signal: req.signal,
      launcher: req.launcher,
    });
  }
}

/** A list for a log line: the first few items, then how many more. */
function few(items: readonly string[]): string {
  const shown = items.slice(0, 5).join(", ");
  return items.length > 5 ? `${shown} and ${items.length - 5} more` : shown;
}

/** One line in the session log saying what the worktree got before its setup. */
async function logEnvironment(logPath: string, p: PreparedWorktree): Promise<void> {
  const parts = [
    `copied ${p.copied.length} file(s)${p.copied.length ? ` (${few(p.copied)})` : ""}`,
    `linked ${p.linked.length ? few(p.linked) : "nothing"}`,
    `ports ${p.ports.length ? p.ports.join(",") : "none"}`,
    ...p.skipped.map((s) => `skipped ${s.path}: ${s.why}`),
  ];
  await Deno.writeTextFile(
    logPath,
    `──── service: worktree environment: ${parts.join("; ")}\n`,
    { append: true, create: true },
  );
}
