/**
 * `service demo` as a user runs it: one board URL from the start of the run that stays valid
 * after it, the port rules (a chosen busy port is an error; only the default falls back), and
 * the scratch workspace removed unless --keep.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { CLI } from "./helpers.ts";
import { listenByPolicy, PortBusyError } from "../lib/server/port_policy.ts";

function demo(args: string[], env: Record<string, string> = {}) {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "demo", ...args],
    env: { NO_COLOR: "1", RUST_BACKTRACE: "0", ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  });
}

Deno.test("the demo's board URL answers during the run and after it, at the same address; Ctrl-C removes the workspace", async () => {
  const child = demo([], { SERVICE_PORT: "0" }).spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  const waitFor = async (pattern: RegExp) => {
    const deadline = Date.now() + 60_000;
    while (!pattern.test(seen)) {
      assert.ok(Date.now() < deadline, `timed out waiting for ${pattern}:\n${seen}`);
      const { value, done } = await lines.read();
      assert.ok(!done, `demo ended early:\n${seen}`);
      seen += value;
    }
    return pattern.exec(seen)!;
  };
  try {
    const [, workspace] = await waitFor(/demo workspace: (\S+)/);
    const [, boardUrl, runId] = await waitFor(/review board: (\S+\?run=(\S+))/);
    const during = await fetch(boardUrl);
    assert.equal(during.status, 200);
    await during.body?.cancel();
    await waitFor(/serving the board at that address until Ctrl-C/);
    const urls = [...seen.matchAll(/review board: (\S+)/g)].map((m) => m[1]);
    assert.deepEqual(new Set(urls), new Set([boardUrl]), "one board URL for the whole demo");
    const after = await fetch(boardUrl);
    assert.equal(after.status, 200);
    await after.body?.cancel();
    const runs = await (await fetch(new URL("/review-board/runs", boardUrl))).json();
    assert.equal(runs.runs[0].run_id, runId);
    assert.equal(runs.runs[0].status, "completed", `the demo said:\n${seen}`);
    child.kill("SIGINT");
    await waitFor(/removed the demo workspace/);
    assert.equal((await child.status).code, 0);
    assert.ok(!existsSync(workspace), `${workspace} was removed`);
  } finally {
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
    await lines.cancel().catch(() => {});
    await child.stderr.cancel().catch(() => {});
  }
});

Deno.test("a busy port the user chose (--port or SERVICE_PORT) is an error naming the fix, and nothing is left behind", async () => {
  using taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = String((taken.addr as Deno.NetAddr).port);
  for (
    const [args, env, source] of [
      [["--port", port], {}, "--port"],
      [[], { SERVICE_PORT: port }, "SERVICE_PORT"],
    ] as const
  ) {
    const out = await demo(["--no-serve", ...args], env).output();
    const stdout = new TextDecoder().decode(out.stdout);
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 1, stderr);
    assert.match(
      stderr,
      new RegExp(`port ${port} \\(from ${source}\\) is already in use.*--port N`),
    );
    const workspace = /demo workspace: (\S+)/.exec(stdout)![1];
    assert.ok(!existsSync(workspace));
  }
});

Deno.test("--keep keeps the scratch workspace", async () => {
  const out = await demo(["--no-serve", "--keep"], { SERVICE_PORT: "0" }).output();
  const stdout = new TextDecoder().decode(out.stdout);
  assert.equal(out.code, 0, stdout);
  const workspace = /demo workspace: (\S+)/.exec(stdout)![1];
  assert.match(stdout, /the demo workspace stays at/);
  assert.ok(existsSync(`${workspace}/.sdd/runs`));
  await Deno.remove(workspace, { recursive: true });
});

Deno.test("busy-port policy: only the default port falls back, and says so", async (t) => {
  const busy = () => Promise.reject(new Deno.errors.AddrInUse("in use"));
  const table = [
    { source: "default", outcome: "fallback" },
    { source: "--port", outcome: "error" },
    { source: "SERVICE_PORT", outcome: "error" },
    { source: "service.yaml", outcome: "error" },
  ] as const;
  for (const { source, outcome } of table) {
    await t.step(`${source} → ${outcome}`, async () => {
      const notes: string[] = [];
      const tried: number[] = [];
      const start = (
        port: number,
      ) => (tried.push(port), port === 0 ? Promise.resolve(port) : busy());
      const run = listenByPolicy(start, { port: 8052, source }, (l) => notes.push(l));
      if (outcome === "fallback") {
        assert.equal(await run, 0);
        assert.deepEqual(tried, [8052, 0]);
        assert.match(notes[0], /port 8052 is busy; serving on a free port instead/);
      } else {
        await assert.rejects(run, PortBusyError);
        assert.deepEqual(tried, [8052]);
      }
    });
  }
});
