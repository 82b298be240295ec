/**
 * The checks of `service doctor` that belong to no one feature: the installation, the workspace,
 * the configuration, the agent CLI, agents, tasks and journals (the port: port.ts). Each passes or says
 * what is wrong and how to fix it. A feature's own check sits in its folder
 * (lib/<feature>/doctor_check.ts); the `doctor` command lists them all
 * (lib/cli/commands/doctor.ts).
 */
import { join } from "node:path";
import type { CheckResult } from "../check_result.ts";
import { git } from "../git/git.ts";
import { configPath, configuredAdapter, loadConfig } from "../config/load.ts";
import { ValidationError } from "../config/errors.ts";
import type { ServiceConfig } from "../config/schema.ts";
import { headlessProblem } from "../agents/preflight.ts";
import { readPidFiles } from "../agents/pid_files.ts";
import { listRescueRefs, type RescueRef } from "../worktrees/reap.ts";
import { SETUP_FAILED } from "../worktree_env/spec.ts";
import { verifyJournalText } from "../journal/verify.ts";
import { loadRoleTemplate } from "../roles/templates.ts";
import { type WorkspacePaths, workspacePaths } from "../workspace.ts";
import { heldByHead, landingFacts, unmergedRescues } from "./rescued.ts";
import { keyFix, missingApiKey, preflight } from "../agents/preflight.ts";
import { RuntimeError } from "../agents/errors.ts";
import { settingProblems, templateProblems } from "../runner/run_checks.ts";
import { gateProgramProblems } from "../runner/gate_programs.ts";
import { ignoredInstalls, ignoredInstallWarning } from "../runner/ignored_installs.ts";
import { loadTaskSpecs, unreadableSpecs } from "../tasks/persist.ts";

/** The runtime this service runs on. */
export function checkDeno(): CheckResult {
  return { name: "deno", ok: true, detail: `deno ${Deno.version.deno} (v8 ${Deno.version.v8})` };
}

async function runGit(args: string[], cwd: string): Promise<{ ok: boolean; out: string }> {
  try {
    const o = await git(args, { cwd, allowFailure: true });
    return { ok: o.code === 0, out: (o.code === 0 ? o.stdout : o.stderr).trim() };
  } catch (e) {
    return { ok: false, out: (e as Error).message };
  }
}

/** git on PATH, and the workspace is a git repository. */
export async function checkGit(root: string): Promise<CheckResult[]> {
  const version = await runGit(["--version"], root);
  if (!version.ok) {
    return [{
      name: "git",
      ok: false,
      detail: "git not found in PATH",
      fix: "install git (https://git-scm.com) or add it to PATH",
    }];
  }
  const top = await runGit(["rev-parse", "--show-toplevel"], root);
  return [
    { name: "git", ok: true, detail: version.out },
    top.ok ? { name: "workspace", ok: true, detail: `git repository at ${top.out}` } : {
      name: "workspace",
      ok: false,
      detail: `${root} is not inside a git repository`,
      fix: `run \`git init\` in ${root}, or pass --root <your repository>`,
    },
  ];
}

/** `.sdd/` can be written. */
export async function checkWritable(paths: WorkspacePaths): Promise<CheckResult> {
  try {
    await Deno.mkdir(paths.runtime, { recursive: true });
    const probe = join(paths.runtime, `.doctor-${Deno.pid}`);
    await Deno.writeTextFile(probe, "ok");
    await Deno.remove(probe);
    return { name: "state directory", ok: true, detail: `${paths.sdd} is writable` };
  } catch (e) {
    return {
      name: "state directory",
      ok: false,
      detail: `RuntimeError: Permission denied: cannot write ${paths.sdd}: ${(e as Error).message}`,
      fix: `make ${paths.sdd} writable by this user (chown/chmod)`,
    };
  }
}

/** The config check, and what it read. */
export interface ConfigCheck {
  result: CheckResult;
  /** The validated configuration (undefined when service.yaml is missing or invalid). */
  config?: ServiceConfig;
  /** service.yaml exists but does not validate: nothing else can be read from it. */
  invalid?: boolean;
}

/** service.yaml exists and validates (read once; the other checks take what it read). */
export async function checkConfig(root: string): Promise<ConfigCheck> {
  try {
    const config = await loadConfig(root);
    if (!config) {
      return {
        result: {
          name: "config",
          ok: false,
          detail: `${configPath(root)} does not exist`,
          fix: "create it with at least:\n    cli: claude\n    roles:\n      backend: {}",
        },
      };
    }
    return {
      result: {
        name: "config",
        ok: true,
        detail: `${configPath(root)} is valid (cli: ${config.cli})`,
      },
      config,
    };
  } catch (e) {
    return { result: { name: "config", ok: false, ...configProblem(e as Error) }, invalid: true };
  }
}

