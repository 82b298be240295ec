/**
 * The checks of `service doctor`: each passes or says what is wrong and how to fix it.
 */
import { join } from "node:path";
import { configPath, configuredAdapter, loadConfig } from "../config/load.ts";
import type { ServiceConfig } from "../config/schema.ts";
import { loadServerSettings } from "../config/server_config.ts";
import { headlessProblem } from "../agents/preflight.ts";
import { readPidFiles } from "../agents/pid_files.ts";
import { listRescueRefs, type RescueRef } from "../worktrees/reap.ts";
import { verifyJournalText } from "../journal/verify.ts";
import { loadRoleTemplate } from "../roles/templates.ts";
import { type WorkspacePaths, workspacePaths } from "../workspace.ts";
import { findOnPath } from "./path_lookup.ts";
import { settingProblems, templateProblems } from "../orchestrator/run_checks.ts";
import { loadTaskSpecs } from "../tasks/persist.ts";

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

async function run(
  cmd: string,
  args: string[],
  cwd?: string,
): Promise<{ ok: boolean; out: string }> {
  try {
    const o = await new Deno.Command(cmd, { args, cwd, stdout: "piped", stderr: "piped" }).output();
    const text = new TextDecoder().decode(o.success ? o.stdout : o.stderr).trim();
    return { ok: o.success, out: text };
  } catch (e) {
    return { ok: false, out: (e as Error).message };
  }
}

async function checkGit(root: string): Promise<CheckResult[]> {
  const git = await run("git", ["--version"]);
  if (!git.ok) {
    return [{
      name: "git",
      ok: false,
      detail: "git not found in PATH",
      fix: "install git (https://git-scm.com) or add it to PATH",
    }];
  }
  const top = await run("git", ["rev-parse", "--show-toplevel"], root);
  return [
    { name: "git", ok: true, detail: git.out },
    top.ok ? { name: "workspace", ok: true, detail: `git repository at ${top.out}` } : {
      name: "workspace",
      ok: false,
      detail: `${root} is not inside a git repository`,
      fix: `run \`git init\` in ${root}, or pass --root <your repository>`,
    },
  ];
}

async function checkWritable(paths: WorkspacePaths): Promise<CheckResult> {
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

async function checkConfig(root: string): Promise<{ result: CheckResult; config?: ServiceConfig }> {
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
    const err = e as Error;
    return {
      result: {
        name: "config",
        ok: false,
        detail: `${err.name}: ${err.message}`,
        fix: "edit service.yaml as the message says",
      },
    };
  }
}

// The same checks `service run` makes before `run_started` (lib/orchestrator/run_checks.ts).
async function checkRunSetup(root: string, config: ServiceConfig): Promise<CheckResult[]> {
  const roles = Object.keys(config.roles);
  const problems = [
    ...settingProblems(config),
    ...await templateProblems(root, roles),
  ];
  const out: CheckResult[] = problems.map((p) => ({
    name: p.subject,
    ok: false,
    detail: p.problem,
    fix: p.fix,
  }));
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

// Tasks that need an operator: FAILED ones, and the BLOCKED ones waiting on them.
async function checkTasks(paths: WorkspacePaths): Promise<CheckResult> {
  const { tasks } = await loadTaskSpecs(paths);
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
    fix: `\`service retry ${failed.map((t) => t.id).join(" ")}\` tries again, or ` +
      `\`service cancel ${failed.map((t) => t.id).join(" ")}\` gives up (dependents then start); ` +
      "then `service run`",
  };
}

