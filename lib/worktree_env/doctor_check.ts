/**
 * `service doctor` on worktree environments (DESIGN.md §13): the environment each role's agent
 * worktrees would get — what is copied and linked from the checkout as it is now, the setup and
 * teardown commands, the ports — and whether its sources are there: a `symlink` entry that names
 * nothing fails; a `copy` pattern that matches nothing, a setup command not on PATH, a port range
 * too small for `max_agents` are warnings. The port leases of the workspace are listed, with
 * those a killed orchestrator left (the next run takes them back).
 */
import type { CheckResult } from "../check_result.ts";
import type { ServiceConfig } from "../config/schema.ts";
import { readLeases } from "./ports.ts";
import { copySources, linkSources, readWorktreeInclude, WORKTREE_INCLUDE } from "./select.ts";
import { worktreeEnvFor, type WorktreeEnvSpec } from "./spec.ts";

/** Copies past this many files belong in `symlink` or `setup`. */
const MANY_COPIES = 1000;

/** Shell words that are not programs on PATH. */
const SHELL_WORDS = new Set([
  ".",
  ":",
  "[",
  "cd",
  "echo",
  "exec",
  "exit",
  "export",
  "false",
  "for",
  "if",
  "printf",
  "set",
  "source",
  "test",
  "true",
  "umask",
  "unset",
  "while",
]);

/** The program a setup command starts, when its first word names one plainly. */
function programOf(command: string): string | undefined {
  const first = command.trim().split(/\s+/)[0] ?? "";
  return /^[A-Za-z0-9._+-]+$/.test(first) && !SHELL_WORDS.has(first) ? first : undefined;
}

/** True when `name` is an executable file in a directory of PATH. */
function onPath(name: string, path: string): boolean {
  return path.split(":").some((dir) => {
    try {
      return Deno.statSync(`${dir || "."}/${name}`).isFile;
    } catch {
      return false;
    }
  });
}

/** A list for a detail line. */
function few(items: readonly string[], n = 6): string {
  const shown = items.slice(0, n).join(", ");
  return items.length > n ? `${shown} … (${items.length})` : shown;
}

/** The check of one environment (the top level's, or a role's that adds to it). */
async function checkOne(
  root: string,
  name: string,
  spec: WorktreeEnvSpec,
  include: string[],
  maxAgents: number,
): Promise<CheckResult> {
  const links = await linkSources(root, spec.symlink);
  const copy = await copySources(root, [...spec.copy, ...include], { linked: links.found });
  const empty = [];
  for (const pattern of [...spec.copy, ...include]) {
    if (pattern.startsWith("!")) continue;
    if ((await copySources(root, [pattern], { linked: links.found })).length === 0) {
      empty.push(pattern);
    }
  }
  const PATH = Deno.env.get("PATH") ?? "";
  const notOnPath = [...spec.setup, ...spec.teardown].map(programOf)
    .filter((p): p is string => p !== undefined && !onPath(p, PATH));
  const rangeSize = spec.port_range[1] - spec.port_range[0] + 1;
  const detail = [
    `copies ${copy.length ? `${few(copy)} (${copy.length} file(s))` : "nothing"}`,
    `links ${links.found.length ? few(links.found) : "nothing"}`,
    `setup: ${spec.setup.length ? spec.setup.join(" && ") : "none"}` +
    (spec.setup.length ? ` (limit ${spec.setup_timeout_s} s)` : ""),
    ...(spec.teardown.length ? [`teardown: ${spec.teardown.join(" && ")}`] : []),
    `ports: ${
      spec.ports ? `${spec.ports} of [${spec.port_range[0]}, ${spec.port_range[1]}]` : "none"
    }`,
    `build caches ${spec.default_ignores ? "ignored" : "NOT ignored (default_ignores: false)"}`,
  ].join("; ");
  const problems: string[] = [];
  const fixes: string[] = [];
  if (links.missing.length > 0) {
    problems.push(`symlink source(s) missing in the checkout: ${links.missing.join(", ")}`);
    fixes.push(
      "create them in the checkout (for example `npm ci` for node_modules, `python3 -m venv .venv`) " +
        "or remove them from worktree.symlink",
    );
  }
  const warnings: string[] = [];
  if (links.tracked.length > 0) {
    warnings.push(`not linked, the repository tracks them: ${links.tracked.join(", ")}`);
  }
  if (empty.length > 0) {
    warnings.push(`copy pattern(s) matching no untracked file: ${empty.join(", ")}`);
    fixes.push("create the files in the checkout, or drop the patterns");
  }
  if (copy.length > MANY_COPIES) {
    warnings.push(`${copy.length} files are copied into every worktree`);
    fixes.push("link big directories (worktree.symlink) or build them in worktree.setup");
  }
  if (notOnPath.length > 0) {
    warnings.push(`not on PATH: ${[...new Set(notOnPath)].join(", ")}`);
    fixes.push("install them, or fix the commands in worktree.setup/teardown");
  }
  if (spec.ports > 0 && rangeSize < spec.ports * maxAgents) {
    warnings.push(
      `port_range holds ${rangeSize} port(s), fewer than ports × max_agents = ` +
        `${spec.ports * maxAgents}`,
    );
    fixes.push("widen worktree.port_range");
  }
  const said = [...problems, ...warnings];
  return {
    name,
    ok: problems.length === 0,
    ...(problems.length === 0 && warnings.length > 0 ? { warning: true } : {}),
    detail: said.length ? `${detail}. ${said.join("; ")}` : detail,
    ...(fixes.length ? { fix: fixes.join("; ") } : {}),
  };
}

/**
 * The worktree environment checks: one for the top level and one per role whose own `worktree`
 * adds to it, then the port leases when there are any. Nothing without any configuration, a
 * `.worktreeinclude` or leases.
 */
export async function worktreeEnvChecks(
  root: string,
  config: ServiceConfig,
  portsDir: string,
): Promise<CheckResult[]> {
  const include = await readWorktreeInclude(root);
  const roles = Object.entries(config.roles).filter(([, r]) => r.worktree !== undefined);
  const out: CheckResult[] = [];
  const maxAgents = config.max_agents ?? 4;
  if (config.worktree !== undefined || include.length > 0 || roles.length > 0) {
    const name = `worktree environment${include.length ? ` (with ${WORKTREE_INCLUDE})` : ""}`;
    // A role without its own block gets the top level's: its spec is the top level's.
    const top = worktreeEnvFor({ worktree: config.worktree, roles: {} }, "");
    out.push(await checkOne(root, name, top, include, maxAgents));
    for (const [role] of roles) {
      const spec = worktreeEnvFor(config, role);
      const cap = config.roles[role].max_agents ?? maxAgents;
      out.push(await checkOne(root, `worktree environment of role ${role}`, spec, include, cap));
    }
  }
  const leases = await readLeases(portsDir);
  if (leases.length > 0) {
    const live = leases.filter((l) => !l.stale).map((l) =>
      `${l.lease!.port} (${l.lease!.session_id})`
    );
    const stale = leases.filter((l) => l.stale).map((l) =>
      l.lease ? `${l.lease.port} (${l.lease.session_id})` : l.file
    );
    out.push({
      name: "port leases",
      ok: true,
      ...(stale.length ? { warning: true } : {}),
      detail: [
        live.length ? `leased to live sessions: ${few(live)}` : "",
        stale.length ? `left by an orchestrator that is gone: ${few(stale)}` : "",
      ].filter((x) => x !== "").join("; "),
      ...(stale.length
        ? { fix: "nothing to do: the next `service run` takes them back (or delete the files)" }
        : {}),
    });
  }
  return out;
}
