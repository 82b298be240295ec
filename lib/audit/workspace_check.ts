/**
 * The two-chain cross-check over a workspace's files (the pure rules are in cross_check.ts):
 * `audit verify` and `doctor` check every run; the board and review actions check one run.
 */
import { auditPaths } from "./store.ts";
import {
  crossCheckRun,
  type CrossFinding,
  type CrossReport,
  journalFacts,
  readIfExists,
  type SignedEntries,
  signedEntries,
} from "./cross_check.ts";
import { journalPath, type WorkspacePaths } from "../workspace.ts";
import { isValidId } from "../ids.ts";

/** Cross-check every run of the workspace and every run the audit chain names. */
export async function crossCheckWorkspace(paths: WorkspacePaths): Promise<CrossReport> {
  const entries = signedEntries((await readIfExists(auditPaths(paths.audit).log)) ?? "");
  const runs = new Set([...entries.reviews, ...entries.seals].map((e) => e.runId));
  try {
    for await (const d of Deno.readDir(paths.runs)) if (d.isDirectory) runs.add(d.name);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  const report: CrossReport = { findings: [], unattested: [], ignored: [] };
  for (const runId of [...runs].sort()) {
    const text = isValidId(runId) ? await readIfExists(journalPath(paths, runId)) : undefined;
    const one = crossCheckRun(runId, text === undefined ? undefined : journalFacts(text), entries);
    report.findings.push(...one.findings);
    report.unattested.push(...one.unattested);
    report.ignored.push(...one.ignored);
  }
  return report;
}

let cached: { key: string; entries: SignedEntries } | undefined;

const NONE: SignedEntries = { reviews: [], seals: [] };

async function entriesOf(paths: WorkspacePaths): Promise<SignedEntries> {
  const log = auditPaths(paths.audit).log;
  let key: string;
  try {
    const st = await Deno.stat(log);
    key = `${log}:${st.size}:${st.mtime?.getTime()}`;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return NONE;
    throw e;
  }
  if (cached?.key !== key) cached = { key, entries: signedEntries(await Deno.readTextFile(log)) };
  return cached.entries;
}

/**
 * The first finding by which the signed audit chain contradicts run `runId`'s journal (it was
 * edited and re-hashed), or undefined. Cheap when the chain signed nothing for the run.
 */
export async function journalContradiction(
  paths: WorkspacePaths,
  runId: string,
  journal: string,
): Promise<CrossFinding | undefined> {
  const all = await entriesOf(paths);
  const reviews = all.reviews.filter((e) => e.runId === runId);
  if (reviews.length === 0) return undefined;
  const text = await readIfExists(journal);
  if (text === undefined) return undefined;
  return crossCheckRun(runId, journalFacts(text), { reviews, seals: [] }).findings.find((f) =>
    f.journalContradicted
  );
}
