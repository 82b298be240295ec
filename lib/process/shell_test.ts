import assert from "node:assert/strict";
import { runArgv, runShell, TIMEOUT_EXIT } from "./shell.ts";
import { processAlive } from "../util/process_alive.ts";

Deno.test("runShell() runs the literal command with sh -c in cwd and keeps the output tail", async () => {
  await using dir = await tempDir();
  await Deno.writeTextFile(`${dir.path}/f.txt`, "x");
  const ok = await runShell("ls && echo oops >&2 && test -f f.txt", { cwd: dir.path });
  assert.equal(ok.code, 0);
  assert.match(ok.output_tail, /f\.txt/);
  assert.match(ok.output_tail, /oops/);
  const fail = await runShell("exit 3", { cwd: dir.path });
  assert.equal(fail.code, 3);
  const tail = await runShell("seq 1 10000", { cwd: dir.path, tailChars: 12 });
  assert.equal(tail.output_tail, "\n9999\n10000\n".slice(-12));
});

Deno.test("runShell() kills the whole process group on timeout", async () => {
  await using dir = await tempDir();
  const r = await runShell("sleep 30 & sleep 30", { cwd: dir.path, timeoutMs: 200, graceMs: 100 });
  assert.equal(r.code, TIMEOUT_EXIT);
  assert.equal(r.timed_out, true);
  assert.ok(r.duration_ms < 5000, `took ${r.duration_ms} ms`);
});

Deno.test("runShell() stops on abort", async () => {
  await using dir = await tempDir();
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 100);
  const r = await runShell("sleep 30", { cwd: dir.path, signal: controller.signal, graceMs: 100 });
  assert.equal(r.aborted, true);
  assert.notEqual(r.code, 0);
});

async function tempDir() {
  const path = await Deno.makeTempDir({ prefix: "svc-shell-" });
  return { path, [Symbol.asyncDispose]: () => Deno.remove(path, { recursive: true }) };
}

Deno.test("runShell() with captureBytes keeps stdout and stderr bytes up to the limit and says when it cut", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const all = await runShell("printf 'out\\n'; printf 'err\\n' >&2", {
      cwd: dir,
      captureBytes: 1000,
    });
    const text = new TextDecoder().decode(all.output);
    assert.equal(text.length, 8);
    assert.match(text, /out\n/);
    assert.match(text, /err\n/);
    assert.equal(all.output_truncated, false);
    const cut = await runShell("head -c 5000 /dev/zero", { cwd: dir, captureBytes: 1000 });
    assert.equal(cut.output!.length, 1000);
    assert.equal(cut.output_truncated, true);
    const none = await runShell("echo x", { cwd: dir });
    assert.equal(none.output, undefined, "no capture unless asked");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name:
    "runShell() returns when the command exits, even if a setsid'd child holds its output; nothing it started outlives it",
  ignore: Deno.build.os !== "linux",
  async fn() {
    await using dir = await tempDir();
    const r = await runShell("setsid sleep 600 & echo pid=$!", { cwd: dir.path, graceMs: 200 });
    assert.equal(r.code, 0);
    assert.ok(r.duration_ms < 5000, `took ${r.duration_ms} ms`);
    const pid = Number(/pid=(\d+)/.exec(r.output_tail)![1]);
    assert.equal(processAlive(pid), false, "the setsid sleep is still running");
  },
});

Deno.test("runArgv() runs an argv without a shell; a missing program is 127", async () => {
  await using dir = await tempDir();
  const r = await runArgv(["echo", "a && b", "$HOME"], { cwd: dir.path });
  assert.equal(r.code, 0);
  assert.equal(r.output_tail, "a && b $HOME\n");
  const missing = await runArgv(["no-such-program-xyz"], { cwd: dir.path });
  assert.equal(missing.code, 127);
  assert.match(missing.output_tail, /no-such-program-xyz/);
});
