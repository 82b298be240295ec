/**
 * The `service` command line (DESIGN.md §8): `deno run -A cli.ts <command>`.
 */
import { type CliContext, CliError, type Command, EXIT } from "./lib/cli/command.ts";
import { COMMANDS } from "./lib/cli/commands/mod.ts";
import { resolve } from "node:path";

function usage(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    "Usage: service [--root DIR] [--debug] <command> [options]",
    "",
    "Commands:",
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    "",
    "Run `service <command> --help` for a command's options.",
  ].join("\n");
}

function findCommand(words: string[]): { command: Command; rest: string[] } | undefined {
  for (const take of [2, 1]) {
    const name = words.slice(0, take).join(" ");
    const command = COMMANDS.find((c) => c.name === name);
    if (command) return { command, rest: words.slice(take) };
  }
  return undefined;
}

/** Run the CLI with `argv`; returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  let root = Deno.cwd();
  let debug = false;
  const words: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--root") root = resolve(argv[++i] ?? ".");
    else if (arg.startsWith("--root=")) root = resolve(arg.slice(7));
    else if (arg === "--debug") debug = true;
    else words.push(arg);
  }
  const ctx: CliContext = {
    root,
    debug,
    stdout: (l) => console.log(l),
    stderr: (l) => console.error(l),
  };
  if (words.length === 0 || words[0] === "--help" || words[0] === "-h" || words[0] === "help") {
    console.log(usage());
    return words.length === 0 ? EXIT.error : EXIT.ok;
  }
  const found = findCommand(words);
  if (!found) {
    ctx.stderr(
      `service: unknown command ${JSON.stringify(words.slice(0, 2).join(" "))}\n\n${usage()}`,
    );
    return EXIT.error;
  }
  if (found.rest.includes("--help") || found.rest.includes("-h")) {
    ctx.stdout(found.command.help);
    return EXIT.ok;
  }
  try {
    return await found.command.run(found.rest, ctx);
  } catch (e) {
    if (debug) console.error(e);
    if (e instanceof CliError) {
      ctx.stderr(`service ${found.command.name}: ${e.message}`);
      return e.exitCode;
    }
    const withCode = e as { exitCode?: unknown; fix?: unknown; name?: string; message?: string };
    if (typeof withCode.exitCode === "number") {
      const fix = typeof withCode.fix === "string" ? `\n  fix: ${withCode.fix}` : "";
      ctx.stderr(`service ${found.command.name}: ${withCode.name}: ${withCode.message}${fix}`);
      return withCode.exitCode;
    }
    if (e instanceof Deno.errors.PermissionDenied) {
      ctx.stderr(
        `service ${found.command.name}: RuntimeError: Permission denied: ${(e as Error).message}`,
      );
      return EXIT.permissionDenied;
    }
    const err = e as Error;
    ctx.stderr(
      `service ${found.command.name}: ${err.name}: ${err.message}${
        debug ? "" : " (--debug for details)"
      }`,
    );
    return EXIT.error;
  }
}

if (import.meta.main) {
  Deno.exit(await main(Deno.args));
}
