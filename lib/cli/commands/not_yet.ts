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

/** `mcp catalog`. */
export const NOT_YET_COMMANDS: Command[] = [
  notYet(
    "mcp catalog",
    "browse the MCP server catalog",
    "the MCP catalog work",
    "Lists installable MCP servers from the community catalog.",
  ),
];
