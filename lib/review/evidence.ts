/**
 * The evidence endpoint's answer (spec §2.5, §7.1; DESIGN.md §10): a task's sealed bundle with
 * `bundle_hash` recomputed now and `verified`, true only when
 * - every producer output stored beside the bundle still re-hashes to its digest and size,
 * - the bundle re-hashes to the `bundle_hash` of the task's latest `task_evidence_sealed` row,
 * - the run's journal chain verifies,
 * - the signature is the audit key's HMAC of the bundle's core, and
 * - the `evidence.sealed` audit entry the bundle names is on an intact audit chain with that
 *   signature.
 * Anything edited, missing or unreadable answers `verified: false` with the reasons, never an
 * error page. {@link checkBundle} is the pure part; {@link readEvidence} reads the files.
 */
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { verifyAuditText } from "../audit/chain.ts";
import { auditPaths, loadAuditKey } from "../audit/store.ts";
import { sha256Hex } from "../journal/hash.ts";
import type { IncrementalJournal, RowSink } from "../journal/incremental.ts";
import { readJournal, viewFor } from "../journal/journal_file.ts";
import { readEvent } from "../journal/event_reader.ts";
import { BUCKETS, taskFile } from "../tasks/persist.ts";
import { bundleHash, signatureValid } from "../verification/bundle.ts";
import { evidenceDir, journalPath, type WorkspacePaths } from "../workspace.ts";
import type { EvidenceAbsence, EvidenceChecks, EvidenceResponse } from "./types.ts";

/** No bundle to serve: `no_evidence_producers` (none declared) or `evidence_not_sealed`. */
export class EvidenceNotFoundError extends Error {
  constructor(readonly code: "no_evidence_producers" | "evidence_not_sealed", message: string) {
    super(message);
    this.name = "EvidenceNotFoundError";
  }
}

/** The inputs of {@link checkBundle}, as read from disk (undefined: the file is missing). */
interface BundleFiles {
  taskId: string;
  bundleText: string | undefined;
  /** Stored outputs by hex digest. */
  outputs: ReadonlyMap<string, Uint8Array | undefined>;
  journal: JournalEvidence;
  auditText: string;
  key: Uint8Array;
}

const DIGEST = /^sha256:([0-9a-f]{64})$/;

/** The hex digests of the outputs a bundle names (ill-formed entries are skipped). */
function outputDigests(bundle: unknown): string[] {
  const producers = (bundle as { producers?: unknown })?.producers;
  if (!Array.isArray(producers)) return [];
  return producers.flatMap((p) => {
    const m = DIGEST.exec(String((p as { output?: { sha256?: unknown } })?.output?.sha256));
    return m ? [m[1]] : [];
  });
}

/** What the run's journal says about one task's evidence. */
interface JournalEvidence {
  /** The `bundle_hash` of the task's latest `task_evidence_sealed` row. */
  hash?: string;
  /** Why sealing failed, when the latest such row is a `task_evidence_unsealed`. */
  unsealed?: string;
  journalVerified: boolean;
}

type SealRows = Map<string, { hash?: string; unsealed?: string }>;

/** The journal sink of the evidence rows (incremental, like the board's fold). */
const EVIDENCE_SINK: RowSink<SealRows> = {
  init: () => new Map(),
  apply(state, row) {
    const event = readEvent(row);
    if (event?.type === "task_evidence_sealed") {
      state.set(event.task_id, { hash: event.bundle_hash });
    } else if (event?.type === "task_evidence_unsealed") {
      state.set(event.task_id, {
        ...state.get(event.task_id),
        unsealed: event.reason ?? "no reason recorded",
      });
    }
  },
  clone: (state) => new Map(state),
};

const evidenceViews = new Map<string, IncrementalJournal<SealRows>>();

/** What the journal at `path` chains for `taskId` (read incrementally, under a shared lock). */
async function journalEvidence(path: string, taskId: string): Promise<JournalEvidence> {
  const snapshot = await readJournal(path, viewFor(path, evidenceViews, EVIDENCE_SINK));
  const seen = snapshot.state.get(taskId);
  return { ...seen, journalVerified: snapshot.walker.verified };
}

/** Check a bundle against its outputs, the journal and the audit chain (pure). */
function checkBundle(files: BundleFiles): EvidenceResponse {
  const problems: string[] = [];
  const { hash: chained, journalVerified } = files.journal;
  if (!journalVerified) problems.push("the run's journal does not verify (edited or torn)");
  let bundle: Record<string, unknown> = {};
  let recomputed: string | null = null;
  if (files.bundleText === undefined) {
    problems.push("bundle.json is missing");
  } else {
    try {
      const parsed = JSON.parse(files.bundleText);
      if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("");
      bundle = parsed;
      recomputed = bundleHash(bundle);
    } catch {
      problems.push("bundle.json is not a canonical JSON object");
    }
  }
  const hashChained = recomputed !== null && recomputed === chained;
  if (recomputed !== null && chained === undefined) {
    problems.push("the journal chains no bundle for this task");
  } else if (recomputed !== null && !hashChained) {
    problems.push(`bundle_hash ${recomputed} is not the ${chained} chained in the journal`);
  }
  let outputsOk = recomputed !== null;
  const producers = Array.isArray(bundle.producers) ? bundle.producers : [];
  const digests = outputDigests(bundle);
  if (digests.length !== producers.length) {
    outputsOk = false;
    problems.push("a producer names no well-formed output digest");
  }
  for (const p of producers) {
    const out = (p as { output?: { sha256?: string; size?: number }; name?: string }) ?? {};
    const hex = DIGEST.exec(String(out.output?.sha256))?.[1];
    if (!hex) continue;
    const bytes = files.outputs.get(hex);
    if (!bytes) {
      outputsOk = false;
      problems.push(`output of ${out.name} (${hex.slice(0, 12)}…) is missing`);
    } else if (sha256Hex(bytes) !== hex || bytes.length !== out.output?.size) {
      outputsOk = false;
      problems.push(`output of ${out.name} (${hex.slice(0, 12)}…) no longer re-hashes`);
    }
  }
  const signatureOk = recomputed !== null && signatureValid(files.key, bundle);
  if (recomputed !== null && !signatureOk) {
    problems.push("the signature is not the audit key's HMAC of the bundle");
  }
  const auditOk = recomputed !== null && auditEntryValid(files, bundle, problems);
  const checks: EvidenceChecks = {
    outputs_rehash: outputsOk,
    bundle_hash_chained: hashChained,
    journal_verified: journalVerified,
    signature_valid: signatureOk,
    audit_entry_valid: auditOk,
  };
  return {
    ...bundle,
    task_id: files.taskId,
    stored_bundle_hash: typeof bundle.bundle_hash === "string" ? bundle.bundle_hash : null,
    bundle_hash: recomputed,
    verified: Object.values(checks).every(Boolean),
    checks,
    problems,
  };
}

