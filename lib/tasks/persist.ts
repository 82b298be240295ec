/**
 * Task state on disk. The YAML specs under `.sdd/backlog/` are authoritative, one file per task
 * in the directory of its status group:
 *
 * | directory | statuses |
 * |---|---|
 * | `open/` | OPEN, BLOCKED (waiting to be claimed) |
 * | `claimed/` | CLAIMED, IN_PROGRESS, ORPHANED (held, or held by an agent that vanished) |
 * | `closed/` | DONE, CLOSED, FAILED, CANCELLED (finished) |
 *
 * A move writes the new file atomically first, then takes the old one away (renamed to a temporary
 * name, kept for reuse: ./spec_files.ts); a crash in between leaves two copies and the higher
 * `revision` wins on load. `.sdd/runtime/task-backlog.json`
 * is an export of every task for external workers, rebuilt from the specs.
 */
import { dirname, join } from "node:path";
import { parse as parseYaml } from "yaml";
import { isValidId } from "../ids.ts";
import { printable } from "../util/printable.ts";
import type { WorkspacePaths } from "../workspace.ts";
import { writeFileAtomic, writeFileAtomicChunks } from "../util/atomic_write.ts";
import type { TaskStatus } from "./lifecycle.ts";
import type { SpecFiles } from "./spec_files.ts";
import { specYaml } from "./spec_yaml.ts";
import { StoredTaskSchema, type Task } from "./task.ts";

/** The backlog directories. */
export const BUCKETS = ["open", "claimed", "closed"] as const;
/** A backlog directory name. */
export type Bucket = typeof BUCKETS[number];

/** The backlog directory of a status. */
export function bucketOf(status: TaskStatus): Bucket {
  switch (status) {
    case "OPEN":
    case "BLOCKED":
      return "open";
    case "CLAIMED":
    case "IN_PROGRESS":
    case "ORPHANED":
      return "claimed";
    default:
      return "closed";
  }
}

/** `.sdd/backlog/<bucket>/<id>.yaml` (the id must already be valid). */
export function taskFile(paths: WorkspacePaths, bucket: Bucket, id: string): string {
  return join(paths.backlog, bucket, `${id}.yaml`);
}

/** `.sdd/runtime/task-backlog.json`. */
export function backlogExportPath(paths: WorkspacePaths): string {
  return paths.taskBacklogExport;
}

/** Create the backlog directories. */
export async function ensureBacklogDirs(paths: WorkspacePaths): Promise<void> {
  for (const b of BUCKETS) await Deno.mkdir(join(paths.backlog, b), { recursive: true });
  await Deno.mkdir(paths.runtime, { recursive: true });
}

/** The YAML text of a task spec (./spec_yaml.ts). */
export function taskYaml(task: Task): string {
  return specYaml(task as unknown as Record<string, unknown>);
}

/** Tasks read from disk and what could not be read. */
export interface LoadedTasks {
  tasks: Task[];
  problems: string[];
  /** The spec files skipped because they could not be read as a task (garbage, torn, wrong id). */
  skipped: string[];
}

/** Read every task spec (read-only; unreadable files are reported, never touched). */
export async function loadTaskSpecs(paths: WorkspacePaths): Promise<LoadedTasks> {
  const byId = new Map<string, Task>();
  const problems: string[] = [];
  const skipped: string[] = [];
  for (const bucket of BUCKETS) {
    const dir = join(paths.backlog, bucket);
    let entries: Deno.DirEntry[];
    try {
      entries = await Array.fromAsync(Deno.readDir(dir));
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) continue;
      throw e;
    }
    for (const entry of entries) {
      if (!entry.isFile || !entry.name.endsWith(".yaml")) continue;
      const file = join(dir, entry.name);
      const id = entry.name.slice(0, -5);
      let task: Task;
      try {
        const parsed = StoredTaskSchema.safeParse(parseYaml(await Deno.readTextFile(file)));
        if (!parsed.success) {
          const i = parsed.error.issues[0];
          problems.push(
            `${said(file)}: ${
              printable(i.path.join("."))
            }: ${i.message} (file skipped, left in place)`,
          );
          skipped.push(file);
          continue;
        }
        task = parsed.data as Task;
      } catch (e) {
        // A YAML error quotes the file's lines after its first: bytes anyone could have written.
        const why = (e as Error).message.split("\n")[0].replace(/:\s*$/, "");
        problems.push(`${said(file)}: ${printable(why)} (file skipped, left in place)`);
        skipped.push(file);
        continue;
      }
      if (task.id !== id || !isValidId(id)) {
        problems.push(
          `${said(file)}: id ${
            printable(JSON.stringify(task.id))
          } does not match the file name (skipped)`,
        );
        skipped.push(file);
        continue;
      }
      if (bucketOf(task.status) !== bucket) {
        problems.push(
          `${said(file)}: status ${task.status} belongs in ${bucketOf(task.status)}/ (loaded)`,
        );
      }
      const seen = byId.get(id);
      if (!seen || seen.revision < task.revision) byId.set(id, task);
    }
  }
  const tasks = [...byId.values()].sort((a, b) => a.seq - b.seq);
  return { tasks, problems, skipped };
}

