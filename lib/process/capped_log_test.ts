import assert from "node:assert/strict";
import { join } from "node:path";
import { LogBudget, openCappedLog } from "./capped_log.ts";
import { spawnProcess } from "./spawn.ts";

const MiB = 1024 * 1024;
const bytes = (n: number, fill = 97) => new Uint8Array(n).fill(fill);

Deno.test("a log's budget: what is written at once, what is kept for the end, what is left out", async (t) => {
  const cases: {
    name: string;
    sizeNow: number;
    max: number;
    chunks: number[];
    written: number;
    kept: number;
    dropped: number;
  }[] = [
    {
      name: "under the cap",
      sizeNow: 0,
      max: 8 * MiB,
      chunks: [1000, 2000],
      written: 3000,
      kept: 0,
      dropped: 0,
    },
    // 8 MiB: 1 MiB kept for the end, 512 bytes for the two lines, 7 MiB - 512 written.
    {
      name: "past the cap, the end fits what is kept",
      sizeNow: 0,
      max: 8 * MiB,
      chunks: [7 * MiB, 1000],
      written: 7 * MiB - 512,
      kept: 1512,
      dropped: 0,
    },
    {
      name: "far past the cap: the middle is left out",
      sizeNow: 0,
      max: 8 * MiB,
      chunks: [4 * MiB, 4 * MiB, 4 * MiB],
      written: 7 * MiB - 512,
      kept: MiB,
      dropped: 12 * MiB - (7 * MiB - 512) - MiB,
    },
    {
      name: "a small cap keeps an eighth of it for the end",
      sizeNow: 0,
      max: 64 * 1024,
      chunks: [100 * 1024],
      written: 56 * 1024 - 512,
      kept: 8 * 1024,
      dropped: 100 * 1024 - (56 * 1024 - 512) - 8 * 1024,
    },
    {
      name: "what the file held already counts (a setup's output before the agent's)",
      sizeNow: 6 * MiB,
      max: 8 * MiB,
      chunks: [2 * MiB],
      written: MiB - 512,
      kept: MiB,
      dropped: 512,
    },
    {
      name: "a file already past the cap writes nothing more",
      sizeNow: 9 * MiB,
      max: 8 * MiB,
      chunks: [10, 20],
      written: 0,
      kept: 30,
      dropped: 0,
    },
  ];
  for (const c of cases) {
    await t.step(c.name, () => {
      const budget = new LogBudget(c.sizeNow, c.max);
      let written = 0;
      for (const n of c.chunks) written += budget.take(bytes(n)).length;
      assert.equal(written, c.written, "written at once");
      assert.equal(budget.tail().bytes, c.kept, "kept for the end");
      assert.equal(budget.dropped, c.dropped, "left out");
      assert.equal(budget.full, c.kept > 0);
      assert.equal(
        written + budget.tail().bytes + budget.dropped,
        c.chunks.reduce((a, b) => a + b),
      );
    });
  }
});

Deno.test("the end kept is the program's last bytes, in order, whatever the chunks", () => {
  const budget = new LogBudget(0, 64 * 1024); // 8 KiB kept for the end
  const all: number[] = [];
  for (let i = 0; i < 300; i++) {
    const chunk = new Uint8Array(1 + (i * 37) % 700).map((_, j) => (i + j) % 251);
    all.push(...chunk);
    budget.take(chunk);
  }
  const { chunks, bytes: kept } = budget.tail();
  const joined = new Uint8Array(kept);
  let at = 0;
  for (const c of chunks) joined.set(c, at), at += c.length;
  assert.deepEqual([...joined], all.slice(all.length - kept));
});

Deno.test("a program that writes without end leaves a log of its beginning, a line that says what was left out, and its end; its output is still read to the end", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const logPath = join(dir, "s.log");
    // ~6 MB of numbered lines, then a last line that says how it ended.
    const script =
      'i=0; while [ $i -lt 200000 ]; do echo "line $i of a flood ......"; i=$((i+1)); done; echo "the end: exit 3"; exit 3';
    const lines: string[] = [];
    const proc = spawnProcess(["sh", "-c", script], {
      logPath,
      logMaxBytes: MiB,
      onLine: (l) => lines.push(l),
    });
    const status = await proc.status;
    assert.equal(status.code, 3);
    assert.ok(proc.outputBytes > 5 * MiB, `all of it was read (${proc.outputBytes} bytes)`);
    assert.equal(lines.length, 200_001, "every line reached the callers that scan lines");
    assert.equal(proc.tail.at(-1), "the end: exit 3");
    const size = (await Deno.stat(logPath)).size;
    assert.ok(size <= MiB, `the log stays under its cap (${size} bytes)`);
    const text = await Deno.readTextFile(logPath);
    assert.ok(text.startsWith("line 0 of a flood"), "it keeps its beginning");
    assert.match(
      text,
      /\n──── service: this log reached its cap of 1 MiB \(agent_log_max_mb\); its last 128 KiB will be added when the program ends\n/,
    );
    const left = /──── service: (\d+) bytes of output left out here; its last (\d+) bytes follow\n/
      .exec(text);
    assert.ok(left, "it says how much was left out");
    assert.equal(Number(left[2]), 128 * 1024);
    assert.ok(
      text.endsWith("line 199999 of a flood ......\nthe end: exit 3\n"),
      "it keeps the end",
    );
    const head = text.indexOf("\n──── service: this log");
    const kept = text.length - (text.indexOf(left[0]) + left[0].length);
    assert.equal(head + Number(left[1]) + kept, proc.outputBytes, "nothing is counted twice");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a log under its cap is written as the output came, with no line of the service's", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const logPath = join(dir, "s.log");
    await Deno.writeTextFile(logPath, "setup said this\n");
    const proc = spawnProcess(["sh", "-c", "echo one; echo two >&2; echo three"], {
      logPath,
      logMaxBytes: MiB,
    });
    await proc.status;
    const text = await Deno.readTextFile(logPath);
    assert.equal(text.split("\n").filter(Boolean).length, 4, text);
    assert.ok(text.startsWith("setup said this\n"));
    assert.ok(!text.includes("──── service"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a log cannot be opened: nothing starts", async () => {
  const dir = await Deno.makeTempDir();
  try {
    assert.throws(() => openCappedLog(join(dir, "missing-dir", "s.log")), Deno.errors.NotFound);
    assert.throws(
      () =>
        spawnProcess(["sh", "-c", "touch started"], { cwd: dir, logPath: join(dir, "x", "s.log") }),
      Deno.errors.NotFound,
    );
    await assert.rejects(Deno.stat(join(dir, "started")), Deno.errors.NotFound);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
