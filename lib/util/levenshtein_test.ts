import assert from "node:assert/strict";
import { suggest } from "./levenshtein.ts";

const ADAPTERS = ["aider", "claude", "codex", "gemini", "generic", "qwen"];

Deno.test("suggest() names the likely meant name: a typo, or the short name inside a product's", () => {
  const cases: [string, readonly string[], string | undefined][] = [
    ["claud", ADAPTERS, "claude"],
    ["Codex", ADAPTERS, "codex"],
    ["claude-code", ADAPTERS, "claude"],
    ["claude_code", ADAPTERS, "claude"],
    ["gemini-cli", ADAPTERS, "gemini"],
    ["openai-codex", ADAPTERS, "codex"],
    ["aider-chat", ADAPTERS, "aider"],
    ["copilot", ADAPTERS, undefined],
    ["claudette-tool", ADAPTERS, undefined],
    ["", ADAPTERS, undefined],
    ["rol", ["role", "goal", "id"], "role"],
    ["max_agents_total", ["max_agents", "model"], undefined],
  ];
  for (const [name, candidates, meant] of cases) {
    assert.equal(suggest(name, candidates), meant, name);
  }
});
