/**
 * One outcome of `service doctor`. Each feature's check (lib/<feature>/doctor_check.ts) returns
 * these, and the `doctor` command lists the checks (lib/cli/commands/doctor.ts); the type lives
 * here, below every folder, so no feature imports lib/doctor and lib/doctor imports no feature.
 */

/** One check's outcome. */
export interface CheckResult {
  name: string;
  ok: boolean;
  detail: string;
  /** How to fix it (failures only). */
  fix?: string;
  /** A warning passes but deserves attention. */
  warning?: boolean;
}
