/** `service doctor`: check the installation and the workspace; exit 1 if any check fails. */
import { parseArgs } from "node:util";
import { colour, type Command } from "../command.ts";
import { runDoctor } from "../../doctor/checks.ts";

export const doctorCommand: Command = {
  name: "doctor",
  summary: "check deno, git, the workspace, config, templates, port, agent CLIs, PID files",
  help: `Usage: service doctor [--json] [--root DIR]

Checks: deno; git on PATH; the workspace is a git repository and .sdd/ is writable;
service.yaml is valid; every role has a template; the server port is free (or our server runs
there); the configured agent CLI passes the preflight \`service run\` makes (PATH lookup,
executable, API key or gateway token); stale PID files (a warning: run and stop remove them);
every run journal verifies. Each failed check prints its fix. Exit 0 when all pass, else 1.

Options:
  --json   print the results as JSON`,
  async run(args, ctx) {
    const { values } = parseArgs({ args, options: { json: { type: "boolean", default: false } } });
    const results = await runDoctor(ctx.root);
    const failed = results.filter((r) => !r.ok);
    if (values.json) {
      ctx.stdout(JSON.stringify({ ok: failed.length === 0, checks: results }, null, 2));
    } else {
      for (const r of results) {
        const mark = !r.ok
          ? colour.red("FAIL")
          : r.warning
          ? colour.yellow("warn")
          : colour.green("ok  ");
        ctx.stdout(`${mark}  ${r.name}: ${r.detail}`);
        if ((!r.ok || r.warning) && r.fix) ctx.stdout(`      fix: ${r.fix}`);
      }
      ctx.stdout(
        failed.length === 0
          ? colour.green(`all ${results.length} checks passed`)
          : colour.red(`${failed.length} of ${results.length} checks failed`),
      );
    }
    return failed.length === 0 ? 0 : 1;
  },
};
