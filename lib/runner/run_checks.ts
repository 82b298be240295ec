/**
 * What can be checked before a run starts is checked before `run_started` is written, and
 * `doctor` reports the same problems with the same fixes: the repository and its branch, the
 * plan, the role templates the run will use (files, placeholders, config), and settings that
 * would break every task (a heartbeat timeout shorter than the heartbeat interval orphans every
 * agent; a quality gate whose program the gates' trees will not have, gate_programs.ts). A failed
 * check is a {@link RunError} naming the fix.
 */
import { existsSync } from "node:fs";
import type { ServiceConfig } from "../config/schema.ts";
import { UserFacingError } from "../errors.ts";
import { git } from "../git/git.ts";
import { loadPlan } from "../plans/load.ts";
import type { ParsedPlan } from "../plans/plan.ts";
import { loadRoleTemplate } from "../roles/templates.ts";
import { HEARTBEAT_INTERVAL_MS } from "../agent_session/lane.ts";
import { linkedInstalls, worktreeEnvFor } from "../worktree_env/spec.ts";
import { workersConfigured } from "../workers/lane.ts";
import { type GateProgramOptions, gateProgramProblems, type PlannedGate } from "./gate_programs.ts";

/** A user-facing failure of `service run`, with its exit code (spec §7.4) and the fix. */
export class RunError extends UserFacingError {
  constructor(message: string, exitCode = 1, fix?: string) {
    super(message, exitCode, fix);
    this.name = "RunError";
  }
}

/** One problem that would make the run fail, with its fix. */
export interface SetupProblem {
  /** What is checked, e.g. `role backend`. */
  subject: string;
  problem: string;
  fix: string;
}

/** The shortest `heartbeat_timeout_s` that tolerates one late heartbeat. */
const MIN_HEARTBEAT_TIMEOUT_S = (2 * HEARTBEAT_INTERVAL_MS) / 1000;

/** Settings of service.yaml that would break every task (pure). */
export function settingProblems(config: ServiceConfig): SetupProblem[] {
  const problems: SetupProblem[] = [];
  // With `max_agents: 0` every agent runs on a remote worker, which heartbeats three times a lease.
  if (config.heartbeat_timeout_s < MIN_HEARTBEAT_TIMEOUT_S && config.max_agents !== 0) {
    problems.push({
      subject: "heartbeat_timeout_s",
      problem:
        `heartbeat_timeout_s is ${config.heartbeat_timeout_s} s, but agents heartbeat every ` +
        `${HEARTBEAT_INTERVAL_MS / 1000} s: every running task would be declared ORPHANED`,
      fix: `set heartbeat_timeout_s to at least ${MIN_HEARTBEAT_TIMEOUT_S} in service.yaml ` +
        "(the default is 45), or remove it",
    });
  }
  // Remote workers are taken only with a worker token (lib/workers/admission.ts).
  if (config.max_agents === 0 && !workersConfigured(config.auth.tokens)) {
    problems.push({
      subject: "max_agents",
      problem: "max_agents: 0 leaves every task to remote workers, but no worker token is " +
        "configured, so no worker is taken and no task would ever run",
      fix: "add a token of scope worker to auth.tokens (docs/workers.md), or set max_agents " +
        "to 1 or more",
    });
  }
  // A setup that installs into a linked directory writes into the user's checkout.
  const seen = new Set<string>();
  for (const role of Object.keys(config.roles)) {
    for (const clash of linkedInstalls(worktreeEnvFor(config, role))) {
      const key = `${clash.linked}\0${clash.command}`;
      if (seen.has(key)) continue;
      seen.add(key);
      problems.push({
        subject: "worktree.setup",
        problem: `\`${clash.command}\` runs in a worktree whose ${clash.linked} is linked to the ` +
          `checkout's own, so it ${clash.effect} there, in your checkout`,
        fix: `remove ${clash.linked} from worktree.symlink to install it in each worktree, or ` +
          `drop \`${clash.command}\` from worktree.setup to share the checkout's`,
      });
    }
  }
  return problems;
}