async function checkPort(root: string): Promise<CheckResult> {
  let settings;
  try {
    settings = await loadServerSettings(root);
  } catch (e) {
    return {
      name: "port",
      ok: false,
      detail: (e as Error).message,
      fix: "fix SERVICE_PORT or port in service.yaml",
    };
  }
  const where = `${settings.host}:${settings.port}`;
  try {
    const listener = Deno.listen({ hostname: settings.host, port: settings.port });
    listener.close();
    return { name: "port", ok: true, detail: `${where} is free for \`service serve\`` };
  } catch (e) {
    if (!(e instanceof Deno.errors.AddrInUse)) {
      return {
        name: "port",
        ok: false,
        detail: `cannot bind ${where}: ${(e as Error).message}`,
        fix: "set host/port in service.yaml or SERVICE_PORT",
      };
    }
  }
  try {
    const res = await fetch(`http://${settings.host}:${settings.port}/status`, {
      signal: AbortSignal.timeout(2000),
    });
    const body = await res.json().catch(() => ({}));
    if (body?.service === "service") {
      return { name: "port", ok: true, detail: `the task server is running on ${where}` };
    }
  } catch {
    // not ours
  }
  return {
    name: "port",
    ok: false,
    detail: `${where} is in use by another program`,
    fix: "stop that program, or choose another port with SERVICE_PORT or `port:` in service.yaml",
  };
}

async function checkAgentCli(config: ServiceConfig): Promise<CheckResult[]> {
  const adapter = configuredAdapter(config);
  const out: CheckResult[] = [];
  const found = adapter.binary ? await findOnPath(adapter.binary) : undefined;
  out.push(
    found
      ? {
        name: `agent cli ${adapter.name}`,
        ok: true,
        detail: `${adapter.binary} found at ${found}`,
      }
      : {
        name: `agent cli ${adapter.name}`,
        ok: false,
        detail: `RuntimeError: binary not found in PATH: ${
          adapter.binary || "(cli_command is empty)"
        }`,
        fix: `install ${adapter.binary} or add its directory to PATH`,
      },
  );
  if (adapter.apiKeyEnv.length > 0) {
    const set = adapter.apiKeyEnv.filter((n) => Deno.env.get(n));
    out.push(
      set.length ? { name: "api key", ok: true, detail: `${set.join(", ")} set` } : {
        name: "api key",
        ok: false,
        detail: `API key not set: none of ${adapter.apiKeyEnv.join(", ")} is set`,
        fix: `export ${adapter.apiKeyEnv[0]}=<your key> before \`service run\``,
      },
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

async function checkPidFiles(paths: WorkspacePaths): Promise<CheckResult> {
  const agents = await readPidFiles(paths);
  const stale = agents.filter((a) => !a.alive);
  if (stale.length === 0) {
    return {
      name: "pid files",
      ok: true,
      detail: `${agents.length} agent(s) running, no stale PID files`,
    };
  }
  return {
    name: "pid files",
    ok: false,
    detail: `${stale.length} stale PID file(s): ${
      stale.map((a) => `${a.session_id} (pid ${a.pid ?? "?"})`).join(", ")
    }`,
    fix: `delete ${
      stale.map((a) => a.file).join(" ")
    } (they are recreated on spawn; \`service stop\` removes them)`,
  };
}

async function checkJournals(paths: WorkspacePaths): Promise<CheckResult[]> {
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

async function checkRescueRefs(root: string): Promise<CheckResult | undefined> {
  let refs: RescueRef[];
  try {
    refs = await listRescueRefs(root);
  } catch {
    return undefined; // not a git repository: reported by the git check
  }
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

/** Run every check over the workspace at `root`. */
export async function runDoctor(root: string): Promise<CheckResult[]> {
  const paths = workspacePaths(root);
  const results: CheckResult[] = [
    { name: "deno", ok: true, detail: `deno ${Deno.version.deno} (v8 ${Deno.version.v8})` },
  ];
  results.push(...await checkGit(root));
  results.push(await checkWritable(paths));
  const { result, config } = await checkConfig(root);
  results.push(result);
  if (config) {
    results.push(...await checkRunSetup(root, config));
    results.push(...await checkAgentCli(config));
  }
  results.push(await checkPort(root));
  results.push(await checkPidFiles(paths));
  const rescued = await checkRescueRefs(root);
  if (rescued) results.push(rescued);
  results.push(await checkTasks(paths));
  results.push(...await checkJournals(paths));
  return results;
}
