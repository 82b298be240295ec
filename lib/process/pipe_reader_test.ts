import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { PipeReader, readAllBytes } from "./pipe_reader.ts";

/** A child writing `bytes` bytes of a known pattern to stdout, then `tail` to stderr. */
function writer(bytes: number, tail = ""): Deno.ChildProcess {
  const script =
    `const b = new Uint8Array(${bytes}); for (let i = 0; i < b.length; i++) b[i] = i % 251;
    let w = 0; while (w < b.length) w += Deno.stdout.writeSync(b.subarray(w));
    Deno.stderr.writeSync(new TextEncoder().encode(${JSON.stringify(tail)}));`;
  return new Deno.Command(Deno.execPath(), {
    args: ["eval", script],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

function pattern(bytes: number): Uint8Array {
  const b = new Uint8Array(bytes);
  for (let i = 0; i < b.length; i++) b[i] = i % 251;
  return b;
}

for (const bytes of [0, 1, 65_535, 65_536, 65_537, 1_000_003]) {
  Deno.test(`readAllBytes returns exactly the ${bytes} bytes a child wrote, in order`, async () => {
    const child = writer(bytes, "done\n");
    const [out, err] = await Promise.all([
      readAllBytes(child.stdout),
      readAllBytes(child.stderr),
      child.status,
    ]);
    assert.deepEqual(out, pattern(bytes));
    assert.deepEqual(new TextDecoder().decode(err), "done\n");
  });
}

Deno.test("a chunk PipeReader returns is the reader's own copy: the next read does not change it", async () => {
  const child = writer(300_000);
  const reader = new PipeReader(child.stdout);
  const chunks: Uint8Array[] = [];
  for (let c = await reader.read(); c; c = await reader.read()) chunks.push(c);
  await child.stderr.cancel();
  await child.status;
  const all = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) all.set(c, (at += c.length) - c.length);
  assert.deepEqual(all, pattern(300_000));
  for (const c of chunks) assert.deepEqual(c.byteLength, c.buffer.byteLength); // no 64 KiB behind it
});

Deno.test("cancel ends a pending read as the stream's end, and later reads return null", async () => {
  const child = new Deno.Command("sleep", { args: ["30"], stdout: "piped", stderr: "null" })
    .spawn();
  try {
    const reader = new PipeReader(child.stdout);
    const pending = reader.read();
    await reader.cancel();
    assert.deepEqual(await pending, null);
    assert.deepEqual(await reader.read(), null);
  } finally {
    child.kill("SIGKILL");
    await child.status;
  }
});

Deno.test("a long-running process's RSS does not grow with the git calls it makes", async () => {
  // In a fresh process: before PipeReader, 1 200 `git --version` calls grew it by 160–173 MB
  // (a 64 KiB buffer per read, left for a collection that a small heap rarely makes); now ~15.
  const gitModule = fileURLToPath(new URL("../git/git.ts", import.meta.url));
  const script = `import { git } from ${JSON.stringify(gitModule)};
    for (let i = 0; i < 100; i++) await git(["--version"], { cwd: "/" });
    const before = Deno.memoryUsage().rss;
    for (let i = 0; i < 1200; i++) await git(["--version"], { cwd: "/" });
    console.log(Deno.memoryUsage().rss - before);`;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", script],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  assert.deepEqual(out.code, 0);
  const grownMb = Number(new TextDecoder().decode(out.stdout)) / 1e6;
  assert.ok(grownMb < 60, `grew by ${grownMb.toFixed(1)} MB over 1 200 git calls`);
});