/** A spec file's path as its problems name it: printed to terminals, so escaped. */
function said(file: string): string {
  return printable(file);
}

/** Each skipped spec file with the first line of why (garbage, a torn write, a wrong id). */
export function unreadableSpecs({ problems, skipped }: LoadedTasks): string[] {
  return problems.filter((p) => skipped.some((f) => p.startsWith(`${said(f)}: `)))
    .map((p) => p.split("\n")[0].replace(/:?\s*$/, ""));
}

/** One task spec to write: its id and status (which name its file), its YAML, where it was. */
export interface TaskSpecWrite {
  id: string;
  status: TaskStatus;
  yaml: string;
  /** The directory it was in; unknown: every other directory is cleared of it. */
  previous?: Bucket;
  /** Where superseded spec files are kept for later writes (default: none, they are deleted). */
  files?: SpecFiles;
}

/**
 * Write one task spec into its directory (temporary file, synced, renamed, directory synced:
 * a change is acknowledged only once it is durable), then retire the copy in `previous` (the
 * directory it was in; every other directory when unknown): kept in `files` for a later write,
 * or deleted.
 */
export async function saveTaskSpec(
  paths: WorkspacePaths,
  { id, status, yaml, previous, files }: TaskSpecWrite,
): Promise<void> {
  const bucket = bucketOf(status);
  const path = taskFile(paths, bucket, id);
  if (files) await files.write(path, yaml);
  else await writeFileAtomic(path, yaml);
  for (const other of previous ? [previous] : BUCKETS) {
    if (other === bucket) continue;
    const old = taskFile(paths, other, id);
    // In place, like the write's own open and rename: a rename or an unlink takes microseconds.
    if (files) {
      files.retire(old, dirname(path));
      continue;
    }
    try {
      Deno.removeSync(old);
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
  }
}

/**
 * Each task's JSON as last exported, kept while its revision stands: a burst of changes to a few
 * of ten thousand tasks re-encodes those few, not the whole backlog, at every export.
 */
export type ExportCache = Map<string, { revision: number; json: string }>;

/** When {@link writeBacklogExport} says it was generated, and what it kept from the last one. */
export interface BacklogExportOptions {
  /** `generated_at` (ISO 8601). */
  now: string;
  /** Default: a new one (every task encoded). */
  cache?: ExportCache;
}

/** The export is encoded and written this many bytes at a time (the event loop is free between). */
const EXPORT_CHUNK = 128 * 1024;

/**
 * Write the JSON export of every task atomically: `{"generated_at", "tasks": […]}`, the bytes
 * `JSON.stringify` makes of it, each task's part taken from `cache` when its revision is unchanged.
 * The tasks are read at once (the export is of one moment); the bytes are encoded and written a
 * chunk at a time, so ten thousand tasks never hold the event loop for the whole file.
 */
export async function writeBacklogExport(
  paths: WorkspacePaths,
  tasks: Iterable<Task>,
  { now, cache = new Map() }: BacklogExportOptions,
): Promise<void> {
  const parts: string[] = [];
  for (const task of tasks) {
    let entry = cache.get(task.id);
    if (entry?.revision !== task.revision) {
      cache.set(task.id, entry = { revision: task.revision, json: JSON.stringify(task) });
    }
    parts.push(entry.json);
  }
  await writeFileAtomicChunks(backlogExportPath(paths), exportChunks(now, parts));
}

/** The export's bytes, about {@link EXPORT_CHUNK} at a time. */
function* exportChunks(now: string, parts: string[]): Generator<Uint8Array> {
  const encoder = new TextEncoder();
  let text = `{"generated_at":${JSON.stringify(now)},"tasks":[`;
  for (let i = 0; i < parts.length; i++) {
    text += i === 0 ? parts[i] : "," + parts[i];
    if (text.length >= EXPORT_CHUNK) {
      yield encoder.encode(text);
      text = "";
    }
  }
  yield encoder.encode(text + "]}\n");
}
