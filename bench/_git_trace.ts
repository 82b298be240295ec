/**
 * Counting the git processes a benchmark's code starts, through git's own trace
 * (`GIT_TRACE2_EVENT`, inherited by every git spawned while it is set): each process writes a few
 * JSON lines — its argv, its command's name, its own run time at exit — keyed by its session id.
 * That costs a few appended lines per process, nothing like the process itself.
 */
import { join } from "node:path";
import { removeBenchDir } from "./_bench_dir.ts";

/** One git process as its trace tells it. */
export interface TracedGit {
  argv: string[];
  name: string;
  /** Its run time as git measured it (ms). */
  ms: number;
}

/** Start tracing into a temporary file; `stop()` ends it and returns the processes seen. */
export async function traceGit(): Promise<{ stop(): Promise<TracedGit[]> }> {
  const dir = await Deno.makeTempDir({ prefix: "bench-git-trace-" });
  const path = join(dir, "trace2.jsonl");
  const before = Deno.env.get("GIT_TRACE2_EVENT");
  Deno.env.set("GIT_TRACE2_EVENT", path);
  return {
    async stop() {
      if (before === undefined) Deno.env.delete("GIT_TRACE2_EVENT");
      else Deno.env.set("GIT_TRACE2_EVENT", before);
      const text = await Deno.readTextFile(path).catch(() => "");
      await removeBenchDir(dir);
      return parseTrace(text);
    },
  };
}

/** The processes of a `GIT_TRACE2_EVENT` text, in the order they started. Pure. */
export function parseTrace(text: string): TracedGit[] {
  const bySid = new Map<string, TracedGit>();
  for (const line of text.split("\n")) {
    if (!line.startsWith("{")) continue;
    let event: Record<string, unknown>;
    try {
      event = JSON.parse(line);
    } catch {
      continue; // a line torn by a process that was killed
    }
    const sid = String(event.sid);
    const entry = bySid.get(sid) ?? { argv: [], name: "?", ms: 0 };
    bySid.set(sid, entry);
    if (event.event === "start") entry.argv = event.argv as string[];
    if (event.event === "cmd_name") entry.name = String(event.name);
    if (event.event === "atexit") entry.ms = Number(event.t_abs) * 1000;
  }
  return [...bySid.values()];
}

/** One line: how many git processes per `unit`, their own run time, the commands by frequency. */
export function formatGitCount(processes: TracedGit[], per: number, unit: string): string {
  const byName = new Map<string, number>();
  for (const p of processes) byName.set(p.name, (byName.get(p.name) ?? 0) + 1);
  const ms = processes.reduce((sum, p) => sum + p.ms, 0);
  const rows = [...byName].sort((a, b) => b[1] - a[1]);
  return `git processes: ${processes.length} (${
    (processes.length / per).toFixed(1)
  } per ${unit}; ` +
    `their own run time ${(ms / per).toFixed(0)} ms per ${unit}): ` +
    rows.map(([name, n]) => `${name} ${(n / per).toFixed(2)}`).join(", ");
}
