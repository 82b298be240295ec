/** `service audit verify`: recompute the HMAC audit chain offline. */
import { parseArgs } from "node:util";
import type { Command } from "../command.ts";
import { colour } from "../command.ts";
import { auditPaths, loadAuditKey, verifyAuditFile } from "../../audit/store.ts";
import { workspacePaths } from "../../workspace.ts";

export const auditVerifyCommand: Command = {
  name: "audit verify",
  summary: "recompute every entry of the signed audit chain",
  help: `Usage: service audit verify [--json] [--root DIR]

Re-walks .sdd/audit/audit.jsonl: each line parses, seq and prev chain, and each hmac recomputes
under the key (SERVICE_AUDIT_KEY, else .sdd/audit/key). Exit 0 when intact; 1 naming the first
bad entry otherwise.

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
    if (values.json) {
      ctx.stdout(JSON.stringify(report));
    } else if (report.ok) {
      ctx.stdout(
        `${colour.green("ok")}: audit chain intact, ${report.entries} entries, head ${report.head}`,
      );
    } else {
      const f = report.fault!;
      const evidence = f.expected !== undefined
        ? ` (expected ${f.expected}, found ${f.actual})`
        : "";
      ctx.stderr(
        `${colour.red("BROKEN")}: audit entry ${f.seq}: ${f.reason}${evidence} in ${paths.log}`,
      );
    }
    return report.ok ? 0 : 1;
  },
};
