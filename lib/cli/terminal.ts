/**
 * The command line's one door to the terminal. Every line the `service` process prints — a
 * command's output through its context, a warning a library prints with `console.warn`, the
 * prompt of a question — passes {@link toTerminal}: the program's own line breaks, tabs and
 * colours pass, every other control character or invisible format character is escaped
 * (lib/util/printable.ts). So even a field that a formatter forgot to escape cannot erase a line,
 * set the title or write the clipboard. Formatters still escape what others wrote field by field
 * (`printable`), which also keeps a newline in it from starting a line of its own.
 */
import { terminalSafe } from "../util/printable.ts";
import { useColour } from "./command.ts";

/** `text` as it may reach the terminal (see the module's comment). */
function toTerminal(text: string): string {
  return terminalSafe(text, { keepColours: useColour() });
}

const METHODS = ["log", "info", "debug", "warn", "error"] as const;
let guarded = false;

/**
 * Make `console.log`, `info`, `debug`, `warn` and `error` print through {@link toTerminal}
 * (once per process; the CLI's entry calls it). Arguments are joined as the console joins them:
 * strings as they are, anything else as `Deno.inspect` shows it.
 */
export function guardConsole(): void {
  if (guarded) return;
  guarded = true;
  for (const method of METHODS) {
    const original = console[method].bind(console);
    console[method] = (...args: unknown[]) =>
      original(
        toTerminal(
          args.map((a) => typeof a === "string" ? a : Deno.inspect(a, { colors: false })).join(
            " ",
          ),
        ),
      );
  }
}

/**
 * Write `text` (a question, without a line break) through {@link toTerminal} to standard error,
 * or to standard output: the only direct write to either in the command line's code
 * (lib/cli/terminal_test.ts holds it to that).
 */
export async function writePrompt(
  text: string,
  to: "stdout" | "stderr" = "stderr",
): Promise<void> {
  const stream = to === "stdout" ? Deno.stdout : Deno.stderr;
  await stream.write(new TextEncoder().encode(toTerminal(text)));
}
