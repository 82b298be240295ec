/** `doctor`'s look at the two chains: does the signed audit chain agree with every journal? */
import type { CheckResult } from "../check_result.ts";
import type { WorkspacePaths } from "../workspace.ts";
import { crossCheckWorkspace } from "./workspace_check.ts";

/**
 * One failed check per disagreement (the first row or entry named), and a warning per review or
 * seal row that counts for nothing; nothing when they agree.
 */
export async function auditCrossCheckResults(paths: WorkspacePaths): Promise<CheckResult[]> {
  const { findings, ignored } = await crossCheckWorkspace(paths);
  const notes = ignored.map((i): CheckResult => ({
    name: `journal ${i.runId}`,
    ok: true,
    warning: true,
    detail: i.message,
    fix: "nothing reads the row; a journal is never rewritten, so it stays: find what wrote it",
  }));
  return notes.concat(findings.map((f) => ({
    name: `audit ${f.runId}`,
    ok: false,
    detail: f.message,
    fix: f.journalContradicted
      ? "the journal no longer matches what the audit chain signed: keep both files as evidence, " +
        "restore the journal from a backup; `service audit verify` lists every disagreement"
      : f.kind === "entry_without_row"
      ? "nothing to repair: the action was not recorded; review the task again if it is wanted"
      : f.kind === "seal_without_row"
      ? "nothing to repair: that bundle was never recorded; the task's next landing seals its " +
        "evidence again"
      : "`service audit verify` lists every disagreement; restore .sdd/audit/audit.jsonl from a backup",
  })));
}
