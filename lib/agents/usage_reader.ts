/**
 * Reads what a finished agent session spent: its log, read once into events by its adapter, plus
 * the CLI's own session record when the adapter keeps one (Codex names its model only there).
 * The formats stay in the adapters; the pricing is ./usage.ts's.
 */
import { join } from "node:path";
import type { UsageReport } from "../cost/report.ts";
import { logParserOf } from "./adapters/mod.ts";
import type { AgentAdapter, SessionRecordLocation } from "./adapters/types.ts";
import { usageOf } from "./usage.ts";

/** Dated directories searched at most (`YYYY/MM/DD`: today and the days before, newest first). */
const MAX_DAY_DIRS = 3;

async function entries(dir: string): Promise<Deno.DirEntry[]> {
  try {
    return await Array.fromAsync(Deno.readDir(dir));
  } catch {
    return [];
  }
}

/**
 * The record file under `loc.dir`: its newest dated directories are searched first, and only a
 * few of them, so a long history of sessions costs nothing.
 */
export async function findSessionRecord(loc: SessionRecordLocation): Promise<string | undefined> {
  let dirs = [loc.dir];
  for (let depth = 0; depth < 4; depth++) {
    for (const dir of dirs) {
      const hit = (await entries(dir)).find((e) => e.isFile && e.name.endsWith(loc.suffix));
      if (hit) return join(dir, hit.name);
    }
    const next: string[] = [];
    for (const dir of dirs) {
      const subs = (await entries(dir)).filter((e) => e.isDirectory).map((e) => e.name).sort()
        .reverse().slice(0, MAX_DAY_DIRS);
      next.push(...subs.map((s) => join(dir, s)));
    }
    dirs = next.slice(0, MAX_DAY_DIRS * 4);
  }
  return undefined;
}

/**
 * The usage of the session whose log is at `logPath` (undefined when it is unreadable or names
 * none); the CLI's own record is looked up under this process's environment, which the agent
 * inherited.
 */
export async function readSessionUsage(
  adapter: AgentAdapter,
  logPath: string,
): Promise<UsageReport | undefined> {
  let text: string;
  try {
    text = await Deno.readTextFile(logPath);
  } catch {
    return undefined;
  }
  return await readAgentUsage(adapter, text, Deno.env.toObject());
}

/** The usage of the session whose log is `logText`; `env` is the environment the agent had. */
export async function readAgentUsage(
  adapter: AgentAdapter,
  logText: string,
  env: Readonly<Record<string, string>>,
): Promise<UsageReport | undefined> {
  const events = logParserOf(adapter)(logText);
  const loc = adapter.sessionRecord?.(events, env);
  const path = loc ? await findSessionRecord(loc) : undefined;
  let record: string | undefined;
  if (path) record = await Deno.readTextFile(path).catch(() => undefined);
  if (adapter.parseUsage) return adapter.parseUsage(logText, record);
  const recorded = record === undefined ? undefined : adapter.parseSessionRecord?.(record);
  return usageOf(events, recorded);
}
