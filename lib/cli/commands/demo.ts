/**
 * `service demo`: the embedded default. A scratch git repository, a two-stage plan of four
 * tasks, and the bundled scripted agent (a real program speaking the agent protocol) through the
 * generic adapter: every task edits files, runs its test, reports; one fails its gate once and
 * is retried. Then the board keeps being served until Ctrl-C. No API key needed.
 */
import { parseArgs } from "node:util";
import { join } from "node:path";
import { colour, type Command } from "../command.ts";
import { verificationLine } from "../../status/format.ts";
import { git } from "../../git/git.ts";
import { startServer } from "../../server/serve.ts";
import { listenByPolicy, PortBusyError, portChoice } from "../../server/port_policy.ts";
import { resolvePort } from "../../config/server_config.ts";

const FILES: Record<string, string> = {
  "README.md": "# calc\n\nA tiny calculator, built by agents in the `service` demo.\n",
  "src/mod.ts":
    "// The calculator's entry point; agents add operations next to it.\nexport const VERSION = 1;\n",
  ".gitignore": "node_modules/\n",
};

// Each goal carries the scripted agent's script; a real agent CLI would read the prose.
const PLAN = `name: calculator demo
stages:
  - name: core
    steps:
      - id: add
        title: Add an add() operation with a test
        role: backend
        goal: |
          Implement add(a, b) in src/add.ts with a test in src/add_test.ts, and run the test.
          \`\`\`agent-script
          ["write", "src/add.ts", "/** Sum of two numbers. */\\nexport function add(a: number, b: number): number {\\n  return a + b;\\n}\\n"]
          ["write", "src/add_test.ts", "import { add } from './add.ts';\\nDeno.test('add', () => { if (add(2, 3) !== 5) throw new Error('add'); });\\n"]
          ["run", "deno test --no-check -q src/add_test.ts"]
          ["report", "add() with a passing test"]
          \`\`\`
        owned_files: [src/add.ts, src/add_test.ts]
        completion_signals:
          - test_passes: deno test --no-check -q src/add_test.ts
      - id: mul
        title: Add a mul() operation with a test
        role: backend
        goal: |
          Implement mul(a, b) in src/mul.ts with a test in src/mul_test.ts, and run the test.
          \`\`\`agent-script
          ["write", "src/mul.ts", "/** Product of two numbers. */\\nexport function mul(a: number, b: number): number {\\n  return a * b;\\n}\\n"]
          ["write", "src/mul_test.ts", "import { mul } from './mul.ts';\\nDeno.test('mul', () => { if (mul(4, 5) !== 20) throw new Error('mul'); });\\n"]
          ["run", "deno test --no-check -q src/mul_test.ts"]
          ["report", "mul() with a passing test"]
          \`\`\`
        owned_files: [src/mul.ts, src/mul_test.ts]
        completion_signals:
          - test_passes: deno test --no-check -q src/mul_test.ts
  - name: finish
    depends_on: [core]
    steps:
      - id: docs
        title: Document the operations
        role: docs
        goal: |
          Write docs/operations.md describing add() and mul().
          \`\`\`agent-script
          ["run", "test -f src/add.ts && test -f src/mul.ts"]
          ["first_attempt", [["write", "docs/OPERATIONS.txt", "add and mul\\n"], ["report", "docs written"]]]
          ["retry", [["write", "docs/operations.md", "# Operations\\n\\n- \`add(a, b)\` returns the sum.\\n- \`mul(a, b)\` returns the product.\\n"], ["report", "docs at the path the gate expects"]]]
          \`\`\`
        completion_signals:
          - path_exists: docs/operations.md
      - id: qa
        title: Run the whole suite and export both operations
        role: qa
        goal: |
          Export add and mul from src/mod.ts and run every test.
          \`\`\`agent-script
          ["append", "src/mod.ts", "export { add } from './add.ts';\\nexport { mul } from './mul.ts';\\n"]
          ["run", "deno test --no-check -q src/"]
          ["report", "all tests pass"]
          \`\`\`
        owned_files: [src/mod.ts]
        completion_signals:
          - test_passes: deno test --no-check -q src/
        evidence:
          - { name: tests, command: "deno test --no-check src/ 2>&1", timeout_s: 120 }
`;

/** Create the demo workspace in `dir`: files, config, plan, one commit. */
async function createDemoWorkspace(dir: string): Promise<void> {
  for (const [path, text] of Object.entries(FILES)) {
    await Deno.mkdir(join(dir, path, ".."), { recursive: true });
    await Deno.writeTextFile(join(dir, path), text);
  }
  const agent = [Deno.execPath(), "run", "-A", Deno.mainModule, "scripted-agent"];
  await Deno.writeTextFile(
    join(dir, "service.yaml"),
    `# The demo runs a scripted agent through the generic adapter; swap in \`cli: claude\` for a real one.
cli: generic
cli_command: ${JSON.stringify(agent)}
roles:
  backend: {}
  docs: {}
  qa: {}
max_agents: 2
# Run by the service on the tree each merge would produce; a failure blocks the merge.
quality_gates:
  - { name: lint, command: "deno lint src/", timeout_s: 120 }
`,
  );
  await Deno.writeTextFile(join(dir, "plan.yaml"), PLAN);
  const run = (args: string[]) => git(args, { cwd: dir });
  await run(["init", "-q", "-b", "main"]);
  await run(["add", "-A"]);
  await git([
    "-c",
    "user.name=service demo",
    "-c",
    "user.email=demo@localhost",
    "commit",
    "-q",
    "-m",
    "calculator skeleton",
  ], {
    cwd: dir,
  });
}

