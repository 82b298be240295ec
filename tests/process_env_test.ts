/**
 * The process environment is one for every test module: `deno test --parallel` (the project's
 * `deno task test`) runs the modules on threads of one process. A test that replaces `PATH`
 * (`withEnv({PATH: dir})`) makes every program a module beside it starts by name fail with
 * "Failed to spawn '<name>': entity not found" for as long as it holds it; that, not a setenv of
 * another variable racing a spawn, is how a CI run failed to find python3. These tests show both
 * sides with an ordered hand-shake between two modules (no timing), and keep PATH, and every other variable something besides the test reads, out of the process
 * environment of tests.
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

/**
 * Variables something besides the test itself reads: the service (`SERVICE_*`, the provider keys
 * and endpoints it forwards), git, a container runtime, kubectl's client, Deno, npm, the shell's
 * programs. Set in the process, they change what every test module running beside it does: a
 * fake runtime first on `PATH` answered another module's container probe ("runtime not
 * answering"), a `CONTAINERS_CONF` of other limits failed its containers ("error setting rlimit"),
 * a short `SERVICE_AGENT_TIMEOUT_S` would kill its agents.
 */
const SHARED =
  /^(PATH|HOME|USER|LANG|TMPDIR|TERM|SHELL|KUBECONFIG|NO_COLOR|CI|(SERVICE|GIT|CONTAINERS?|DOCKER|BUILDAH|XDG|ANTHROPIC|OPENAI|GEMINI|GOOGLE|CLAUDE|CODEX|DENO|NODE|NPM|LC|HTTPS?|ALL|NO)_\w*)$/i;

/**
 * Allowed with the reason: git's trace goes to a file of the test's own, and the test reads only
 * the events of repositories under its own temporary root; git's work is the same with it.
 */
const TOLERATED: Record<string, string> = {
  "lib/worktrees/one_process_add_test.ts": "GIT_TRACE2_EVENT",
};

/** Each `withEnv({ NAME: … })` or `Deno.env.set("NAME", …)` of a shared NAME, with its line. */
export function setsSharedVariable(source: string): string[] {
  const found: string[] = [];
  const lineOf = (index: number) => source.slice(0, index).split("\n").length;
  for (const m of source.matchAll(/withEnv\(\s*\{([^}]*)\}/g)) {
    for (const k of m[1].matchAll(/(?:^|[,{\s])([A-Za-z_]\w*)\s*:/g)) {
      if (SHARED.test(k[1])) found.push(`${lineOf(m.index!)}: ${k[1]}`);
    }
  }
  for (const m of source.matchAll(/Deno\.env\.set\(\s*["'`]([A-Za-z_]\w*)["'`]/g)) {
    if (SHARED.test(m[1])) found.push(`${lineOf(m.index!)}: ${m[1]}`);
  }
  return found;
}

Deno.test("no test sets a variable the service, git, a runtime or an agent reads in the process environment: runEnv/cliWith hand it to one run", async () => {
  const root = join(import.meta.dirname!, "..");
  const offenders: string[] = [];
  const walk = async (dir: string) => {
    for await (const e of Deno.readDir(dir)) {
      const path = join(dir, e.name);
      if (e.isDirectory && !["node_modules", ".sdd", ".git"].includes(e.name)) await walk(path);
      else if (e.isFile && e.name.endsWith(".ts") && path !== import.meta.filename) {
        const file = path.slice(root.length + 1);
        for (const hit of setsSharedVariable(await Deno.readTextFile(path))) {
          if (!hit.endsWith(`: ${TOLERATED[file]}`)) offenders.push(`${file}:${hit}`);
        }
      }
    }
  };
  for (const dir of ["tests", "lib", "routes"]) await walk(join(root, dir));
  assert.deepEqual(offenders, []);
  // The check finds what it is for, on one line or several, and leaves a test's own names alone.
  const table: [string, string[]][] = [
    ["  using _env = withEnv({ PATH: bin.path });", ["1: PATH"]],
    ['withEnv({ PATH: `${x}:${Deno.env.get("PATH")}` })', ["1: PATH"]],
    ["using _read = withEnv({ SERVICE_TOKEN: WORKER_TOKEN });", ["1: SERVICE_TOKEN"]],
    ['withEnv({\n  E2E_BARRIER: b,\n  SERVICE_KILL_GRACE_S: "1",\n})', ["1: SERVICE_KILL_GRACE_S"]],
    ['Deno.env.set("CONTAINERS_CONF", conf);', ["1: CONTAINERS_CONF"]],
    ['x;\nDeno.env.set("ANTHROPIC_API_KEY", "k");', ["2: ANTHROPIC_API_KEY"]],
    ['withEnv({ [TEAM_OP_ENV]: TOKEN, WS_OP_TOKEN: "op" })', []],
    ['Deno.env.set("H_READER_TOKEN", "");', []],
    ["Deno.env.set(tokenVar, t);", []],
  ];
  for (const [source, hits] of table) assert.deepEqual(setsSharedVariable(source), hits, source);
});
