/** Option parsing for commands: `node:util` parseArgs whose mistakes become a {@link CliError}. */
import { parseArgs, type ParseArgsConfig } from "node:util";
import { CliError } from "../command.ts";

type Options = NonNullable<ParseArgsConfig["options"]>;

/**
 * Parse `args` against `options` (no positionals). An unknown option, a missing value or a stray
 * argument is a `CliError` that names it and points at `service <name> --help`.
 */
export function parseOptions(
  name: string,
  args: string[],
  options: Options,
): Record<string, string | boolean | undefined> {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: false }).values as Record<
      string,
      string | boolean | undefined
    >;
  } catch (e) {
    const message = (e as Error).message.split("\n")[0].replace(/\. To specify.*$/, "");
    throw new CliError(`${message}: see \`service ${name} --help\` for the options`);
  }
}
