/**
 * The README's promise: its first two commands do all the set-up on a fresh machine. On a fresh
 * clone of this commit (no node_modules, no build output), the first command runs the demo to
 * its board, and the second resolves the test task and runs one test file through it (running
 * every test from inside a test would recurse; `.ci/run` runs the whole command on a clean clone).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { tempDir } from "./helpers.ts";

const REPO = new URL("..", import.meta.url).pathname;

async function readmeCommands(): Promise<string[]> {
  const readme = await Deno.readTextFile(join(REPO, "README.md"));
  const block = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
  return block.split("\n").map((l) => l.replace(/#.*/, "").trim()).filter(Boolean);
}

Deno.test("the README starts with the demo and the test command, in that order", async () => {
  const [demo, test] = await readmeCommands();
  assert.equal(demo, "npx -y deno@2.9.6 run -qA cli.ts demo");
  assert.equal(test, "npx -y deno@2.9.6 task -q test");
});

Deno.test("on a fresh clone the README's demo command reaches its board and the test command runs", async () => {
  await using dir = await tempDir();
  const clone = join(dir.path, "clone");
  const cloned = await new Deno.Command("git", {
    args: ["clone", "-q", REPO, clone],
    stdout: "null",
    stderr: "piped",
  }).output();
  assert.equal(cloned.code, 0, new TextDecoder().decode(cloned.stderr));
  const [demoCommand, testCommand] = await readmeCommands();
  const env = { NO_COLOR: "1", RUST_BACKTRACE: "0", SERVICE_PORT: "0" };

  const [program, ...args] = demoCommand.split(" ");
  const child = new Deno.Command(program, {
    args,
    cwd: clone,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    detached: true,
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let errors = "";
  const errorsRead = child.stderr.pipeThrough(new TextDecoderStream()).pipeTo(
    new WritableStream({ write: (text) => void (errors += text) }),
  ).catch(() => {});
  let seen = "";
  try {
    const deadline = Date.now() + 240_000;
    while (!/serving the board at that address/.test(seen)) {
      assert.ok(Date.now() < deadline, `demo did not reach its board:\n${seen}`);
      const { value, done } = await reader.read();
      assert.ok(!done, `demo ended early:\n${seen}`);
      seen += value;
    }
    assert.match(seen, /completed in .* every task verified and merged/);
    // The first run installs the npm packages quietly, saying so once (not a line per package).
    assert.equal(errors.match(/installing its dependencies/g)?.length, 1, errors);
    assert.doesNotMatch(seen + errors, /Initialize|Download/);
    const board = /review board: (\S+)/.exec(seen)![1];
    const page = await fetch(board);
    assert.equal(page.status, 200);
    await page.body?.cancel();
  } finally {
    Deno.kill(-child.pid, "SIGINT"); // npx → deno: the whole group, as Ctrl-C would
    await reader.cancel().catch(() => {});
    await child.status;
    await errorsRead;
  }

  const [testProgram, ...testArgs] = testCommand.split(" ");
  const out = await new Deno.Command(testProgram, {
    args: [...testArgs, "tests/chromium_lookup_test.ts"],
    cwd: clone,
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, text);
  assert.match(text, /ok \| 8 passed \| 0 failed/);
  assert.doesNotMatch(text, /Initialize/);
});

Deno.test(".ci/run installs no browser and runs the README's test command with the npm Chromium", async () => {
  const ci = await Deno.readTextFile(join(REPO, ".ci/run"));
  const code = ci.replace(/#.*$/gm, "");
  assert.doesNotMatch(code, /apt-get install[^\n]*chromium|for tool in [^\n]*chromium/);
  assert.match(code, /^export SERVICE_TEST_CHROMIUM=npm$/m, "a system browser does not hide npm's");
  // The lines of .ci/run that read the command from the README, run as CI runs them.
  const reading = /^test_command=\$\([\s\S]*?\)$/m.exec(ci)?.[0];
  assert.ok(reading, ".ci/run reads its test command from the README");
  const out = await new Deno.Command("bash", {
    args: ["-c", `${reading}\nprintf '%s' "$test_command"`],
    cwd: REPO,
    stdout: "piped",
  }).output();
  const [, test] = await readmeCommands();
  assert.equal(new TextDecoder().decode(out.stdout), test);
  assert.match(code, /^\$test_command 2>&1 \| tee "\$log"$/m, "and runs it");
});
