/** `service doctor`: check the installation and the workspace; exit 1 if any check fails. */
import { parseArgs } from "node:util";
import { colour, type Command } from "../command.ts";
import type { CheckResult } from "../../check_result.ts";
import {
  checkAgentCli,
  checkConfig,
  checkDeno,
  checkGit,
  checkJournals,
  checkPidFiles,
  checkRescueRefs,
  checkRunSetup,
  checkTasks,
  checkWritable,
} from "../../doctor/checks.ts";
import { checkPort } from "../../doctor/port.ts";
import { auditCrossCheckResults } from "../../audit/doctor_check.ts";
import { tokenVariablesResult } from "../../auth/doctor_check.ts";
import {
  agentAuthorityChecks,
  type AgentAuthorityFacts,
} from "../../auth/agent_authority_check.ts";
import { checkMcpServers } from "../../mcp/doctor_check.ts";
import { isolationChecks } from "../../container/doctor_check.ts";
import { containerSettings } from "../../container/settings.ts";
import { configuredAdapter } from "../../config/load.ts";
import type { ServiceConfig } from "../../config/schema.ts";
import { landingChecks } from "../../landing/doctor_check.ts";
import { BUILTIN_TRACKERS } from "../../trackers/builtin.ts";
import { trackerChecks } from "../../trackers/doctor_check.ts";
import { workspacePaths } from "../../workspace.ts";
import { worktreeEnvChecks } from "../../worktree_env/doctor_check.ts";
import { checkLeftWorktrees } from "../../doctor/worktrees.ts";
import { checkCheckout } from "../../doctor/checkout.ts";
import { printableItem } from "../../util/printable.ts";

/**
 * Every check of `service doctor` over the workspace at `root`, in the order they print. The
 * list is made here, at the edge: lib/doctor holds the general checks, each feature its own.
 * service.yaml is read once, by the config check; the checks that need it take what it read.
 */
export async function runDoctor(root: string): Promise<CheckResult[]> {
  const paths = workspacePaths(root);
  const results: CheckResult[] = [checkDeno(), ...await checkGit(root), await checkWritable(paths)];
  results.push(...await checkCheckout(root)); // the branch run lands on; uncommitted changes
  const { result, config, invalid } = await checkConfig(root);
  results.push(result);
  if (config) {
    results.push(...await checkRunSetup(root, config));
    results.push(...await checkAgentCli(root, config));
    results.push(...await isolationChecksOf(config)); // the probe `service run` makes
    const mcp = await checkMcpServers(config);
    if (mcp) results.push(mcp);
    results.push(...await trackerChecks(config, BUILTIN_TRACKERS)); // secrets, tokens, project
    results.push(...await worktreeEnvChecks(root, config, paths.portLeases)); // copies, links, setup
    results.push(...await landingChecks(root, config)); // pull requests: token, permissions, remote
  }
  // Without a service.yaml the server runs on the defaults; with an invalid one it does not start.
  if (!invalid) results.push(await checkPort(config, { root }));
  if (config) results.push(...tokenVariablesResult(config.auth.tokens)); // auth fails closed
  if (config) results.push(...agentAuthorityChecks(agentAuthorityFacts(config))); // what agents reach
  results.push(await checkPidFiles(paths));
  const rescued = await checkRescueRefs(root);
  if (rescued) results.push(rescued);
  const leftTrees = await checkLeftWorktrees(root); // cancelled with no run live, reaps cut short
  if (leftTrees) results.push(leftTrees);
  results.push(await checkTasks(paths));
  results.push(...await checkJournals(paths));
  results.push(...await auditCrossCheckResults(paths)); // journal vs audit chain
  return results;
}

/** What the agent-authority check reads of `config`. */
function agentAuthorityFacts(config: ServiceConfig): AgentAuthorityFacts {
  return {
    isolation: config.isolation,
    agentEnv: [
      ...config.agent_env,
      ...Object.values(config.roles).flatMap((r) => r.agent_env ?? []),
    ],
    tokens: config.auth.tokens,
  };
}

/** The isolation checks of `config` (lib/container/doctor_check.ts). */
function isolationChecksOf(config: ServiceConfig): Promise<CheckResult[]> {
  const adapter = configuredAdapter(config);
  return isolationChecks({
    isolation: config.isolation,
    settings: containerSettings(config),
    binary: adapter.binary,
    cli: adapter.container,
    endpoints: adapter.container?.endpoints,
    env: Deno.env.toObject(),
  });
}

/** `service doctor`: deno, git, the workspace, config, templates, port, agent CLIs, PID files. */
export const doctorCommand: Command = {
  name: "doctor",
  summary: "check deno, git, the workspace, config, templates, port, agent CLIs, PID files",
  help: `Usage: service doctor [--json] [--root DIR]

Checks: deno; git on PATH; the workspace is a git repository and .sdd/ is writable;
service.yaml is valid; every role has a template; the server port is free (or our server runs
there); the configured agent CLI passes the preflight \`service run\` makes (PATH lookup,
executable, API key or gateway token); under isolation: container, the probe \`service run\`
makes (runtime, image, limits, user, network, the CLI inside the image); the worktree environment
each role's agents get (what is copied and linked from the checkout, setup commands, ports; a
missing symlink source fails, a copy pattern that matches nothing warns) and the port leases; with
landing.mode pull_request, the token and each permission it lacks, and the remote; stale PID files
(a warning: run and stop remove them);
every run journal verifies. Each failed check prints its fix. Exit 0 when all pass, else 1.

Options:
  --json   print the results as JSON`,
  async run(args, ctx) {
    const { values } = parseArgs({ args, options: { json: { type: "boolean", default: false } } });
    const results = await runDoctor(ctx.root);
    const failed = results.filter((r) => !r.ok);
    if (values.json) {
      ctx.stdout(JSON.stringify({ ok: failed.length === 0, checks: results }, null, 2));
    } else {
      for (const r of results) {
        const mark = !r.ok
          ? colour.red("FAIL")
          : r.warning
          ? colour.yellow("warn")
          : colour.green("ok  ");
        // A detail may quote a host's, a tracker's or a runtime's answer: escaped, line by line.
        const [first, ...rest] = printableItem(`${r.name}: ${r.detail}`, "      ");
        ctx.stdout(`${mark}  ${first.slice(6)}`);
        rest.forEach((l) => ctx.stdout(l));
        if ((!r.ok || r.warning) && r.fix) {
          printableItem(`fix: ${r.fix}`, "      ").forEach((l) => ctx.stdout(l));
        }
      }
      ctx.stdout(
        failed.length === 0
          ? colour.green(`all ${results.length} checks passed`)
          : colour.red(`${failed.length} of ${results.length} checks failed`),
      );
    }
    return failed.length === 0 ? 0 : 1;
  },
};
