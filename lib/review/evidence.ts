/**
 * Evidence bundles (spec §2.5): `.sdd/runs/<run>/review/evidence/<task>.json`, written when a
 * task that declared evidence producers is verified. Served with `bundle_hash` recomputed as
 * the SHA-256 of the canonical JSON of the bundle without its own `bundle_hash`.
 */
import { join } from "node:path";
import { canonicalJson } from "../journal/canonical_json.ts";
import { sha256Hex } from "../journal/hash.ts";
import { HttpError } from "../http/errors.ts";
import { runDir, type WorkspacePaths } from "../workspace.ts";

/** `.sdd/runs/<run>/review/evidence/<task>.json`. */
function evidencePath(paths: WorkspacePaths, runId: string, taskId: string): string {
  return join(runDir(paths, runId), "review", "evidence", `${taskId}.json`);
}

/** `sha256:`-prefixed hash of a bundle's canonical JSON, ignoring any stored `bundle_hash`. */
function bundleHash(bundle: Record<string, unknown>): string {
  const { bundle_hash: _ignored, ...rest } = bundle;
  return "sha256:" + sha256Hex(canonicalJson(rest));
}

/** The stored bundle with `bundle_hash` recomputed; 404 when the task declared no producers. */
export async function readEvidence(
  paths: WorkspacePaths,
  runId: string,
  taskId: string,
): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await Deno.readTextFile(evidencePath(paths, runId, taskId));
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
    throw new HttpError(
      404,
      "no_evidence_producers",
      `task ${taskId} of run ${runId} declared no evidence producers`,
    );
  }
  let bundle: Record<string, unknown>;
  try {
    bundle = JSON.parse(text);
  } catch {
    throw new HttpError(
      500,
      "evidence_unreadable",
      `evidence bundle of task ${taskId} is not valid JSON`,
    );
  }
  let recomputed: string;
  try {
    recomputed = bundleHash(bundle);
  } catch (e) {
    throw new HttpError(
      500,
      "evidence_unreadable",
      `evidence bundle of task ${taskId} has no canonical form: ${(e as Error).message}`,
    );
  }
  const stored = bundle.bundle_hash;
  return {
    ...bundle,
    bundle_hash: recomputed,
    bundle_hash_matches: stored === undefined ? null : stored === recomputed,
  };
}
