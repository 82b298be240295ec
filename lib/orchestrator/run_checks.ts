/**
 * What can be checked before a run starts is checked before `run_started` is written, and
 * `doctor` reports the same problems with the same fixes: the role templates the run will use
 * (files, placeholders, config), and settings that would break every task (a heartbeat timeout
 * shorter than the heartbeat interval orphans every agent).
 */
import type { ServiceConfig } from "../config/schema.ts";
import { loadRoleTemplate } from "../roles/templates.ts";
import { HEARTBEAT_INTERVAL_MS } from "./session.ts";

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
  if (config.heartbeat_timeout_s < MIN_HEARTBEAT_TIMEOUT_S) {
    problems.push({
      subject: "heartbeat_timeout_s",
      problem:
        `heartbeat_timeout_s is ${config.heartbeat_timeout_s} s, but agents heartbeat every ` +
        `${HEARTBEAT_INTERVAL_MS / 1000} s: every running task would be declared ORPHANED`,
      fix: `set heartbeat_timeout_s to at least ${MIN_HEARTBEAT_TIMEOUT_S} in service.yaml ` +
        "(the default is 45), or remove it",
    });
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
export async function runSetupProblems(
  root: string,
  config: ServiceConfig,
  roles: Iterable<string>,
): Promise<SetupProblem[]> {
  return [...settingProblems(config), ...await templateProblems(root, roles)];
}
