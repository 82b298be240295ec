import assert from "node:assert/strict";
import { runInstallCommand, scrubbedEnvironment } from "./sandbox.ts";
import { killProcessesWith, processesWith, uniqueSleep } from "../process/_test_processes.ts";

const HOST = {
  PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
  HOME: "/tmp",
  LC_ALL: "C.UTF-8",
  ANTHROPIC_API_KEY: "secret-key",
  GITHUB_TOKEN: "ghp_secret",
};

Deno.test("sandbox env: the allow-list only", () => {
  assert.deepEqual(Object.keys(scrubbedEnvironment(HOST)).sort(), ["HOME", "LC_ALL", "PATH"]);
});

Deno.test("sandbox: argv without a shell, fresh temp cwd removed afterwards, no secrets", async () => {
  const lines: string[] = [];
  const run = await runInstallCommand(
    [
      "sh",
      "-c",
      'pwd; ls -A | wc -l; echo "key=${ANTHROPIC_API_KEY:-none} gh=${GITHUB_TOKEN:-none}"',
    ],
    { processEnv: HOST, onLine: (l) => lines.push(l) },
  );
  assert.equal(run.code, 0);
  assert.equal(lines[0], run.cwd);
  assert.match(run.cwd, /service-mcp-install-/);
  assert.equal(lines[1].trim(), "0", "the working directory starts empty");
  assert.equal(lines[2], "key=none gh=none");
  await assert.rejects(() => Deno.stat(run.cwd), Deno.errors.NotFound);

  const literal = await runInstallCommand(["echo", "a && touch pwned", "$HOME", "`id`"], {
    processEnv: HOST,
  });
  assert.deepEqual(literal.tail, ["a && touch pwned $HOME `id`"]);
});

Deno.test("sandbox: exit codes — failure, missing program (127)", async () => {
  const failed = await runInstallCommand(["sh", "-c", "echo boom >&2; exit 3"], {
    processEnv: HOST,
  });
  assert.equal(failed.code, 3);
  assert.deepEqual(failed.tail, ["boom"]);
  const missing = await runInstallCommand(["no-such-installer-xyz", "x"], { processEnv: HOST });
  assert.equal(missing.code, 127);
  assert.match(missing.tail.join("\n"), /no-such-installer-xyz/);
});

Deno.test("sandbox: a CRLF split across writes is one line break, a progress bar's CR is one too", async () => {
  const lines: string[] = [];
  const run = await runInstallCommand(
    ["sh", "-c", String.raw`printf 'fetching\r'; sleep 0.2; printf '\n10%%\r20%%\rdone'`],
    { processEnv: HOST, onLine: (l) => lines.push(l) },
  );
  assert.equal(run.code, 0);
  assert.deepEqual(lines, ["fetching", "10%", "20%", "done"]);
});

Deno.test("sandbox: a timeout ends the whole process tree (124)", async () => {
  const marker = await Deno.makeTempFile();
  const started = performance.now();
  const run = await runInstallCommand(
    ["sh", "-c", `(sleep 3; echo late > ${marker}) & echo started; sleep 30`],
    { processEnv: HOST, timeoutMs: 300 },
  );
  assert.equal(run.code, 124);
  assert.ok(run.timedOut);
  assert.ok(performance.now() - started < 10_000);
  assert.ok(run.tail.some((l) => /timed out after/.test(l)));
  await new Promise((r) => setTimeout(r, 3500));
  assert.equal(await Deno.readTextFile(marker), "", "the background child was killed too");
  await Deno.remove(marker);
});

Deno.test({
  name:
    "sandbox: a timeout ends a descendant that called setsid and holds the output, and stops reading",
  ignore: Deno.build.os !== "linux",
  async fn() {
    const held = uniqueSleep();
    const started = performance.now();
    const run = await runInstallCommand(
      ["sh", "-c", `setsid sleep ${held} & echo started; sleep 600`],
      { processEnv: HOST, timeoutMs: 500 },
    );
    assert.ok(performance.now() - started < 10_000, `took ${performance.now() - started} ms`);
    assert.equal(run.code, 124);
    assert.ok(run.timedOut);
    assert.ok(run.tail.includes("started"));
    assert.deepEqual(processesWith(held), [], "the setsid sleep outlived the install");
  },
});

Deno.test({
  name: "sandbox: an install that exits leaves nothing running, even what it detached with setsid",
  ignore: Deno.build.os !== "linux",
  async fn() {
    const [held, quiet] = [uniqueSleep(), uniqueSleep()];
    const started = performance.now();
    const run = await runInstallCommand(
      [
        "sh",
        "-c",
        `setsid sleep ${held} & (setsid sleep ${quiet} >/dev/null 2>&1 &); echo done`,
      ],
      { processEnv: HOST, timeoutMs: 60_000 },
    );
    assert.ok(performance.now() - started < 10_000, `took ${performance.now() - started} ms`);
    assert.equal(run.code, 0);
    assert.ok(run.tail.includes("done"));
    assert.deepEqual(processesWith(held), [], "the setsid sleep holding the output outlived it");
    assert.deepEqual(processesWith(quiet), [], "the detached setsid sleep outlived the install");
  },
});

Deno.test({
  name:
    "sandbox: a descendant that left the group, cleared its environment and closed its output ends too",
  ignore: Deno.build.os !== "linux",
  async fn() {
    // No group, no marker variable, no pipe: only a PID namespace of its own holds it.
    const escape = (arg: string) => `setsid env -i /bin/sleep ${arg} </dev/null >/dev/null 2>&1 &`;
    const [afterTimeout, afterExit] = [uniqueSleep(), uniqueSleep()];
    try {
      const timedOut = await runInstallCommand(
        ["sh", "-c", `${escape(afterTimeout)} echo started; sleep 600`],
        { processEnv: HOST, timeoutMs: 500 },
      );
      assert.equal(timedOut.code, 124);
      assert.deepEqual(processesWith(afterTimeout), [], "it outlived the install's timeout");
      const exited = await runInstallCommand(["sh", "-c", `${escape(afterExit)} echo done`], {
        processEnv: HOST,
      });
      assert.equal(exited.code, 0);
      assert.ok(exited.tail.includes("done"));
      assert.deepEqual(processesWith(afterExit), [], "it outlived the install's exit");
    } finally {
      killProcessesWith(afterTimeout);
      killProcessesWith(afterExit);
    }
  },
});

Deno.test("sandbox: Ctrl-C to the service stops the install's process group", async () => {
  const module = new URL("./sandbox.ts", import.meta.url).href;
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "eval",
      `import { runInstallCommand } from ${JSON.stringify(module)};
       const run = await runInstallCommand(["sh", "-c", "echo ready; sleep 30"], {
         processEnv: { PATH: Deno.env.get("PATH") },
         onLine: (l) => console.log(l),
       });
       console.log(JSON.stringify({ code: run.code, interrupted: run.interrupted }));`,
    ],
    stdout: "piped",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("ready")) text += (await reader.read()).value ?? "";
  const started = performance.now();
  child.kill("SIGINT");
  while (true) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
  }
  await child.status;
  assert.ok(performance.now() - started < 10_000);
  assert.match(text, /interrupted: stopping the install command/);
  assert.match(text, /\{"code":130,"interrupted":true\}/);
});