/** What is wrong with service.yaml, and the error's own fix when it has one. */
function configProblem(err: Error): { detail: string; fix: string } {
  const fallback = "edit service.yaml as the message says";
  if (err instanceof ValidationError) {
    const { file, position, path, problem } = err;
    return {
      detail: `${err.name}: ${file}:${position.line}:${position.col}: ${path ? `${path}: ` : ""}` +
        problem,
      fix: err.fix ?? fallback,
    };
  }
  const fix = (err as Error & { fix?: string }).fix;
  return { detail: `${err.name}: ${err.message}`, fix: fix || fallback };
}

/** The same checks `service run` makes before `run_started` (lib/runner/run_checks.ts). */
export async function checkRunSetup(root: string, config: ServiceConfig): Promise<CheckResult[]> {
  const roles = Object.keys(config.roles);
  const problems = [
    ...settingProblems(config),
    ...await templateProblems(root, roles),
    ...await gateProgramProblems(root, config, roles),
  ];
  const out: CheckResult[] = problems.map((p) => ({
    name: p.subject,
    ok: false,
    detail: p.problem,
    fix: p.fix,
  }));
  for (const install of await ignoredInstalls(root, config, roles)) {
    const { problem, fix } = ignoredInstallWarning(install);
    out.push({
      name: `dependencies ${install.dir}/`,
      ok: true,
      warning: true,
      detail: problem,
      fix,
    });
  }
  for (const role of roles) {
    if (problems.some((p) => p.subject === `role ${role}`)) continue;
    const t = await loadRoleTemplate(root, role);
    out.push({
      name: `role ${role}`,
      ok: true,
      detail: `template ${t.builtin ? "built-in" : t.dir}`,
    });
  }
  return out;
}

/** Tasks that need an operator: FAILED ones, and the BLOCKED ones waiting on them. */
export async function checkTasks(paths: WorkspacePaths): Promise<CheckResult> {
  const loaded = await loadTaskSpecs(paths);
  const { tasks } = loaded;
  const unreadable = unreadableSpecs(loaded);
  if (unreadable.length > 0) {
    // What `service run` refuses (lib/runner/unreadable_specs.ts), said the same way.
    return {
      name: "tasks",
      ok: false,
      detail: `${unreadable.length} task spec file(s) cannot be read: ` +
        unreadable.join("; "),
      fix: "restore each file from a backup, or move it out of .sdd/backlog/ to drop its task; " +
        "then `service run`",
    };
  }
  const failed = tasks.filter((t) => t.status === "FAILED");
  if (failed.length === 0) {
    return { name: "tasks", ok: true, detail: `${tasks.length} task(s), none FAILED` };
  }
  const ids = new Set(failed.map((t) => t.id));
  const blocked = tasks.filter((t) =>
    t.status === "BLOCKED" && t.depends_on.some((d) => ids.has(d))
  );
  const list = failed.map((t) => `${t.id} (${t.summary ?? "no reason given"})`).join("; ");
  return {
    name: "tasks",
    ok: false,
    detail: `FAILED: ${list}` +
      (blocked.length ? `; blocked on them: ${blocked.map((t) => t.id).join(", ")}` : ""),
    fix: setupAdvice(failed) +
      `\`service retry ${failed.map((t) => t.id).join(" ")}\` tries again, or ` +
      `\`service cancel ${failed.map((t) => t.id).join(" ")}\` gives up (dependents then start); ` +
      "then `service run`",
  };
}

/**
 * What to do first when a task failed in its worktree setup (DESIGN.md §13): the environment is
 * at fault, not the agent, so a retry alone would fail the same way.
 */
function setupAdvice(failed: { id: string; summary: string | null }[]): string {
  const ids = failed.filter((t) => t.summary?.startsWith(`${SETUP_FAILED}:`)).map((t) => t.id);
  if (ids.length === 0) return "";
  return `${ids.join(", ")} failed in the worktree setup, not in the agent: its output is in ` +
    "the session log (.sdd/runs/<run>/logs/, or the board's What happened); fix worktree.setup " +
    "in service.yaml, or what it needs in the checkout (the worktree environment check above " +
    "shows what each worktree gets); then ";
}

/**
 * The very preflight `service run` makes (same PATH lookup, executable bit, key rule), so doctor
 * passes exactly what run accepts.
 */
