/**
 * A run's record of the repository's command-running git setup (lib/git/command_setup.ts):
 * `.sdd/runs/<run_id>/git_setup.json` holds it as the run began (`before`) and, once the run
 * has ended, as it ended (`after`). The run's last lines and `status` word what changed from the
 * same record, so the warning outlives the terminal that printed it — and a run killed before it
 * could print anything is still compared, against the setup as it is now.
 */
import { join } from "node:path";
import type { CommandSetup } from "../git/command_setup.ts";
import { readPlainJson } from "../git/plain_file.ts";
import { writeFileAtomic } from "../util/atomic_write.ts";
import { runDir, type WorkspacePaths } from "../workspace.ts";

/** What `git_setup.json` holds. */
export interface GitSetupRecord {
  before: CommandSetup;
  /** Set when the run ended (normally, by a stop or by an error), not when it was killed. */
  after?: CommandSetup;
}

/** A record is a few kilobytes; a larger file is not one. */
const MAX_RECORD_BYTES = 4 << 20;

/** `.sdd/runs/<run_id>/git_setup.json`. */
export function gitSetupPath(paths: WorkspacePaths, runId: string): string {
  return join(runDir(paths, runId), "git_setup.json");
}

/** Write the record (atomically: a reader sees the old one or the new one). */
export async function writeGitSetupRecord(path: string, record: GitSetupRecord): Promise<void> {
  await writeFileAtomic(path, JSON.stringify(record) + "\n");
}

/** The record at `path`; undefined when there is none or it is not one (never trusted blindly). */
export function readGitSetupRecord(path: string): GitSetupRecord | undefined {
  // Never blocks on a FIFO nor follows a link an agent put there (lib/git/plain_file.ts).
  const parsed = readPlainJson(path, MAX_RECORD_BYTES);
  if (!isRecord(parsed) || !isSetup(parsed.before)) return undefined;
  if (parsed.after !== undefined && !isSetup(parsed.after)) return undefined;
  return parsed.after ? { before: parsed.before, after: parsed.after } : { before: parsed.before };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isSetup(value: unknown): value is CommandSetup {
  const strings = (v: unknown) =>
    isRecord(v) && Object.values(v).every((s) => typeof s === "string");
  return isRecord(value) && strings(value.hooks) && strings(value.config);
}