/** `service demo`: run the embedded demo plan with scripted agents (no API key needed). */
export const demoCommand: Command = {
  name: "demo",
  summary: "run the embedded demo plan with scripted agents (no API key needed)",
  help: `Usage: service demo [--dir DIR] [--keep] [--no-serve] [--port N]

Creates a scratch git repository (a tiny calculator), a plan of two stages and four tasks, and
runs it with the bundled scripted agent through the generic adapter: agents edit files in their
own worktrees, run tests and report; one task fails its gate once and is retried; every task is
verified and merged. The review board is served from the start of the run at one URL, which
stays valid after the run until Ctrl-C.

Options:
  --dir DIR    where to create the demo repository (default: a new temporary directory)
  --keep       keep the temporary demo repository on exit (a --dir is always kept)
  --no-serve   exit after the run instead of serving the board
  --port N     port of the board (default SERVICE_PORT, else 8052; a busy 8052 falls back to a
               free port and says so, a busy port you chose is an error)`,
  async run(args, ctx) {
    const { values } = parseArgs({
      args,
      options: {
        dir: { type: "string" },
        keep: { type: "boolean", default: false },
        "no-serve": { type: "boolean", default: false },
        port: { type: "string" },
      },
    });
    let choice: ReturnType<typeof portChoice>;
    try {
      choice = portChoice(values.port, resolvePort(undefined, Deno.env.toObject()));
    } catch (e) {
      ctx.stderr(`service demo: ${(e as Error).message}`);
      return 2;
    }
    const scratch = values.dir === undefined;
    const dir = values.dir ?? await Deno.makeTempDir({ prefix: "service-demo-" });
    await Deno.mkdir(dir, { recursive: true });
    if (!scratch) {
      for await (const _ of Deno.readDir(dir)) {
        ctx.stderr(`service demo: ${dir} is not empty: pass --dir with a new or empty directory`);
        return 1;
      }
    }
    const controller = new AbortController();
    const stop = () => controller.abort();
    Deno.addSignalListener("SIGINT", stop);
    Deno.addSignalListener("SIGTERM", stop);
    try {
      ctx.stdout(colour.bold(`demo workspace: ${dir}`));
      await createDemoWorkspace(dir);
      // One server for the whole demo: the board URL printed at the start of the run stays valid.
      const server = await listenByPolicy(
        (port) =>
          startServer({
            warmUpBoard: true,
            // The demo's agents claim as soon as they start.
            warmRoutes: true,
            root: dir,
            host: "127.0.0.1",
            port,
            tokens: [],
            signal: controller.signal,
            announce: false,
            app: ctx.apps.server,
          }),
        choice,
        (line) => ctx.stdout(line),
      );
      const started = Date.now();
      // Loaded when run: a server started by the CLI does not keep the orchestrator.
      const { runPlan } = await import("../../runner/run.ts");
      const result = await runPlan({
        root: dir,
        server,
        app: ctx.apps.server,
        out: ctx.stdout,
        signal: controller.signal,
        alertLine: (nudge, advice) => verificationLine(nudge, colour, advice),
      });
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      ctx.stdout(
        result.status === "completed"
          ? colour.green(
            `demo run ${result.runId} completed in ${seconds} s: every task verified and merged`,
          )
          : colour.red(
            `demo run ${result.runId} ${result.status} after ${seconds} s: ${
              result.problems.join("; ")
            }`,
          ),
      );
      const log = await git(["log", "--oneline", "-8"], { cwd: dir });
      ctx.stdout(`git log of ${dir}:\n${log.stdout.trimEnd().replace(/^/gm, "  ")}`);
      if (values["no-serve"] || controller.signal.aborted) {
        await server.shutdown();
      } else {
        ctx.stdout(
          colour.bold(`review board: ${server.url}/dashboard/review-board?run=${result.runId}`),
        );
        ctx.stdout("serving the board at that address until Ctrl-C");
        await server.finished;
      }
      return result.status === "completed" ? 0 : 1;
    } catch (e) {
      if (e instanceof PortBusyError) {
        ctx.stderr(`service demo: ${e.message}`);
        return 1;
      }
      throw e;
    } finally {
      Deno.removeSignalListener("SIGINT", stop);
      Deno.removeSignalListener("SIGTERM", stop);
      if (scratch && !values.keep) {
        await Deno.remove(dir, { recursive: true }).catch(() => {});
        ctx.stdout(`removed the demo workspace ${dir} (pass --keep to keep it)`);
      } else {
        ctx.stdout(`the demo workspace stays at ${dir}`);
      }
    }
  },
};
