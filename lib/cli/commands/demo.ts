/** `service demo`: the embedded default run. */
import type { Command } from "../command.ts";

export const demoCommand: Command = {
  name: "demo",
  summary: "run the embedded demo plan with scripted agents (no API key needed)",
  help: `Usage: service demo

Creates a scratch git repository and runs a small plan in it with a bundled scripted agent,
then serves the review board.`,
  run(_args, ctx) {
    ctx.stderr(
      "service demo: not yet — the orchestrator (issue 5) brings the demo run. " +
        "Until then, `service serve` serves the review board over any workspace with .sdd/runs/.",
    );
    return Promise.resolve(1);
  },
};