export async function checkAgentCli(root: string, config: ServiceConfig): Promise<CheckResult[]> {
  const adapter = configuredAdapter(config);
  const name = `agent cli ${adapter.name}`;
  if (config.max_agents === 0) {
    // Every agent runs on a remote worker: its CLI and key are checked there, at registration.
    return [{
      name,
      ok: true,
      detail: "max_agents: 0: agents run on remote workers, which check their CLI and provider " +
        "key when they register (`service workers` lists what each lacks)",
    }];
  }
  const env = Deno.env.toObject();
  const keyProblem = missingApiKey(adapter, env);
  const out: CheckResult[] = [];
  if (!adapter.binary) {
    out.push({
      name,
      ok: false,
      detail: "RuntimeError: binary not found in PATH: (cli_command is empty)",
      fix: "set cli_command in service.yaml to the agent's command line",
    });
  } else if (config.isolation === "container") {
    // Its CLI is in the image, not on the host: the isolation checks look it up there.
    out.push({ name, ok: true, detail: `${adapter.binary}: looked up inside the agent image` });
  } else {
    try {
      const found = await preflight(adapter, { env, cwd: root, warn: () => {} });
      out.push({ name, ok: true, detail: `${adapter.binary} found at ${found.binaryPath}` });
    } catch (e) {
      if (!(e instanceof RuntimeError)) throw e;
      out.push(
        e.message === keyProblem
          ? { name, ok: true, detail: `${adapter.binary} found on PATH` }
          : { name, ok: false, detail: `RuntimeError: ${e.message}`, fix: e.fix },
      );
    }
  }
  if (adapter.apiKeyEnv.length > 0) {
    const set = adapter.apiKeyEnv.filter((n) => env[n]);
    out.push(
      keyProblem === undefined
        ? {
          name: "api key",
          ok: true,
          detail: set.length ? `${set.join(", ")} set` : "gateway endpoint and token set",
        }
        : { name: "api key", ok: false, detail: keyProblem, fix: keyFix(adapter) },
    );
  }
  // What the CLI needs to start headless beyond a key: auth selection, endpoint, trust.
  if (adapter.headlessProblem) {
    const problem = headlessProblem(adapter, Deno.env.toObject());
    out.push(
      problem
        ? { name: "headless start", ok: false, detail: problem.problem, fix: problem.fix }
        : { name: "headless start", ok: true, detail: `${adapter.name} can start headless` },
    );
  }
  return out;
}

/**
 * Agents' PID files. `service run` ends what is left of these agents and removes their files
 * before it starts, so stale files are a warning, not a failure.
 */
export async function checkPidFiles(paths: WorkspacePaths): Promise<CheckResult> {
  const agents = await readPidFiles(paths);
  const stale = agents.filter((a) => !a.alive);
  const live = agents.length - stale.length;
  if (stale.length === 0) {
    return {
      name: "pid files",
      ok: true,
      detail: `${live} agent(s) running, no stale PID files`,
    };
  }
  return {
    name: "pid files",
    ok: true,
    warning: true,
    detail: `${stale.length} stale PID file(s): ${
      stale.map((a) => `${a.session_id} (${a.problem ?? `pid ${a.pid} is gone`})`).join(", ")
    }`,
    fix: `\`service run\` or \`service stop\` removes them; or delete ${
      stale.map((a) => a.file).join(" ")
    }`,
  };
}

/** Every run journal verifies; one failed check per journal that does not. */
export async function checkJournals(paths: WorkspacePaths): Promise<CheckResult[]> {
  const out: CheckResult[] = [];
  let entries: Deno.DirEntry[] = [];
  try {
    entries = await Array.fromAsync(Deno.readDir(paths.runs));
  } catch {
    return out;
  }
  for (
    const e of entries.filter((e) => e.isDirectory).sort((a, b) => a.name.localeCompare(b.name))
  ) {
    const file = join(paths.runs, e.name, "journal.jsonl");
    let text: string;
    try {
      text = await Deno.readTextFile(file);
    } catch {
      continue;
    }
    const report = verifyJournalText(text);
    if (report.verified) continue;
    const f = report.firstFault!;
    out.push({
      name: `journal ${e.name}`,
      ok: false,
      detail: `${file} does not verify at line ${f.seq + 1} (${f.kind}): ${f.message}`,
      fix: "run journals are never repaired automatically: the board shows JOURNAL TAMPERED. " +
        "Keep the file as evidence; restore it from a backup or start a new run",
    });
  }
  return out;
}

/**
 * Work agents left unmerged (refs/service/rescue/*), a warning; undefined when there is none.
 * Work the checked-out branch holds, and work of a task that merged since, is not listed.
 */
export async function checkRescueRefs(root: string): Promise<CheckResult | undefined> {
  let refs: RescueRef[];
  try {
    refs = await listRescueRefs(root);
  } catch {
    return undefined; // not a git repository: reported by the git check
  }
  if (refs.length === 0) return undefined;
  refs = unmergedRescues(refs, {
    ...await landingFacts(workspacePaths(root)),
    heldByBranch: await heldByHead(root, refs),
  });
  if (refs.length === 0) return undefined;
  return {
    name: "rescued work",
    ok: true,
    warning: true,
    detail: `${refs.length} agent session(s) left work that was not merged: ${
      refs.map((r) => `${r.ref} (${r.commit.slice(0, 10)})`).join(", ")
    }`,
    fix: "inspect with `git log <ref>`, merge what you want with `git merge <ref>`, then " +
      "`git update-ref -d <ref>`",
  };
}
