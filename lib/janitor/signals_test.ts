import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { type CompletionSignal, evaluateSignals } from "./signals.ts";

async function tree(files: string[]) {
  const path = await Deno.makeTempDir({ prefix: "svc-signals-" });
  for (const f of files) {
    await Deno.mkdir(dirname(join(path, f)), { recursive: true });
    await Deno.writeTextFile(join(path, f), "x\n");
  }
  return { path, [Symbol.asyncDispose]: () => Deno.remove(path, { recursive: true }) };
}

const FILES = ["src/utils/helpers.py", "src/app.ts", "tests/test_app.py", ".git/HEAD", "README.md"];

Deno.test("evaluateSignals() path/glob table (fuzzy off)", async () => {
  await using dir = await tree(FILES);
  const table: [CompletionSignal, boolean][] = [
    [{ kind: "path_exists", detail: "src/app.ts" }, true],
    [{ kind: "path_exists", detail: "./src/app.ts" }, true],
    [{ kind: "path_exists", detail: "src" }, true],
    [{ kind: "path_exists", detail: "app.ts" }, false], // literal means exactly that path
    [{ kind: "path_exists", detail: "helpers.py" }, false],
    [{ kind: "path_exists", detail: "**/helpers.py" }, true], // glob chars → glob
    [{ kind: "path_exists", detail: "src/*.py" }, false],
    [{ kind: "path_exists", detail: "../etc/passwd" }, false],
    [{ kind: "glob_exists", detail: "tests/test_*.py" }, true],
    [{ kind: "glob_exists", detail: "**/*.rs" }, false],
    [{ kind: "glob_exists", detail: "**/HEAD" }, false], // .git is not part of the tree
  ];
  const results = await evaluateSignals(dir.path, table.map(([s]) => s), { env: {} });
  results.forEach((r, i) => {
    assert.equal(r.passed, table[i][1], `${r.kind} ${r.detail}: ${r.output_tail}`);
    assert.deepEqual({ kind: r.kind, detail: r.detail }, table[i][0]);
  });
});

Deno.test("path_exists falls back to **/<stem>*<suffix> only with SERVICE_JANITOR_FUZZY_PATHS=1, with a warning", async () => {
  await using dir = await tree(FILES);
  const signal: CompletionSignal = { kind: "path_exists", detail: "lib/helpers.py" };
  const warnings: string[] = [];
  const [off] = await evaluateSignals(dir.path, [signal], {
    env: {},
    warn: (w) => warnings.push(w),
  });
  assert.equal(off.passed, false);
  assert.equal(warnings.length, 0);
  const [on] = await evaluateSignals(dir.path, [signal], {
    env: { SERVICE_JANITOR_FUZZY_PATHS: "1" },
    warn: (w) => warnings.push(w),
  });
  assert.equal(on.passed, true);
  assert.deepEqual(on.matched, ["src/utils/helpers.py"]);
  assert.equal(warnings.length, 1);
  assert.equal(on.warning, warnings[0]);
  for (const part of ["lib/helpers.py", "**/helpers*.py", "src/utils/helpers.py"]) {
    assert.ok(warnings[0].includes(part), `warning names ${part}: ${warnings[0]}`);
  }
  const [miss] = await evaluateSignals(dir.path, [{ kind: "path_exists", detail: "nothing.go" }], {
    env: { SERVICE_JANITOR_FUZZY_PATHS: "1" },
    warn: (w) => warnings.push(w),
  });
  assert.equal(miss.passed, false);
  assert.equal(warnings.length, 1);
});

Deno.test("test_passes runs the literal command in the tree and records the output tail", async () => {
  await using dir = await tree(FILES);
  const [pass, fail, slow] = await evaluateSignals(dir.path, [
    { kind: "test_passes", detail: "test -f src/app.ts && echo tests ok" },
    { kind: "test_passes", detail: "echo 'FAILED: 1 test' >&2; exit 1" },
    { kind: "quality_gate", detail: "sleep 5" },
  ], { env: { SERVICE_JANITOR_FUZZY_PATHS: "1" }, commandTimeoutMs: 200 });
  assert.equal(pass.passed, true);
  assert.match(pass.output_tail, /tests ok/);
  assert.equal(fail.passed, false);
  assert.match(fail.output_tail, /FAILED: 1 test[\s\S]*\[exit 1\]/);
  assert.equal(slow.passed, false);
  assert.match(slow.output_tail, /timed out/);
});

Deno.test("evaluateSignals(): a quality gate runs with its own timeout and names it; its exit code is kept", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const started = performance.now();
    const [slow, failing, passing] = await evaluateSignals(dir, [
      { kind: "quality_gate", name: "slow", detail: "sleep 5", timeout_s: 1 },
      { kind: "quality_gate", name: "lint", detail: "echo 2 problems; exit 3" },
      { kind: "quality_gate", name: "ok", detail: "true" },
    ]);
    assert.ok(performance.now() - started < 4500, "the gate's own timeout applied");
    assert.deepEqual([slow.passed, slow.exit_code, slow.name], [false, 124, "slow"]);
    assert.match(slow.output_tail, /\[timed out after 1 s\]/);
    assert.deepEqual([failing.passed, failing.exit_code], [false, 3]);
    assert.match(failing.output_tail, /2 problems\n+\[exit 3\]/);
    assert.deepEqual([passing.passed, passing.exit_code], [true, 0]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("evaluateSignals(): a gate whose command a signal ended says which and what it usually means (SIGKILL: out of memory)", async () => {
  const dir = await Deno.makeTempDir();
  try {
    // As the kernel's OOM killer ends a test runner: its shell reports 128 + 9.
    const [killed, crashed, plain] = await evaluateSignals(dir, [
      { kind: "quality_gate", name: "tests", detail: "sh -c 'kill -9 $$'" },
      { kind: "quality_gate", name: "native", detail: "sh -c 'kill -SEGV $$'" },
      { kind: "quality_gate", name: "own", detail: "exit 200" },
    ]);
    assert.equal(killed.exit_code, 137);
    assert.match(
      killed.output_tail,
      /\[exit 137: SIGKILL, killed: the kernel's out-of-memory killer/,
    );
    assert.match(crashed.output_tail, /\[exit 139: SIGSEGV, crashed \(segmentation fault\)\]/);
    assert.match(plain.output_tail, /\[exit 200\]$/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
