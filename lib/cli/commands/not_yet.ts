/** Commands of spec §4.4 whose implementation arrives with other issues: they say so and exit 1. */
import type { Command } from "../command.ts";

function notYet(name: string, summary: string, arrives: string, help: string): Command {
  return {
    name,
    summary: `${summary} (not yet available)`,
    help: `Usage: service ${name}\n\n${help}\n\nNot yet available: arrives with ${arrives}.`,
    run(_args, ctx) {
      ctx.stderr(`service ${name}: not yet available: arrives with ${arrives}.`);
      return Promise.resolve(1);
    },
  };
}

/** `preview`. */
export const NOT_YET_COMMANDS: Command[] = [
  notYet(
    "preview",
    "expose the server through a tunnel",
    "the tunnel subsystem",
    "Starts a tunnel so trackers can reach the webhook endpoint.",
  ),
];
