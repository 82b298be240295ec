/**
 * `doctor`'s look at the trackers, each configured one in turn: its webhook secret variable and
 * its API token variable (set or not, never their values), its `project` (the only project whose
 * tickets are taken), and whether deliveries sent while the service is down are recovered. Each
 * problem carries its fix in one line. (`comment_on_land` or `polling: true` without `project`
 * is a configuration error, reported by the config check.)
 */
import type { ServiceConfig } from "../config/schema.ts";
import type { CheckResult } from "../check_result.ts";
import { readSecret } from "../webhooks/secret.ts";
import type { TrackerAdapter } from "./adapter.ts";
import {
  apiProblem,
  startupReplayProblem,
  type TrackerSettings,
  trackerSettings,
} from "./settings.ts";

/** The checks of every configured tracker (none without `trackers`). */
export async function trackerChecks(
  config: ServiceConfig,
  builtins: ReadonlyMap<string, TrackerAdapter>,
  env: (name: string) => string | undefined = (n) => Deno.env.get(n),
): Promise<CheckResult[]> {
  const out: CheckResult[] = [];
  const settings = trackerSettings(config, builtins).sort((a, b) => a.name.localeCompare(b.name));
  for (const s of settings) {
    if (s.webhook?.enabled) out.push(await secretCheck(s, env));
    if (!s.adapter) continue; // a module's tracker: webhooks only, no API client
    const token = tokenCheck(s, env);
    if (token) out.push(token);
    out.push(projectCheck(s));
    const lost = startupReplayProblem(s, env);
    if (lost) {
      const first = !s.project
        ? `set trackers.${s.name}.project (${s.adapter.projectHint}) and export ${s.tokenEnv}`
        : !env(s.tokenEnv)
        ? `export ${s.tokenEnv}=<a ${s.adapter.product} token that can read ${s.project}>`
        : `fix it: ${lost}`;
      out.push({
        name: `tracker ${s.name} downtime`,
        ok: true,
        warning: true,
        detail: `webhook only, and ${lost}: deliveries sent while the service is down are lost`,
        fix: `${first}; each start then replays the tickets that changed meanwhile ` +
          "(or turn polling on)",
      });
    }
  }
  return out;
}

async function secretCheck(
  s: TrackerSettings,
  env: (name: string) => string | undefined,
): Promise<CheckResult> {
  const secretEnv = s.webhook!.secretEnv;
  const name = `tracker ${s.name} webhook`;
  const secret = await readSecret(secretEnv, env);
  if (secret.ok) return { name, ok: true, detail: `secret ${secretEnv} is set` };
  return {
    name,
    ok: false,
    detail: `${secret.reason}: every delivery gets 503`,
    fix: `export ${secretEnv}=<the secret registered with ${product(s)}> ` +
      `(or ${secretEnv}_FILE=<a file holding it>)`,
  };
}

/** The token variable, when something needs the API: polling, comments, the startup replay. */
function tokenCheck(
  s: TrackerSettings,
  env: (name: string) => string | undefined,
): CheckResult | undefined {
  const adapter = s.adapter!;
  const uses = [
    s.polling ? "polling" : "",
    s.commentOnLand ? "comments" : "",
    !s.polling && s.webhook?.enabled && s.project ? "the startup replay" : "",
  ].filter(Boolean);
  if (uses.length === 0) return undefined;
  const name = `tracker ${s.name} token`;
  const fix = `export ${s.tokenEnv}=<a ${adapter.product} token that can read${
    s.commentOnLand ? " and comment on" : ""
  } ${s.project}>`;
  const problem = apiProblem(s, env);
  if (problem && !problem.startsWith(s.tokenEnv)) {
    return {
      name,
      ok: false,
      detail: `${uses.join(", ")} cannot call ${adapter.product}: ${problem}`,
      fix: `set it in service.yaml (${adapter.projectHint})`,
    };
  }
  if (env(s.tokenEnv)) {
    return { name, ok: true, detail: `${s.tokenEnv} is set (${uses.join(", ")})` };
  }
  if (!s.polling && !s.commentOnLand) return undefined; // the downtime warning says it
  if (s.commentOnLand || !adapter.tokenOptional) {
    return {
      name,
      ok: false,
      detail: `${s.tokenEnv} is empty: ${uses.join(", ")} cannot call ${adapter.product}`,
      fix,
    };
  }
  return {
    name,
    ok: true,
    warning: true,
    detail: `${s.tokenEnv} is empty: ${uses.join(", ")} work for a public project only`,
    fix,
  };
}

function projectCheck(s: TrackerSettings): CheckResult {
  const name = `tracker ${s.name} project`;
  if (s.project) {
    return { name, ok: true, detail: `only tickets of ${s.project} are taken and commented on` };
  }
  return {
    name,
    ok: true,
    warning: true,
    detail: "not set: tickets of any project its webhook secret signs become tasks",
    fix: `set trackers.${s.name}.project (${s.adapter!.projectHint})`,
  };
}

function product(s: TrackerSettings): string {
  return s.adapter?.product ?? s.name;
}
