/**
 * The plan files runs were started with, as their journals recorded them: `run_started`'s
 * `plan_file` (a path relative to the workspace), or, in journals written before it existed,
 * its `plan` when that names a YAML file. Each is a rule the next run may obey again, so each is
 * a protected path (rules.ts). Only the first line of each journal is read.
 */
import { isValidId } from "../ids.ts";
import { readLine } from "../journal/event_reader.ts";
import { journalPath, type WorkspacePaths } from "../workspace.ts";

/** Longest first line read (a `run_started` lists the plan's steps). */
const MAX_FIRST_LINE = 16 * 1024 * 1024;

/** The first line of the file at `path` (empty when there is none). */
async function firstLine(path: string): Promise<string> {
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { read: true });
  } catch {
    return "";
  }
  try {
    const chunks: Uint8Array[] = [];
    let total = 0;
    const buf = new Uint8Array(64 * 1024);
    while (total < MAX_FIRST_LINE) {
      const n = await file.read(buf);
      if (n === null) break;
      const chunk = buf.slice(0, n);
      const eol = chunk.indexOf(10);
      chunks.push(eol < 0 ? chunk : chunk.subarray(0, eol));
      total += n;
      if (eol >= 0) break;
    }
    const all = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
    let at = 0;
    for (const c of chunks) {
      all.set(c, at);
      at += c.length;
    }
    return new TextDecoder().decode(all);
  } finally {
    file.close();
  }
}

/** The plan file a journal line's `run_started` row names, if any (a torn line names none). */
function planFileOf(line: string): string | undefined {
  const event = readLine(line);
  if (event?.type !== "run_started") return undefined;
  if (event.plan_file) return event.plan_file;
  const plan = event.plan;
  return plan !== undefined && /\.ya?ml$/i.test(plan) ? plan : undefined;
}

/** Every plan file the workspace's run journals name, sorted. */
export async function recordedPlanFiles(paths: WorkspacePaths): Promise<string[]> {
  const found = new Set<string>();
  let names: string[] = [];
  try {
    for await (const e of Deno.readDir(paths.runs)) {
      if (e.isDirectory && isValidId(e.name)) names.push(e.name);
    }
  } catch {
    names = [];
  }
  for (const runId of names) {
    const line = await firstLine(journalPath(paths, runId));
    if (!line) continue;
    const plan = planFileOf(line);
    if (plan) found.add(plan);
  }
  return [...found].sort();
}
