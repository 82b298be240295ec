/**
 * Sealing a task's evidence bundle (spec §2.5, DESIGN.md §10), the I/O: each producer's output
 * stored content-addressed at `.sdd/runs/<run>/evidence/<task>/<sha256 hex>`, the core signed with
 * the audit key, an `evidence.sealed` entry appended to the audit chain, `bundle.json` written
 * atomically, and a `task_evidence_sealed` journal row chaining its `bundle_hash` and citing the
 * entry (`audit_event_hash`).
 *
 * The order is the review action's: the signed entry first, the journal row last. A crash in
 * between leaves an entry without its row, which `audit verify` and `doctor` report as a seal
 * that was never recorded (`seal_without_row`); a failed write (a full disk) takes the entry back
 * when it is still the chain's last. A row is never left citing an entry that is not there.
 */
import { join } from "node:path";
import { appendAuditEntry, auditPaths, loadAuditKey, retractAuditEntry } from "../audit/store.ts";
import { EVIDENCE_SEALED_EVENT } from "../audit/chain.ts";
import { taskEvidenceSealed } from "../journal/events.ts";
import { appendEvents } from "../journal/journal_file.ts";
import { readLine } from "../journal/event_reader.ts";
import { canonicalJson, type JsonValue } from "../journal/canonical_json.ts";
import { sha256Hex } from "../journal/hash.ts";
import type { GateResult } from "../merge/gates.ts";
import { evidenceDir, type WorkspacePaths } from "../workspace.ts";
import { writeFileAtomic } from "../util/atomic_write.ts";
import {
  BUNDLE_SCHEMA_VERSION,
  type BundleCore,
  digestOf,
  sealBundle,
  type SealedBundle,
  signCore,
} from "./bundle.ts";
import type { Evidence } from "./ledger.ts";

/** Input of {@link sealEvidence}. */
export interface SealInput {
  paths: WorkspacePaths;
  runId: string;
  journalPath: string;
  taskId: string;
  sessionId: string;
  /** The gate evaluation (checks and producers) on the candidate merge commit. */
  gates: GateResult;
  tree: string;
  evidence: Evidence;
  /** Where the session's agent ran (its `task_claimed.isolation`). */
  isolation?: string;
  now?: () => Date;
}

/** The bundle's `bundle.json` path. */
export function bundlePath(paths: WorkspacePaths, runId: string, taskId: string): string {
  return join(evidenceDir(paths, runId, taskId), "bundle.json");
}

/** The core of a bundle from a gate evaluation (pure). */
function bundleCore(
  input: Omit<SealInput, "paths" | "journalPath">,
  sealedAt: string,
): BundleCore {
  const { gates, evidence } = input;
  return {
    schema_version: BUNDLE_SCHEMA_VERSION,
    run_id: input.runId,
    task_id: input.taskId,
    session_id: input.sessionId,
    commit: gates.commit,
    tree: input.tree,
    sealed_at: sealedAt,
    producers: gates.producers.map((p) => ({
      name: p.name,
      command: p.command,
      exit_code: p.exit_code,
      timed_out: p.timed_out,
      truncated: p.truncated,
      duration_ms: p.duration_ms,
      output: { sha256: digestOf(p.output), size: p.output.length },
    })),
    verdict: {
      passed: gates.passed,
      checks: gates.signals.map((s) => ({
        kind: s.kind,
        detail: s.detail,
        ...(s.name !== undefined ? { name: s.name } : {}),
        passed: s.passed,
        ...(s.exit_code !== undefined ? { exit_code: s.exit_code } : {}),
      })),
    },
    evidence: {
      tests_run: evidence.tests_run,
      quality_gates_run: evidence.quality_gates_run,
      completion_signals_checked: evidence.completion_signals_checked,
      verified: evidence.tests_run || evidence.quality_gates_run ||
        evidence.completion_signals_checked,
    },
    ...(input.isolation ? { isolation: input.isolation } : {}),
  };
}

/** The `isolation` of `sessionId`'s claim in the run journal at `journalPath`, if it says one. */
export async function claimIsolation(
  journalPath: string,
  sessionId: string,
): Promise<string | undefined> {
  let text: string;
  try {
    text = await Deno.readTextFile(journalPath);
  } catch {
    return undefined;
  }
  let found: string | undefined;
  for (const line of text.split("\n")) {
    if (!line.includes('"type":"task_claimed"') || !line.includes(sessionId)) continue;
    const event = readLine(line); // a torn line says nothing
    if (event?.type === "task_claimed" && event.session_id === sessionId && event.isolation) {
      found = event.isolation;
    }
  }
  return found;
}

/** Store the outputs, sign, chain and write the bundle; returns the sealed bundle. */
export async function sealEvidence(input: SealInput): Promise<SealedBundle> {
  const dir = evidenceDir(input.paths, input.runId, input.taskId);
  await Deno.mkdir(dir, { recursive: true });
  for (const p of input.gates.producers) {
    const path = join(dir, sha256Hex(p.output));
    const present = await Deno.stat(path).then((s) => s.size === p.output.length, () => false);
    if (!present) await writeFileAtomic(path, p.output);
  }
  const now = input.now ?? (() => new Date());
  const core = bundleCore(input, now().toISOString());
  const audit = auditPaths(input.paths.audit);
  const key = await loadAuditKey(audit);
  const signature = signCore(key, core);
  const entry = await appendAuditEntry(audit, {
    event: EVIDENCE_SEALED_EVENT,
    principal: "service",
    data: {
      run_id: input.runId,
      task_id: input.taskId,
      core_sha256: "sha256:" + sha256Hex(canonicalJson(core as unknown as JsonValue)),
      signature,
    },
  }, { key, now });
  const bundle = sealBundle(core, signature, entry.lineHash);
  try {
    await writeFileAtomic(
      bundlePath(input.paths, input.runId, input.taskId),
      canonicalJson(bundle as unknown as JsonValue) + "\n",
    );
    await appendEvents(input.journalPath, [
      taskEvidenceSealed({
        task_id: input.taskId,
        bundle_hash: bundle.bundle_hash,
        audit_event_hash: entry.lineHash,
      }),
    ]);
  } catch (e) {
    await retractAuditEntry(audit, entry.lineHash).catch(() => false);
    throw e;
  }
  return bundle;
}
