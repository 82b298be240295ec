/**
 * The terminal guard as an architecture rule: every process of the service starts in cli_main.ts
 * (cli.ts and main.ts call its `main`), which guards the console before anything is printed; the
 * only direct write to standard output or error in the service's code is lib/cli/terminal.ts's;
 * and a guarded console lets no control character of what it prints through.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";

const ROOT = new URL("../../", import.meta.url);

/** Every non-test TypeScript file of the service's own code, relative to the repository. */
function serviceFiles(): string[] {
  const out: string[] = ["cli.ts", "cli_main.ts", "main.ts"];
  const walk = (dir: string) => {
    for (const e of Deno.readDirSync(new URL(dir, ROOT))) {
      const path = `${dir}${e.name}`;
      if (e.isDirectory) walk(`${path}/`);
      else if (/\.tsx?$/.test(e.name) && !/_test\.tsx?$/.test(e.name)) out.push(path);
    }
  };
  for (const dir of ["lib/", "routes/", "components/", "islands/"]) walk(dir);
  return out;
}

Deno.test("only lib/cli/terminal.ts writes to standard output or error directly", () => {
  // Any use of the streams but asking whether they are a terminal.
  const direct = /Deno\.(stdout|stderr)\b(?!\.isTerminal\(\))/;
  const writers = serviceFiles().filter((f) =>
    direct.test(Deno.readTextFileSync(new URL(f, ROOT)))
  );
  assert.deepEqual(writers, ["lib/cli/terminal.ts"]);
});

Deno.test("every process of the service guards its console before it prints anything", () => {
  for (const entry of ["cli.ts", "main.ts"]) {
    const text = Deno.readTextFileSync(new URL(entry, ROOT));
    assert.match(text, /cli_main\.ts/, `${entry} runs cli_main.ts's main`);
  }
  const main = Deno.readTextFileSync(new URL("cli_main.ts", ROOT));
  const body = main.slice(main.indexOf("export async function main("));
  const firstStatement = body.slice(body.indexOf("{") + 1).replace(/^\s*(\/\/[^\n]*\n\s*)*/, "");
  assert.ok(firstStatement.startsWith("guardConsole();"), firstStatement.slice(0, 80));
});

Deno.test("a guarded console prints no control character of what it is given, strings or not", async () => {
  const terminal = fileURLToPath(new URL("terminal.ts", import.meta.url));
  const code = `
    import { guardConsole } from ${JSON.stringify(terminal)};
    guardConsole();
    guardConsole(); // twice is once
    const hostile = "\\x1b]0;title\\x07\\x1b]52;c;eA==\\x07\\x1b[2K\\rfake\\x9b2K\\u202eok";
    console.log(hostile);
    console.info("info", hostile);
    console.warn({ detail: hostile });
    console.error(new Error(hostile));
    console.debug("line one\\n\\tline two");
  `;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--config", fileURLToPath(new URL("deno.json", ROOT)), code],
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const bytes = [...out.stdout, ...out.stderr];
  const text = new TextDecoder().decode(new Uint8Array(bytes));
  assert.ok(out.success, text);
  for (const b of [0x1b, 0x07, 0x0d]) assert.ok(!bytes.includes(b), `byte ${b}: ${text}`);
  assert.doesNotMatch(text, /[\x80-\x9f\u202e]/);
  assert.match(text, /\\x1b\]52;c;eA==\\x07/, "shown as text");
  assert.match(text, /Error: \\x1b\]0;title/);
  assert.match(text, /line one\n\tline two/, "the program's own line breaks and tabs pass");
});
