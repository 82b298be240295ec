/**
 * The `service doctor` check of pull-request landing: the same problems `service run` refuses to
 * start on (lib/landing/setup.ts) — the token unset, refused or without a permission (named), the
 * remote missing — each with its fix.
 */
import type { CheckResult } from "../check_result.ts";
import type { ServiceConfig } from "../config/schema.ts";
import { git } from "../git/git.ts";
import { landingProblems, pullRequestHost } from "./setup.ts";
import { landingSettings } from "./settings.ts";

/** One result per problem, one passing result when there is none; none in merge mode. */
export async function landingChecks(
  root: string,
  config: ServiceConfig,
  env: (name: string) => string | undefined = (n) => Deno.env.get(n),
): Promise<CheckResult[]> {
  if (config.landing.mode !== "pull_request") return [];
  const branch = await git(["symbolic-ref", "--short", "-q", "HEAD"], {
    cwd: root,
    allowFailure: true,
  });
  const settings = landingSettings(config, branch.stdout.trim() || "main");
  if (!settings) return [];
  const host = pullRequestHost(settings, env);
  const problems = await landingProblems(settings, host, { root, workspaceBranch: "", env });
  const name = `landing (${settings.product} ${settings.repo})`;
  if (problems.length === 0) {
    return [{
      name,
      ok: true,
      detail: `the token in ${settings.tokenEnv} may push agent branches and open and merge ` +
        `pull requests into ${settings.base}`,
    }];
  }
  return problems.map((p) => ({ name, ok: false, detail: p.problem, fix: p.fix }));
}
