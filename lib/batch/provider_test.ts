import assert from "node:assert/strict";
import { batchEndpoint, batchModel, batchProviderOf, batchRoutingHint } from "./provider.ts";

Deno.test("batchProviderOf(): claude has Anthropic's Message Batches, codex OpenAI's Batch API, others none", () => {
  assert.equal(batchProviderOf("claude"), "anthropic");
  assert.equal(batchProviderOf("codex"), "openai");
  assert.equal(batchProviderOf("gemini"), undefined);
  assert.equal(batchProviderOf("generic"), undefined);
});

/** `[name, provider, env, api_url, base URL and headers, or the problem's words]`. */
const CASES: [
  string,
  "anthropic" | "openai",
  Record<string, string>,
  string | undefined,
  [string, Record<string, string>] | RegExp,
][] = [
  ["Anthropic default base with the API key", "anthropic", { ANTHROPIC_API_KEY: "k" }, undefined, [
    "https://api.anthropic.com",
    { "anthropic-version": "2023-06-01", "x-api-key": "k" },
  ]],
  [
    "ANTHROPIC_BASE_URL is the base",
    "anthropic",
    {
      ANTHROPIC_API_KEY: "k",
      ANTHROPIC_BASE_URL: "http://127.0.0.1:9/",
    },
    undefined,
    ["http://127.0.0.1:9", { "anthropic-version": "2023-06-01", "x-api-key": "k" }],
  ],
  [
    "batch.api_url wins over the variable",
    "anthropic",
    {
      ANTHROPIC_API_KEY: "k",
      ANTHROPIC_BASE_URL: "http://a",
    },
    "http://b",
    ["http://b", { "anthropic-version": "2023-06-01", "x-api-key": "k" }],
  ],
  [
    "a gateway's ANTHROPIC_AUTH_TOKEN is a bearer token",
    "anthropic",
    {
      ANTHROPIC_AUTH_TOKEN: "t",
    },
    undefined,
    [
      "https://api.anthropic.com",
      { "anthropic-version": "2023-06-01", authorization: "Bearer t" },
    ],
  ],
  [
    "a subscription's OAuth token cannot call the batch API",
    "anthropic",
    {
      CLAUDE_CODE_OAUTH_TOKEN: "o",
    },
    undefined,
    /needs ANTHROPIC_API_KEY/,
  ],
  ["OpenAI default base", "openai", { OPENAI_API_KEY: "k" }, undefined, [
    "https://api.openai.com/v1",
    { authorization: "Bearer k" },
  ]],
  [
    "OPENAI_BASE_URL, CODEX_API_KEY",
    "openai",
    {
      CODEX_API_KEY: "c",
      OPENAI_BASE_URL: "http://127.0.0.1:9/v1",
    },
    undefined,
    ["http://127.0.0.1:9/v1", { authorization: "Bearer c" }],
  ],
  ["OpenAI without a key", "openai", {}, undefined, /needs OPENAI_API_KEY/],
];

for (const [name, provider, env, apiUrl, expected] of CASES) {
  Deno.test(`batchEndpoint(): ${name}`, () => {
    const got = batchEndpoint(provider, env, apiUrl);
    if (expected instanceof RegExp) {
      assert.ok("problem" in got);
      assert.match(got.problem, expected);
    } else {
      assert.ok(!("problem" in got));
      assert.deepEqual([got.baseUrl, got.headers], expected);
    }
  });
}

Deno.test("batchModel(): Claude Code's aliases become API model ids; defaults per provider", () => {
  assert.equal(batchModel("anthropic", "haiku"), "claude-haiku-4-5");
  assert.equal(batchModel("anthropic", "sonnet[1m]"), "claude-sonnet-5");
  assert.equal(batchModel("anthropic", "claude-opus-4-5"), "claude-opus-4-5");
  assert.equal(batchModel("anthropic"), "claude-sonnet-5");
  assert.equal(batchModel("openai"), "gpt-6-sol");
  assert.equal(batchModel("openai", "gpt-6-luna"), "gpt-6-luna");
});

Deno.test("batchRoutingHint(): the budget stop names batch routing as it can be had", () => {
  assert.match(
    batchRoutingHint("claude"),
    /batch_eligible: true sends claude tasks to Anthropic's Message Batches API at half the price/,
  );
  assert.match(batchRoutingHint("gemini"), /with the claude or codex adapter/);
});
