/**
 * The process environment is one for every test module: `deno test --parallel` (the project's
 * `deno task test`) runs the modules on threads of one process. A test that replaces `PATH`
 * (`withEnv({PATH: dir})`) makes every program a module beside it starts by name fail with
 * "Failed to spawn '<name>': entity not found" for as long as it holds it; that, not a setenv of
 * another variable racing a spawn, is how a CI run failed to find python3. These tests show both
 * sides with an ordered hand-shake between two modules (no timing), and keep PATH out of tests.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { tempDir } from "./helpers.ts";

/** Two modules: `setter` changes the environment, then `spawner` starts python3 by name. */
function modules(dir: string, set: string, restore: string): Record<string, string> {
  const file = (name: string) => JSON.stringify(join(dir, name));
  const waitFor = `async (p) => { for (;;) { try { return await Deno.readTextFile(p); } ` +
    `catch { await new Promise((r) => setTimeout(r, 5)); } } }`;
  return {
    "setter_test.ts": `const waitFor = ${waitFor};
Deno.test("setter", async () => {
  ${set}
  await Deno.writeTextFile(${file("set")}, "1");
  await waitFor(${file("result")});
  ${restore}
});
`,
    "spawner_test.ts": `const waitFor = ${waitFor};
Deno.test("spawner", async () => {
  await waitFor(${file("set")});
  let result = "spawned";
  try {
    await new Deno.Command("python3", { args: ["-c", "0"] }).output();
  } catch (e) {
    result = String(e);
  }
  await Deno.writeTextFile(${file("result")}, result);
});
`,
  };
}

async function runPair(set: string, restore: string): Promise<string> {
  await using dir = await tempDir("service-env-pair-");
  for (const [name, text] of Object.entries(modules(dir.path, set, restore))) {
    await Deno.writeTextFile(join(dir.path, name), text);
  }
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["test", "-A", "--no-check", "--parallel", "--no-config", dir.path],
    env: { DENO_JOBS: "2", NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const said = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  assert.ok(out.success, said);
  return await Deno.readTextFile(join(dir.path, "result"));
}

Deno.test("a test module that replaces PATH makes python3 'not found' in a module running beside it (one process environment)", async () => {
  const result = await runPair(
    'const old = Deno.env.get("PATH")!; Deno.env.set("PATH", "/nonexistent");',
    'Deno.env.set("PATH", old);',
  );
  assert.match(result, /Failed to spawn 'python3': entity not found/);
});

Deno.test("setting another variable (as the minted agent token once was) while a module spawns python3 leaves the spawn alone", async () => {
  const result = await runPair(
    'Deno.env.set(`SERVICE_MINTED_AGENT_TOKEN_${Deno.pid}`, "f".repeat(64));',
    "Deno.env.delete(`SERVICE_MINTED_AGENT_TOKEN_${Deno.pid}`);",
  );
  assert.equal(result, "spawned");
});

/** `withEnv({ PATH: … })` or `Deno.env.set("PATH", …)` that does not keep the inherited PATH. */
export function replacesPath(source: string): string[] {
  const found: string[] = [];
  const lines = source.split("\n");
  lines.forEach((line, i) => {
    const setsPath = /withEnv\(\s*\{[^}]*\bPATH\s*:/.test(line) ||
      /Deno\.env\.set\(\s*["']PATH["']/.test(line);
    if (setsPath && !/Deno\.env\.get\(\s*["']PATH["']\s*\)/.test(line)) {
      found.push(`${i + 1}: ${line.trim()}`);
    }
  });
  return found;
}

Deno.test("no test replaces the process PATH: a program it needs missing is given to the child's env instead", async () => {
  const root = join(import.meta.dirname!, "..");
  const offenders: string[] = [];
  const walk = async (dir: string) => {
    for await (const e of Deno.readDir(dir)) {
      const path = join(dir, e.name);
      if (e.isDirectory && !["node_modules", ".sdd", ".git"].includes(e.name)) await walk(path);
      else if (e.isFile && e.name.endsWith(".ts") && path !== import.meta.filename) {
        for (const hit of replacesPath(await Deno.readTextFile(path))) {
          offenders.push(`${path.slice(root.length + 1)}:${hit}`);
        }
      }
    }
  };
  for (const dir of ["tests", "lib", "routes"]) await walk(join(root, dir));
  assert.deepEqual(offenders, []);
  // The check itself finds the pattern it is for.
  assert.equal(replacesPath("  using _env = withEnv({ PATH: bin.path });").length, 1);
  assert.equal(replacesPath('withEnv({ PATH: `${x}:${Deno.env.get("PATH")}` })').length, 0);
});

/**
 * `withEnv({ SERVICE_TOKEN: … })` or `Deno.env.set("SERVICE_TOKEN", …)`: the one variable a
 * server with no configured token reads as the operator's token (lib/auth/tokens.ts), so every
 * loopback server of a module running beside it answers 401 to requests without it.
 */
export function setsServiceToken(source: string): string[] {
  const found: string[] = [];
  source.split("\n").forEach((line, i) => {
    if (
      /withEnv\(\s*\{[^}]*\bSERVICE_TOKEN(_FILE)?\s*:/.test(line) ||
      /Deno\.env\.set\(\s*["']SERVICE_TOKEN(_FILE)?["']/.test(line)
    ) found.push(`${i + 1}: ${line.trim()}`);
  });
  return found;
}

Deno.test("no test sets SERVICE_TOKEN in the process environment: the CLI child gets it (cliAs)", async () => {
  const root = join(import.meta.dirname!, "..");
  const offenders: string[] = [];
  const walk = async (dir: string) => {
    for await (const e of Deno.readDir(dir)) {
      const path = join(dir, e.name);
      if (e.isDirectory && !["node_modules", ".sdd", ".git"].includes(e.name)) await walk(path);
      else if (e.isFile && e.name.endsWith(".ts") && path !== import.meta.filename) {
        for (const hit of setsServiceToken(await Deno.readTextFile(path))) {
          offenders.push(`${path.slice(root.length + 1)}:${hit}`);
        }
      }
    }
  };
  await walk(join(root, "tests"));
  assert.deepEqual(offenders, []);
  assert.equal(
    setsServiceToken("  using _read = withEnv({ SERVICE_TOKEN: WORKER_TOKEN });").length,
    1,
  );
  assert.equal(setsServiceToken("  using _env = withEnv({ [TEAM_OP_ENV]: TOKEN });").length, 0);
});
