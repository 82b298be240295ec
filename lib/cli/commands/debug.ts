/** `service debug`: write a redacted diagnostic bundle under .sdd/debug/. */
import { parseArgs } from "node:util";
import type { Command } from "../command.ts";
import { runDoctor } from "./doctor.ts";
import { printable } from "../../util/printable.ts";

/** `service debug`: write a redacted diagnostic bundle under .sdd/debug/. */
export const debugCommand: Command = {
  name: "debug",
  summary: "write a redacted diagnostic bundle under .sdd/debug/",
  help: `Usage: service debug [--json] [--root DIR]

Writes .sdd/debug/debug-<time>/ (and a .tar.gz of it when tar is available) with:
service.yaml with secret values masked, versions, the status object, doctor results and the
last lines of server.log, access.jsonl and the agent logs. Secret-looking values (provider
keys, bearer tokens, values of *_TOKEN/*_KEY/*SECRET* variables) are masked everywhere.
Attach the tarball to a bug report.

Options:
  --json   print where the bundle went as JSON`,
  async run(args, ctx) {
    const { values } = parseArgs({ args, options: { json: { type: "boolean", default: false } } });
    // Loaded when run (it pulls in dax): other commands, a server above all, do not keep it.
    const { writeDebugBundle } = await import("../../debug/bundle.ts");
    const bundle = await writeDebugBundle(ctx.root, { doctor: await runDoctor(ctx.root) });
    if (values.json) ctx.stdout(JSON.stringify(bundle, null, 2));
    else {
      ctx.stdout(`diagnostic bundle: ${bundle.dir}`);
      if (bundle.tarball) ctx.stdout(`tarball: ${bundle.tarball}`);
      ctx.stdout(printable(`files: ${bundle.files.join(", ")}`)); // names of the agents' logs
    }
    return 0;
  },
};
