import assert from "node:assert/strict";
import { join } from "node:path";
import { findOnPath, resolveProgram, spawnNewSession } from "./new_session.ts";

const linux = Deno.build.os === "linux";

/** Session and process group of `pid` from `/proc/<pid>/stat`. */
async function sessionOf(pid: number): Promise<{ pgrp: number; session: number }> {
  const text = await Deno.readTextFile(`/proc/${pid}/stat`);
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  return { pgrp: Number(fields[2]), session: Number(fields[3]) };
}

Deno.test({
  name: "spawnNewSession() starts the program itself leading a new session and process group",
  ignore: !linux,
  fn: async () => {
    const child = spawnNewSession(["sh", "-c", 'echo "$$"; read _'], {
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
    });
    const reader = child.stdout.getReader();
    const { value } = await reader.read();
    const echoed = Number(new TextDecoder().decode(value).trim());
    // The pid Deno returns is the program's own (setsid execs in place), leading both.
    assert.equal(echoed, child.pid);
    assert.deepEqual(await sessionOf(child.pid), { pgrp: child.pid, session: child.pid });
    await child.stdin.close();
    reader.releaseLock();
    await child.stdout.cancel();
    await child.status; // `read` meets the end of its input
  },
});

Deno.test("spawnNewSession() passes arguments through untouched, even ones setsid would read", async () => {
  const child = spawnNewSession(["printf", "%s|", "-w", "--", "-c", "a b"], {
    stdout: "piped",
    stderr: "piped",
  });
  const out = await child.output();
  assert.equal(new TextDecoder().decode(out.stdout), "-w|--|-c|a b|");
  assert.equal(out.code, 0);
});

Deno.test("resolveProgram() fails as a spawn would, naming the program", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "svc-newsession-" });
  try {
    await Deno.writeTextFile(join(dir, "plain.txt"), "not a program\n");
    await Deno.writeTextFile(join(dir, "tool"), "#!/bin/sh\necho tool\n", { mode: 0o755 });
    const cases: {
      name: string;
      program: string;
      options: { cwd?: string; env?: Record<string, string> };
      error?: typeof Deno.errors.NotFound | typeof Deno.errors.PermissionDenied;
      message?: RegExp;
      resolved?: string;
    }[] = [
      {
        name: "a name on no PATH directory",
        program: "no-such-program-xyz",
        options: {},
        error: Deno.errors.NotFound,
        message: /^Failed to spawn 'no-such-program-xyz': entity not found$/,
      },
      {
        name: "a missing path",
        program: join(dir, "missing"),
        options: {},
        error: Deno.errors.NotFound,
        message: /No such file or directory/,
      },
      {
        name: "a file without execute permission",
        program: join(dir, "plain.txt"),
        options: {},
        error: Deno.errors.PermissionDenied,
        message: /Permission denied/,
      },
      {
        name: "a directory",
        program: dir,
        options: {},
        error: Deno.errors.PermissionDenied,
        message: /Permission denied/,
      },
      {
        name: "a relative path, against the working directory",
        program: "./tool",
        options: { cwd: dir },
        resolved: join(dir, "tool"),
      },
      {
        name: "a name on the child's own PATH",
        program: "tool",
        options: { env: { PATH: `/nonexistent:${dir}` } },
        resolved: join(dir, "tool"),
      },
    ];
    for (const c of cases) {
      await t.step(c.name, () => {
        if (c.error) {
          assert.throws(() => resolveProgram(c.program, c.options), (e: Error) => {
            assert.ok(e instanceof c.error!, `${e.constructor.name}: ${e.message}`);
            assert.match(e.message, c.message!);
            return true;
          });
        } else assert.equal(resolveProgram(c.program, c.options), c.resolved);
      });
    }
    await t.step("a missing program starts nothing and throws NotFound", () => {
      assert.throws(() => spawnNewSession(["no-such-program-xyz"], {}), Deno.errors.NotFound);
    });
    await t.step("findOnPath() skips what is not an executable file", () => {
      assert.equal(findOnPath("plain.txt", dir), undefined);
      assert.equal(findOnPath("tool", `${dir}`), join(dir, "tool"));
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name: "spawnNewSession() costs the same in a large process (no fork of the service's memory)",
  ignore: !linux,
  fn: async () => {
    // In a process of its own holding 400 MB: `detached: true` forks it, 25–30 ms a spawn here.
    const script = `
      import { spawnNewSession } from ${
      JSON.stringify(new URL("./new_session.ts", import.meta.url).href)
    };
      const held = [];
      for (let i = 0; i < 400; i++) { const b = new Uint8Array(1 << 20); b.fill(1); held.push(b); }
      const times = [];
      for (let i = 0; i < 15; i++) {
        const t0 = performance.now();
        const c = spawnNewSession(["true"], { stdin: "null", stdout: "null", stderr: "null" });
        times.push(performance.now() - t0);
        await c.status;
      }
      times.sort((a, b) => a - b);
      console.log(JSON.stringify({ median: times[7], held: held.length }));`;
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["eval", script],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    const { median } = JSON.parse(new TextDecoder().decode(out.stdout));
    assert.ok(median < 8, `median spawn ${median.toFixed(2)} ms in a 400 MB process`);
  },
});