/** Problems of the role templates of `roles` (their files, placeholders and config). */
export async function templateProblems(
  root: string,
  roles: Iterable<string>,
): Promise<SetupProblem[]> {
  const problems: SetupProblem[] = [];
  for (const role of new Set(roles)) {
    try {
      await loadRoleTemplate(root, role);
    } catch (e) {
      const err = e as Error;
      problems.push({
        subject: `role ${role}`,
        problem: `${err.name}: ${err.message}`,
        fix: `fix templates/roles/${role}/ (system_prompt.md, task_prompt.md, config.yaml), ` +
          "or remove it to use the built-in template",
      });
    }
  }
  return problems;
}

/** Every problem of a run of tasks with `roles` under `config`. */
async function runSetupProblems(
  root: string,
  config: ServiceConfig,
  roles: Iterable<string>,
  planned: readonly PlannedGate[],
): Promise<SetupProblem[]> {
  const used = [...roles];
  return [
    ...settingProblems(config),
    ...await templateProblems(root, used),
    ...await gateProgramProblems(root, config, used, { planned }),
  ];
}

/** What a plan's steps run on the merged tree: their `test_passes` signals and evidence (pure). */
export function plannedGates(plan: ParsedPlan): PlannedGate[] {
  return plan.tasks.flatMap((t) => [
    ...t.completion_signals.flatMap((s) =>
      "test_passes" in s
        ? [{ role: t.role, name: `test_passes of ${t.id}`, command: s.test_passes }]
        : []
    ),
    ...(t.evidence ?? []).map((e) => ({
      role: t.role,
      name: `evidence ${e.name} of ${t.id}`,
      command: e.command,
    })),
  ]);
}

/** The branch checked out in `root`, where the run lands; a {@link RunError} when there is none. */
export async function currentBranch(root: string): Promise<string> {
  const inside = await git(["rev-parse", "--is-inside-work-tree"], {
    cwd: root,
    allowFailure: true,
  });
  if (inside.code !== 0) {
    throw new RunError(
      `${root} is not a git repository`,
      1,
      "run `git init` and commit once, or pass --root <your repository>",
    );
  }
  const head = await git(["symbolic-ref", "--quiet", "--short", "HEAD"], {
    cwd: root,
    allowFailure: true,
  });
  if (head.code !== 0) {
    throw new RunError("HEAD is detached", 1, "check out the branch the work should land on");
  }
  const branch = head.stdout.trim();
  const tip = await git(["rev-parse", "--verify", "--quiet", "HEAD"], {
    cwd: root,
    allowFailure: true,
  });
  if (tip.code !== 0) {
    throw new RunError(
      `branch ${branch} has no commit yet`,
      1,
      "commit once before `service run`",
    );
  }
  return branch;
}

/** Check a plan and what its run needs before anything is written. */
export async function checkedPlan(
  root: string,
  planFile: string,
  config: ServiceConfig,
): Promise<ParsedPlan> {
  if (!existsSync(planFile)) {
    throw new RunError(
      `no plan file ${planFile}`,
      1,
      "pass the plan to run: `service run path/to/plan.yaml` (see README.md for the format)",
    );
  }
  const plan = await loadPlan(root, planFile, config);
  await throwSetupProblems(root, config, plan.tasks.map((t) => t.role), {
    planned: plannedGates(plan),
  });
  return plan;
}

/** Throw the problems of a run of tasks with `roles` as one {@link RunError}. */
export async function throwSetupProblems(
  root: string,
  config: ServiceConfig,
  roles: string[],
  options: GateProgramOptions = {},
) {
  const planned = options.planned ?? [];
  const problems = await runSetupProblems(root, config, roles, planned);
  if (problems.length === 0) return;
  throw new RunError(
    problems.map((p) => `${p.subject}: ${p.problem}`).join("\n  "),
    1,
    problems.map((p) => p.fix).join("; "),
  );
}
