import assert from "node:assert/strict";
import { join } from "node:path";
import { isPlainFile, plainFileText, readPlainFile } from "./plain_file.ts";

async function scratch(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "plain-file-" });
  await Deno.writeTextFile(join(dir, "file"), "ref: refs/heads/main\n");
  await Deno.writeTextFile(join(dir, "outside"), "secret\n");
  await Deno.symlink(join(dir, "outside"), join(dir, "link"));
  await Deno.link(join(dir, "outside"), join(dir, "hard"));
  await Deno.mkdir(join(dir, "dir"));
  await Deno.writeTextFile(join(dir, "big"), "x".repeat(600));
  await Deno.writeTextFile(join(dir, "bom"), "\uFEFFref: refs/heads/main\n");
  return dir;
}

Deno.test("readPlainFile() reads a regular file and refuses every other thing an agent can put at a path", async () => {
  const dir = await scratch();
  try {
    const cases: [string, string | undefined][] = [
      ["file", "ref: refs/heads/main\n"],
      ["link", undefined], // a symbolic link: never followed
      ["hard", undefined], // another name of a file elsewhere
      ["dir", undefined],
      ["missing", undefined],
      ["dir/missing", undefined],
      ["file/below-a-file", undefined],
      ["bom", "\uFEFFref: refs/heads/main\n"], // the mark is kept: it is what git reads
    ];
    for (const [name, want] of cases) {
      assert.deepEqual(plainFileText(join(dir, name)), want, name);
      assert.deepEqual(isPlainFile(join(dir, name)), want !== undefined, name);
    }
    assert.deepEqual(readPlainFile(join(dir, "link")), {
      kind: "other",
      why: "it is a symbolic link",
    });
    assert.deepEqual(readPlainFile(join(dir, "missing")).kind, "missing");
    assert.deepEqual(readPlainFile(join(dir, "big"), { maxBytes: 512 }), {
      kind: "other",
      why: "it is 600 bytes long",
    });
    assert.deepEqual(plainFileText(join(dir, "hard")), undefined);
    const hard = readPlainFile(join(dir, "hard"), { hardLinks: true });
    assert.deepEqual(hard.kind === "plain" && new TextDecoder().decode(hard.bytes), "secret\n");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("readPlainFile() returns at once for a FIFO with no writer, instead of holding the event loop", async () => {
  const dir = await Deno.makeTempDir({ prefix: "plain-file-fifo-" });
  try {
    const fifo = join(dir, "HEAD");
    const made = await new Deno.Command("mkfifo", { args: [fifo] }).output();
    assert.deepEqual(made.code, 0);
    // In a child process: a read that blocks would hang the test runner itself.
    const module = new URL("./plain_file.ts", import.meta.url).href;
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "eval",
        `const m = await import(${JSON.stringify(module)});` +
        `console.log(JSON.stringify(m.readPlainFile(${JSON.stringify(fifo)})));`,
      ],
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    const out = await child.output();
    clearTimeout(timer);
    assert.deepEqual(out.code, 0, new TextDecoder().decode(out.stderr));
    assert.deepEqual(JSON.parse(new TextDecoder().decode(out.stdout)), {
      kind: "other",
      why: "it is not a regular file",
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
