/**
 * The `service` command line (DESIGN.md §8): {@link main} runs one command. `cli.ts` is the
 * entry of a source checkout (it loads this module after saying when dependencies are being
 * installed); the single-file bundle starts here.
 */
import { type CliContext, CliError, type Command, EXIT } from "./lib/cli/command.ts";
import { type CommandEntry, COMMANDS } from "./lib/cli/commands/mod.ts";
import { suggest } from "./lib/util/levenshtein.ts";
import { SERVICE_VERSION } from "./lib/version.ts";
import { optionMistake } from "./lib/cli/commands/_options.ts";
import { resolve } from "node:path";
import { UserFacingError } from "./lib/errors.ts";
import { guardConsole } from "./lib/cli/terminal.ts";
import { printableLines } from "./lib/util/printable.ts";
import { GUI_APP, SERVER_APP } from "./routes/_app.ts";
import { findWorkspaceRoot } from "./lib/cli/workspace_root.ts";

function usage(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    "Usage: service [--root DIR] [--debug] <command> [options]",
    "       service help <command> · service --version",
    "",
    "Commands:",
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    "",
    "Run `service <command> --help` for a command's options.",
  ].join("\n");
}

/** The command `words` begin with, its module loaded (only that command's). */
async function findCommand(
  words: string[],
): Promise<{ command: Command; rest: string[] } | undefined> {
  for (const take of [2, 1]) {
    const name = words.slice(0, take).join(" ");
    const entry: CommandEntry | undefined = COMMANDS.find((c) => c.name === name);
    if (entry) return { command: await entry.load(), rest: words.slice(take) };
  }
  return undefined;
}

/** The options a command's help lists (`--name`), for "did you mean". */
function optionsOf(command: Command): string[] {
  return [...new Set([...command.help.matchAll(/--[a-z][a-z0-9-]*/g)].map((m) => m[0]))];
}

/** A mistyped command: the nearest command name, when there is one. */
function unknownCommand(words: string[]): string {
  const typed = words.slice(0, 2).join(" ");
  const names = COMMANDS.map((c) => c.name);
  // `service gui`: the first word of a two-word command (`gui serve`) names that command.
  const firstOf = names.filter((n) => n.startsWith(`${words[0]} `));
  const guess = suggest(typed, firstOf) ?? firstOf[0] ?? suggest(typed, names) ??
    suggest(words[0], names);
  return `service: unknown command ${JSON.stringify(words[0])}${
    guess ? ` (did you mean \`service ${guess}\`?)` : ""
  }; \`service --help\` lists the commands`;
}

/** "Name: message", the name said once (a message may begin with its error's name already). */
export function named(error: Error): string {
  const prefix = `${error.name}: `;
  let message = error.message;
  while (message.startsWith(prefix)) message = message.slice(prefix.length);
  return prefix + message;
}

/** Run the CLI with `argv`; returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  // Everything this process prints passes the terminal guard (lib/cli/terminal.ts).
  guardConsole();
  let root: string | undefined;
  let debug = false;
  const words: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--root") root = resolve(argv[++i] ?? ".");
    else if (arg.startsWith("--root=")) root = resolve(arg.slice(7));
    else if (arg === "--debug") debug = true;
    else words.push(arg);
  }
  // Without --root: the workspace of the repository the current directory is in, as git finds
  // its repository (lib/cli/workspace_root.ts).
  root ??= await findWorkspaceRoot(await Deno.realPath(Deno.cwd()).catch(() => Deno.cwd()));
  const ctx: CliContext = {
    root,
    debug,
    apps: { server: SERVER_APP, gui: GUI_APP },
    stdout: (l) => console.log(l),
    stderr: (l) => console.error(l),
  };
  if (words[0] === "--version" || words[0] === "-V" || words[0] === "version") {
    ctx.stdout(`service ${SERVICE_VERSION} (deno ${Deno.version.deno})`);
    return EXIT.ok;
  }
  if (words.length === 0 || words[0] === "--help" || words[0] === "-h") {
    console.log(usage());
    return words.length === 0 ? EXIT.error : EXIT.ok;
  }
  if (words[0] === "help") {
    if (words.length === 1) {
      console.log(usage());
      return EXIT.ok;
    }
    const wanted = await findCommand(words.slice(1));
    if (!wanted) {
      ctx.stderr(unknownCommand(words.slice(1)));
      return EXIT.error;
    }
    ctx.stdout(wanted.command.help);
    return EXIT.ok;
  }
  const found = await findCommand(words);
  if (!found) {
    ctx.stderr(unknownCommand(words));
    return EXIT.error;
  }
  if (found.rest.includes("--help") || found.rest.includes("-h")) {
    ctx.stdout(found.command.help);
    return EXIT.ok;
  }
  try {
    const info = await Deno.stat(root);
    if (!info.isDirectory) throw new Deno.errors.NotFound(root);
  } catch {
    ctx.stderr(
      `service ${found.command.name}: --root ${root} is not a directory: ` +
        "pass the workspace (your git repository), or leave --root out to use the repository the current directory is in",
    );
    return EXIT.error;
  }
  try {
    return await found.command.run(found.rest, ctx);
  } catch (e) {
    if (debug) console.error(e);
    // An error may quote an agent, a host or a tracker: its lines are escaped one by one.
    const fail = (text: string) => ctx.stderr(printableLines(text).join("\n"));
    if (e instanceof CliError) {
      fail(`service ${found.command.name}: ${e.message}${e.fix ? `\n  fix: ${e.fix}` : ""}`);
      return e.exitCode;
    }
    const parse = optionMistake(
      found.command.name,
      e as Error & { code?: string },
      optionsOf(found.command),
    );
    if (parse) {
      fail(`service ${found.command.name}: ${parse}`);
      return EXIT.error;
    }
    if (e instanceof UserFacingError) {
      const fix = e.fix ? `\n  fix: ${e.fix}` : "";
      fail(`service ${found.command.name}: ${named(e)}${fix}`);
      return e.exitCode;
    }
    if (e instanceof Deno.errors.PermissionDenied) {
      fail(
        `service ${found.command.name}: RuntimeError: Permission denied: ${(e as Error).message}`,
      );
      return EXIT.permissionDenied;
    }
    fail(
      `service ${found.command.name}: ${named(e as Error)}${debug ? "" : " (--debug for details)"}`,
    );
    return EXIT.error;
  }
}

if (import.meta.main) {
  Deno.exit(await main(Deno.args));
}
