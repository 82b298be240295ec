/** `service audit verify`: recompute the HMAC audit chain offline. */
import { parseArgs } from "node:util";
import type { Command } from "../command.ts";
import { colour } from "../command.ts";
import { auditPaths, loadAuditKey, verifyAuditFile } from "../../audit/store.ts";
import { workspacePaths } from "../../workspace.ts";
import { crossCheckWorkspace } from "../../audit/workspace_check.ts";

export const auditVerifyCommand: Command = {
  name: "audit verify",
  summary: "recompute every entry of the signed audit chain",
  help: `Usage: service audit verify [--json] [--root DIR]

Re-walks .sdd/audit/audit.jsonl: each line parses, seq and prev chain, and each hmac recomputes
under the key (SERVICE_AUDIT_KEY, else .sdd/audit/key). Then cross-checks it against every run's
journal: each review entry has its journal row and that row chains onto the head the entry
signed; each review row cites an entry on the chain. Exit 0 when both agree; 1 naming the first
bad entry or the first journal row that disagrees with the signed chain otherwise.

Options:
  --json       print the report as JSON`,
  async run(args, ctx) {
    const { values } = parseArgs({ args, options: { json: { type: "boolean", default: false } } });
    const paths = auditPaths(workspacePaths(ctx.root).audit);
    let key: Uint8Array;
    try {
      key = await loadAuditKey(paths, { create: false });
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
      const report = await verifyAuditFile(paths, new Uint8Array());
      if (report.entries === 0 && report.ok) {
        ctx.stdout(
          values.json
            ? JSON.stringify({ ok: true, entries: 0, head: report.head })
            : "audit chain empty: nothing to verify",
        );
        return 0;
      }
      ctx.stderr(`no audit key: set SERVICE_AUDIT_KEY or restore ${paths.keyFile}`);
      return 1;
    }
    const report = await verifyAuditFile(paths, key);
    const cross = await crossCheckWorkspace(workspacePaths(ctx.root));
    const agree = cross.findings.length === 0;
    if (values.json) {
      ctx.stdout(JSON.stringify({ ...report, ok: report.ok && agree, cross_check: cross }));
    } else if (report.ok) {
      ctx.stdout(
        `${colour.green("ok")}: audit chain intact, ${report.entries} entries, head ${report.head}`,
      );
      if (cross.unattested.length > 0) {
        ctx.stdout(
          `note: ${cross.unattested.length} review row(s) predate this chain (imported runs): ` +
            cross.unattested.slice(0, 3).map((u) => `${u.runId} row ${u.rowSeq}`).join(", "),
        );
      }
      for (const i of cross.ignored) ctx.stdout(`note: ${i.message}`);
      for (const f of cross.findings) {
        ctx.stderr(`${colour.red("MISMATCH")}: ${f.message}`);
      }
    } else {
      const f = report.fault!;
      const evidence = f.expected !== undefined
        ? ` (expected ${f.expected}, found ${f.actual})`
        : "";
      ctx.stderr(
        `${colour.red("BROKEN")}: audit entry ${f.seq}: ${f.reason}${evidence} in ${paths.log}`,
      );
    }
    return report.ok && agree ? 0 : 1;
  },
};
