/** Option parsing for commands: `node:util` parseArgs whose mistakes become a {@link CliError}. */
import { parseArgs, type ParseArgsConfig } from "node:util";
import { CliError } from "../command.ts";
import { suggest } from "../../util/levenshtein.ts";

type Options = NonNullable<ParseArgsConfig["options"]>;

/**
 * A parseArgs mistake (`ERR_PARSE_ARGS_*`) in words, with the option the user probably meant
 * among `known` (`--name` forms); undefined for any other error.
 */
export function optionMistake(
  command: string,
  e: Error & { code?: string },
  known: string[],
): string | undefined {
  if (!e.code?.startsWith("ERR_PARSE_ARGS")) return undefined;
  const first = e.message.split("\n")[0].replace(/\. To specify.*$/, "");
  const typed = /'(-[^']*)'/.exec(first)?.[1];
  // `--server --dir` lacks a value; `--timeout -3` has one that parseArgs takes only as `=-3`.
  if (/argument is ambiguous/.test(first) && typed) {
    return `${first} (did you forget its value?); a value that starts with a dash is written ` +
      `${typed}=VALUE; see \`service ${command} --help\``;
  }
  const guess = typed?.startsWith("--") ? suggest(typed, known) : undefined;
  // A known option followed by another one (`--server --dir …`): its value is what is missing.
  const hint = guess === typed
    ? " (did you forget its value?)"
    : guess
    ? ` (did you mean ${guess}?)`
    : "";
  return `${first}${hint}; see \`service ${command} --help\``;
}

/**
 * Parse `args` against `options` (no positionals). An unknown option, a missing value or a stray
 * argument is a `CliError` that names it, suggests the nearest option and points at
 * `service <name> --help`.
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
    const known = Object.keys(options).map((o) => `--${o}`);
    const words = optionMistake(name, e as Error & { code?: string }, known);
    if (words) throw new CliError(words);
    throw e;
  }
}
