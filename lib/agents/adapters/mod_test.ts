import assert from "node:assert/strict";
import { adapterByName, availableAdapters, BUILTIN_ADAPTERS, registerAdapter } from "./mod.ts";
import type { AdapterInput, AgentAdapter } from "./types.ts";
import { ValueError } from "../errors.ts";

const base: AdapterInput = { prompt: "-fix the bug", workdir: "/w" };
const TOOLS = "Bash,Edit,MultiEdit,Write,Read,Glob,Grep,NotebookEdit,TodoWrite";
const CLAUDE_HEAD = [
  "-p",
  "--output-format",
  "stream-json",
  "--verbose",
  "--permission-mode",
  "acceptEdits",
  "--allowedTools",
  TOOLS,
];

const CASES: [string, string, Partial<AdapterInput>, string[]][] = [
  ["claude uses the CLI default model", "claude", {}, [...CLAUDE_HEAD, "--", "-fix the bug"]],
  ["claude: model config wins over complexity", "claude", { model: "opus", complexity: "low" }, [
    ...CLAUDE_HEAD,
    "--model",
    "opus",
    "--",
    "-fix the bug",
  ]],
  ["claude: complexity low routes to haiku", "claude", { complexity: "low" }, [
    ...CLAUDE_HEAD,
    "--model",
    "haiku",
    "--",
    "-fix the bug",
  ]],
  ["claude: complexity high keeps the default", "claude", { complexity: "high" }, [
    ...CLAUDE_HEAD,
    "--",
    "-fix the bug",
  ]],
  ["claude passes effort and the MCP config", "claude", {
    effort: "high",
    mcpConfigPath: "/m.json",
  }, [
    ...CLAUDE_HEAD,
    "--effort",
    "high",
    "--mcp-config",
    "/m.json",
    "--",
    "-fix the bug",
  ]],
  ["codex exec with sandbox, json and effort", "codex", { effort: "low", mcpConfigPath: "/m" }, [
    "exec",
    "--json",
    "--sandbox",
    "workspace-write",
    "-c",
    "sandbox_workspace_write.network_access=true",
    "--skip-git-repo-check",
    "--cd",
    "/w",
    "-c",
    'model_reasoning_effort="low"',
    "--",
    "-fix the bug",
  ]],
  ["codex: complexity low routes to its cheapest model", "codex", { complexity: "low" }, [
    "exec",
    "--json",
    "--sandbox",
    "workspace-write",
    "-c",
    "sandbox_workspace_write.network_access=true",
    "--skip-git-repo-check",
    "--cd",
    "/w",
    "--model",
    "gpt-6-luna",
    "--",
    "-fix the bug",
  ]],
  ["gemini ignores effort and MCP config", "gemini", { effort: "high", mcpConfigPath: "/m" }, [
    "--approval-mode",
    "yolo",
    "--skip-trust",
    "--output-format",
    "stream-json",
    "--prompt=-fix the bug",
  ]],
  ["gemini passes the model", "gemini", { model: "gemini-2.5-pro" }, [
    "--approval-mode",
    "yolo",
    "--skip-trust",
    "--output-format",
    "stream-json",
    "--model",
    "gemini-2.5-pro",
    "--prompt=-fix the bug",
  ]],
  ["gemini: complexity low routes to its flash-lite alias", "gemini", { complexity: "low" }, [
    "--approval-mode",
    "yolo",
    "--skip-trust",
    "--output-format",
    "stream-json",
    "--model",
    "flash-lite",
    "--prompt=-fix the bug",
  ]],
  ["qwen takes a runtime MCP config", "qwen", { mcpConfigPath: "/m.json" }, [
    "--approval-mode",
    "yolo",
    "--output-format",
    "stream-json",
    "--mcp-config",
    "/m.json",
    "--",
    "-fix the bug",
  ]],
  ["aider runs one message without auto-commits", "aider", { model: "sonnet" }, [
    "--yes-always",
    "--no-auto-commits",
    "--no-pretty",
    "--no-stream",
    "--no-check-update",
    "--no-show-model-warnings",
    "--model",
    "sonnet",
    "--message",
    "-fix the bug",
  ]],
];

for (const [name, adapter, extra, expected] of CASES) {
  Deno.test(`buildArgv(): ${name}`, () => {
    assert.deepEqual(adapterByName(adapter).buildArgv({ ...base, ...extra }), expected);
  });
}

const GENERIC: [string, Parameters<typeof adapterByName>[1], string, string[]][] = [
  [
    "prompt is the last positional without prompt_flag",
    { cliCommand: "my-agent --headless" },
    "my-agent",
    [
      "--headless",
      "-fix the bug",
    ],
  ],
  [
    "prompt_flag and model_flag",
    {
      cliCommand: "'/opt/my agent/bin' run",
      promptFlag: "--prompt",
      modelFlag: "-m",
    },
    "/opt/my agent/bin",
    ["run", "-m", "big", "--prompt", "-fix the bug"],
  ],
  ["a list command is taken as is", { cliCommand: ["agent", "a b"] }, "agent", [
    "a b",
    "-fix the bug",
  ]],
];

for (const [name, options, binary, expected] of GENERIC) {
  Deno.test(`generic adapter: ${name}`, () => {
    const a = adapterByName("generic", options);
    assert.equal(a.binary, binary);
    const input = { ...base, model: options?.modelFlag ? "big" : undefined };
    assert.deepEqual(a.buildArgv(input), expected);
  });
}

Deno.test("adapterByName() rejects an unknown adapter and lists the available ones", () => {
  assert.throws(() => adapterByName("cursor"), (e: unknown) => {
    assert.ok(e instanceof ValueError);
    assert.equal(
      String(e),
      "ValueError: Unknown adapter 'cursor'. Available adapters: " + availableAdapters().join(", "),
    );
    assert.match(String(e), /aider, claude, codex, gemini, generic, qwen/);
    return true;
  });
});

Deno.test("adapterByName('generic') without cli_command is a ValueError", () => {
  assert.throws(() => adapterByName("generic"), ValueError);
  assert.throws(() => adapterByName("generic", { cliCommand: "  " }), ValueError);
});

Deno.test("registerAdapter() adds a third-party adapter and refuses duplicates", () => {
  const mine: AgentAdapter = {
    name: "third-party-test",
    binary: "tp",
    apiKeyEnv: [],
    passEnv: [],
    acceptsMcpConfig: false,
    supportsEffort: false,
    buildArgv: (i) => [i.prompt],
    parseUsage: () => undefined,
  };
  registerAdapter(mine);
  assert.equal(adapterByName("third-party-test"), mine);
  assert.ok(availableAdapters().includes("third-party-test"));
  assert.throws(() => registerAdapter(mine), ValueError);
  assert.throws(() => registerAdapter({ ...mine, name: "claude" }), ValueError);
});

Deno.test("every built-in adapter documents its binary and key variables", () => {
  for (const a of BUILTIN_ADAPTERS) {
    assert.ok(a.binary && a.apiKeyEnv.length > 0, a.name);
    for (const key of a.apiKeyEnv) assert.ok(a.passEnv.includes(key), `${a.name} forwards ${key}`);
  }
});
