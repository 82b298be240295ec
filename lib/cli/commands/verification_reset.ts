/** `service verification reset`: reset the verification summary by moving the ledger aside. */
import { parseArgs } from "node:util";
import { relative } from "node:path";
import { CliError, type Command } from "../command.ts";
import { loadConfig } from "../../config/load.ts";
import { ledgerPath, moveLedgerAside } from "../../verification/ledger.ts";
import { readVerificationNudge } from "../../verification/nudge.ts";
import { workspacePaths } from "../../workspace.ts";
import { writePrompt } from "../terminal.ts";

/** `service verification reset`. */
export const verificationResetCommand: Command = {
  name: "verification reset",
  summary: "reset the verification alert (moves the ledger aside, never deletes it)",
  help: `Usage: service verification reset [--yes] [--root DIR]

Resets the verification summary of \`service status\`, GET /status and the board (spec §4.3
rule 2) by moving .sdd/metrics/verification_nudges.jsonl aside to
verification_nudges.<UTC time>.jsonl in the same directory: the records are kept, they just stop
counting. The next completion starts a new ledger.

Asks first; the answer is read from standard input when it is not a terminal, and anything but
y or yes declines. A running service needs no restart: the summary is read from the ledger at
every request.

Options:
  --yes   do not ask`,
  async run(args, ctx) {
    const { values } = parseArgs({ args, options: { yes: { type: "boolean", default: false } } });
    const paths = workspacePaths(ctx.root);
    const config = await loadConfig(ctx.root).catch(() => undefined);
    const nudge = await readVerificationNudge(
      paths,
      config?.verification_nudge ?? { threshold: 0.3, min_completions: 3 },
    );
    const shown = relative(ctx.root, ledgerPath(paths));
    if (nudge.total_completions === 0) {
      try {
        await Deno.lstat(ledgerPath(paths));
      } catch {
        ctx.stdout(`nothing to reset: ${shown} does not exist`);
        return 0;
      }
    }
    const what = `${shown} holds ${nudge.total_completions} completion(s), ` +
      `${nudge.unverified_count} unverified` +
      (nudge.threshold_exceeded ? " (the ALERT is on)" : "");
    if (!values.yes && !(await confirm(`${what}. Move it aside? [y/N] `, ctx))) {
      ctx.stderr("not reset (pass --yes to skip the question)");
      return 1;
    }
    const moved = await moveLedgerAside(paths);
    if (moved === null) throw new CliError(`nothing to reset: ${shown} does not exist`);
    ctx.stdout(`verification summary reset: ${what}; moved to ${relative(ctx.root, moved)}`);
    return 0;
  },
};

/** Ask on the terminal, or read the answer from standard input; only y/yes agrees. */
async function confirm(question: string, ctx: { stdout: (l: string) => void }): Promise<boolean> {
  if (Deno.stdin.isTerminal()) {
    await writePrompt(question, "stdout");
  } else {
    ctx.stdout(question.trimEnd());
  }
  const buf = new Uint8Array(256);
  const n = await Deno.stdin.read(buf);
  const answer = n === null ? "" : new TextDecoder().decode(buf.subarray(0, n)).split("\n")[0];
  return /^\s*(y|yes)\s*$/i.test(answer);
}