function auditEntryValid(
  files: BundleFiles,
  bundle: Record<string, unknown>,
  problems: string[],
): boolean {
  const report = verifyAuditText(files.key, files.auditText);
  if (!report.ok) {
    problems.push("the audit chain does not verify");
    return false;
  }
  const want = bundle.audit_entry_hash;
  const signature = (bundle.signature as { value?: unknown } | undefined)?.value;
  for (const line of files.auditText.split("\n")) {
    if (line === "" || sha256Hex(line) !== want) continue;
    const entry = JSON.parse(line);
    if (entry.event === "evidence.sealed" && entry.data?.signature === signature) return true;
    problems.push("the audit entry does not record this bundle's signature");
    return false;
  }
  problems.push("the audit chain holds no entry with this bundle's audit_entry_hash");
  return false;
}

async function readOrUndefined(path: string): Promise<Uint8Array | undefined> {
  try {
    return await Deno.readFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound || e instanceof Deno.errors.IsADirectory) {
      return undefined;
    }
    throw e;
  }
}

/** How many evidence producers the task's stored spec declares (0 when unknown). */
async function declaredProducers(paths: WorkspacePaths, taskId: string): Promise<number> {
  for (const bucket of BUCKETS) {
    const bytes = await readOrUndefined(taskFile(paths, bucket, taskId));
    if (!bytes) continue;
    try {
      const spec = parseYaml(new TextDecoder().decode(bytes));
      return Array.isArray(spec?.evidence) ? spec.evidence.length : 0;
    } catch {
      return 0;
    }
  }
  return 0;
}

/**
 * Why `taskId` of `runId` has no evidence bundle (nothing sealed, and the journal chains none),
 * or undefined when it has one: the board asks this with the task's detail, so it never requests
 * a bundle that is not there.
 */
export async function evidenceAbsence(
  paths: WorkspacePaths,
  runId: string,
  taskId: string,
): Promise<EvidenceAbsence | undefined> {
  const dir = evidenceDir(paths, runId, taskId);
  if (await readOrUndefined(join(dir, "bundle.json"))) return undefined;
  return absence(paths, runId, taskId, await journalEvidence(journalPath(paths, runId), taskId));
}

async function absence(
  paths: WorkspacePaths,
  runId: string,
  taskId: string,
  chained: JournalEvidence,
): Promise<EvidenceAbsence | undefined> {
  if (chained.hash !== undefined) return undefined;
  const declared = await declaredProducers(paths, taskId);
  if (declared > 0 || chained.unsealed !== undefined) {
    return {
      code: "evidence_not_sealed",
      message: chained.unsealed !== undefined
        ? `the evidence bundle of task ${taskId} in run ${runId} could not be sealed: ` +
          chained.unsealed
        : `task ${taskId} of run ${runId} declared ${declared} evidence producer(s); nothing ` +
          "is sealed yet (the bundle is sealed when the task's gates run on its finished work)",
    };
  }
  return {
    code: "no_evidence_producers",
    message: `task ${taskId} of run ${runId} declared no evidence producers`,
  };
}

/**
 * The evidence of `taskId` in `runId` (the caller checked that the run exists). Throws
 * {@link EvidenceNotFoundError} when nothing was sealed and the journal chains nothing.
 */
export async function readEvidence(
  paths: WorkspacePaths,
  runId: string,
  taskId: string,
): Promise<EvidenceResponse> {
  const dir = evidenceDir(paths, runId, taskId);
  const decoder = new TextDecoder();
  const bundleBytes = await readOrUndefined(join(dir, "bundle.json"));
  const chained = await journalEvidence(journalPath(paths, runId), taskId);
  if (!bundleBytes) {
    const absent = await absence(paths, runId, taskId, chained);
    if (absent) throw new EvidenceNotFoundError(absent.code, absent.message);
  }
  const bundleText = bundleBytes ? decoder.decode(bundleBytes) : undefined;
  let parsed: unknown;
  try {
    parsed = bundleText ? JSON.parse(bundleText) : undefined;
  } catch { /* checkBundle reports it */ }
  const outputs = new Map<string, Uint8Array | undefined>();
  for (const hex of outputDigests(parsed)) outputs.set(hex, await readOrUndefined(join(dir, hex)));
  const audit = auditPaths(paths.audit);
  const key = await loadAuditKey(audit, { create: false }).catch(() => new Uint8Array());
  const auditText = decoder.decode(await readOrUndefined(audit.log));
  return checkBundle({ taskId, bundleText, outputs, journal: chained, auditText, key });
}
