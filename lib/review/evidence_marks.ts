/**
 * The check of every evidence bundle a run's journal chains, for the cards: a tampered bundle
 * shows on its card, not only in the evidence panel. Each mark is {@link readEvidence}'s full
 * check. A mark is reused while every file that check reads — the task's evidence directory,
 * the audit chain and its key — keeps its identity and had settled when stat'ed (as the
 * projection's memo: any later write sets a newer ctime, which no process can set back).
 */
import { join } from "node:path";
import { auditPaths } from "../audit/store.ts";
import { type FileIdentity, fileIdentity, settledBefore } from "../journal/file_identity.ts";
import { sha256Hex } from "../journal/hash.ts";
import { evidenceDir, type WorkspacePaths } from "../workspace.ts";
import { readEvidence } from "./evidence.ts";
import type { EvidenceMark } from "./types.ts";

/** Most marks kept (one per task evidence directory). */
const MAX_MARKS = 4096;

const memo = new Map<string, { key: string; mark: EvidenceMark }>();

/** What a run's journal chains of its evidence (from the board's activity fold). */
export interface ChainedEvidence {
  runId: string;
  journalVerified: boolean;
  /** The `bundle_hash` of each task's latest `task_evidence_sealed` row. */
  sealed: ReadonlyMap<string, string>;
}

/** The mark of every task whose journal chains a sealed bundle, by task id. */
export async function evidenceMarks(
  paths: WorkspacePaths,
  chained: ChainedEvidence,
): Promise<Record<string, EvidenceMark>> {
  const { runId, journalVerified, sealed } = chained;
  const marks: Record<string, EvidenceMark> = {};
  if (sealed.size === 0) return marks;
  const statAt = Date.now();
  const audit = auditPaths(paths.audit);
  const envKey = Deno.env.get("SERVICE_AUDIT_KEY");
  const shared = [
    await settledIdentity(audit.log, statAt),
    await settledIdentity(audit.keyFile, statAt),
    envKey ? sha256Hex(envKey) : "",
  ];
  for (const [taskId, hash] of sealed) {
    const dir = evidenceDir(paths, runId, taskId);
    const files = await directoryIdentities(dir, statAt);
    const parts = [hash, journalVerified, shared, files];
    const key = parts.flat(2).includes(undefined) ? undefined : JSON.stringify(parts);
    const cached = memo.get(dir);
    if (key !== undefined && cached?.key === key) {
      marks[taskId] = cached.mark;
      continue;
    }
    const checked = await readEvidence(paths, runId, taskId);
    const mark = { verified: checked.verified, problems: checked.problems };
    marks[taskId] = mark;
    memo.delete(dir);
    if (key !== undefined) memo.set(dir, { key, mark });
    while (memo.size > MAX_MARKS) memo.delete(memo.keys().next().value!);
  }
  return marks;
}

/**
 * `[name, identity]` of every entry of `dir` (sorted), `null` for a missing directory; an
 * entry that has not settled yet is `undefined`, so the mark is not reused.
 */
async function directoryIdentities(dir: string, statAt: number) {
  const names: string[] = [];
  try {
    for await (const entry of Deno.readDir(dir)) names.push(entry.name);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw e;
  }
  names.sort();
  return await Promise.all(
    names.map(async (name) => [name, await settledIdentity(join(dir, name), statAt)]),
  );
}

/** The identity of a settled file, `null` for a missing one, `undefined` while it may change. */
async function settledIdentity(
  path: string,
  statAt: number,
): Promise<FileIdentity | null | undefined> {
  const identity = await fileIdentity(path);
  if (!identity) {
    try {
      await Deno.lstat(path);
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return null;
    }
    return undefined; // there, but not a plain file: never reused
  }
  return settledBefore(identity, statAt) ? identity : undefined;
}
