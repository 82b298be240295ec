/**
 * No container outlives its task: what an orchestrator that died left behind is found and ended.
 * A session's container is removed by the name its PID file records; containers that carry the
 * workspace's label but belong to no live session are removed by a sweep at the start of a run;
 * and the git work of every session directory left (lib/container/git_shadow.ts) is brought back,
 * so the worktree is the service's again before recovery reads it.
 */
import { join } from "node:path";
import { settleGitShadow, type SettleOutcome } from "./git_shadow.ts";
import { runtimeCall, runtimeEnvironment, type RuntimeName } from "./runtime.ts";
import { LABELS, sessionContainerDir, workspaceLabel } from "./session.ts";

/**
 * Resolves once the runtime commands still removing containers that died by themselves have
 * exited (lib/container/teardowns.ts): the end of a run or a worker waits here.
 */
export { teardownsDone } from "./teardowns.ts";

/** A container recorded in an agent's PID file. */
export interface RecordedContainer {
  /** The runtime's command. */
  runtime: string;
  name: string;
}

/** Stop (`graceMs` for it to go) and remove a container; true when it was there. */
export async function removeContainer(
  c: RecordedContainer,
  graceMs: number,
  env: Record<string, string> = Deno.env.toObject(),
): Promise<boolean> {
  const runtimeEnv = runtimeEnvironment(env);
  const stop = await runtimeCall(c.runtime, [
    "stop",
    "--time",
    String(Math.ceil(graceMs / 1000)),
    c.name,
  ], { env: runtimeEnv, timeoutMs: graceMs + 60_000 });
  const rm = await runtimeCall(c.runtime, ["rm", "--force", c.name], {
    env: runtimeEnv,
    timeoutMs: 60_000,
  });
  return stop.code === 0 || (rm.code === 0 && rm.stdout.trim() !== "");
}

/** Bring back the git work of one session's container (see lib/container/git_shadow.ts). */
export function settleSession(
  runtimeDir: string,
  sessionId: string,
): Promise<SettleOutcome | undefined> {
  return settleGitShadow(sessionContainerDir(runtimeDir, sessionId));
}

/** Sessions that left a container directory under `runtimeDir`. */
async function leftSessions(runtimeDir: string): Promise<string[]> {
  const out: string[] = [];
  try {
    for await (const e of Deno.readDir(join(runtimeDir, "containers"))) {
      if (e.isDirectory) out.push(e.name);
    }
  } catch { /* none */ }
  return out.sort();
}

/**
 * Bring back the git work of every session directory whose session is not in `live`; returns
 * the problems that left one in place.
 */
export async function settleLeftSessions(
  runtimeDir: string,
  live: ReadonlySet<string> = new Set(),
): Promise<string[]> {
  const problems: string[] = [];
  for (const session of await leftSessions(runtimeDir)) {
    if (live.has(session)) continue;
    const out = await settleSession(runtimeDir, session).catch((e) => ({
      problems: [(e as Error).message],
    }));
    for (const p of out?.problems ?? []) problems.push(`${session}: ${p}`);
  }
  return problems;
}

/** Remove every container of the workspace at `root` whose session is not in `live`. */
export async function sweepContainers(
  runtime: { name: RuntimeName; bin: string },
  root: string,
  live: ReadonlySet<string> = new Set(),
  env: Record<string, string> = Deno.env.toObject(),
): Promise<string[]> {
  const session = runtime.name === "docker"
    ? `{{.Label "${LABELS.session}"}}`
    : `{{index .Labels "${LABELS.session}"}}`;
  const r = await runtimeCall(runtime.bin, [
    "ps",
    "--all",
    "--filter",
    `label=${LABELS.workspace}=${workspaceLabel(root)}`,
    "--format",
    `{{.Names}} ${session}`,
  ], { env: runtimeEnvironment(env), timeoutMs: 30_000 });
  if (r.code !== 0) return [];
  const removed: string[] = [];
  for (const line of r.stdout.split("\n")) {
    const [name, session] = line.trim().split(/\s+/);
    if (!name || (session && live.has(session))) continue;
    await removeContainer({ runtime: runtime.bin, name }, 0, env);
    removed.push(name);
  }
  return removed;
}
