import assert from "node:assert/strict";
import { pidNamespaceLauncher, pidNamespacePrefix } from "./pid_namespace.ts";
import { runArgv } from "./shell.ts";

const prefix = await pidNamespacePrefix();

Deno.test({
  name: "pidNamespaceLauncher: the program runs as a child of the namespace's first process",
  ignore: prefix === undefined,
  async fn() {
    const launcher = pidNamespaceLauncher(prefix!);
    const run = await runArgv(["sh", "-c", 'echo "pid=$$ ppid=$PPID"; exit 7'], {
      launcher,
      cwd: Deno.cwd(),
      timeoutMs: 30_000,
    });
    assert.equal(run.code, 7, "the exit status passes through");
    assert.match(run.output_tail, /pid=2 ppid=1/);
  },
});

Deno.test({
  name: "pidNamespaceLauncher: a missing program is exit 127, as without the namespace",
  ignore: prefix === undefined,
  async fn() {
    const launcher = pidNamespaceLauncher(prefix!);
    for (const program of ["no-such-program-xyz", "./no/such/file"]) {
      const run = await runArgv([program], { launcher, cwd: Deno.cwd(), timeoutMs: 30_000 });
      assert.equal(run.code, 127, program);
      assert.match(run.output_tail, /command not found/);
    }
  },
});

Deno.test({
  name: "pidNamespaceLauncher: SIGTERM ends the program at once (it is not the first process)",
  ignore: prefix === undefined,
  async fn() {
    // A namespace's first process ignores signals it has no handler for: were `sleep` first, the
    // end would wait the whole grace for SIGKILL.
    const started = performance.now();
    const run = await runArgv(["sleep", "600"], {
      launcher: pidNamespaceLauncher(prefix!),
      cwd: Deno.cwd(),
      timeoutMs: 300,
      graceMs: 20_000,
    });
    assert.equal(run.timed_out, true);
    assert.ok(performance.now() - started < 10_000, `took ${performance.now() - started} ms`);
  },
});
