import assert from "node:assert/strict";
import { codexAdapter, codexHeadless } from "./codex.ts";
import { geminiAdapter, geminiHeadless } from "./gemini.ts";
import type { HeadlessSetup } from "./types.ts";

const STATE = "/ws/.sdd/runtime/agents/gemini";
const SETTINGS = {
  path: `${STATE}/home/.gemini/settings.json`,
  json: { security: { auth: { selectedType: "gemini-api-key" } } },
  mergeOver: "/home/u/.gemini/settings.json",
};

const CASES: [
  string,
  (env: Record<string, string>) => HeadlessSetup,
  Record<string, string>,
  HeadlessSetup,
][] = [
  ["codex: OPENAI_API_KEY is passed on as CODEX_API_KEY", codexHeadless, { OPENAI_API_KEY: "k" }, {
    env: { OPENAI_API_KEY: "k", CODEX_API_KEY: "k" },
    args: [],
    files: [],
  }],
  ["codex: a CODEX_API_KEY of its own wins", codexHeadless, {
    OPENAI_API_KEY: "k",
    CODEX_API_KEY: "c",
  }, {
    env: { OPENAI_API_KEY: "k", CODEX_API_KEY: "c" },
    args: [],
    files: [],
  }],
  ["codex: OPENAI_BASE_URL becomes -c openai_base_url", codexHeadless, {
    CODEX_API_KEY: "c",
    OPENAI_BASE_URL: "http://127.0.0.1:9/v1",
  }, {
    env: { CODEX_API_KEY: "c", OPENAI_BASE_URL: "http://127.0.0.1:9/v1" },
    args: ["-c", 'openai_base_url="http://127.0.0.1:9/v1"'],
    files: [],
  }],
  ["gemini: a key without an endpoint needs nothing", (e) => geminiHeadless(e, STATE), {
    GEMINI_API_KEY: "g",
  }, { env: { GEMINI_API_KEY: "g" }, args: [], files: [] }],
  ["gemini: GOOGLE_API_KEY is passed on as GEMINI_API_KEY", (e) => geminiHeadless(e, STATE), {
    GOOGLE_API_KEY: "g",
  }, { env: { GOOGLE_API_KEY: "g", GEMINI_API_KEY: "g" }, args: [], files: [] }],
  [
    "gemini: an endpoint gets API-key auth selected in its own home",
    (e) => geminiHeadless(e, STATE),
    {
      GEMINI_API_KEY: "g",
      GOOGLE_GEMINI_BASE_URL: "http://127.0.0.1:9",
      HOME: "/home/u",
    },
    {
      env: {
        GEMINI_API_KEY: "g",
        GOOGLE_GEMINI_BASE_URL: "http://127.0.0.1:9",
        HOME: "/home/u",
        GEMINI_CLI_HOME: `${STATE}/home`,
      },
      args: [],
      files: [SETTINGS],
    },
  ],
  ["gemini: Vertex AI is left to Gemini", (e) => geminiHeadless(e, STATE), {
    GOOGLE_GENAI_USE_VERTEXAI: "true",
    GOOGLE_API_KEY: "v",
    GOOGLE_GEMINI_BASE_URL: "http://127.0.0.1:9",
  }, {
    env: {
      GOOGLE_GENAI_USE_VERTEXAI: "true",
      GOOGLE_API_KEY: "v",
      GOOGLE_GEMINI_BASE_URL: "http://127.0.0.1:9",
    },
    args: [],
    files: [],
  }],
];

for (const [name, setup, env, expected] of CASES) {
  Deno.test(`headless: ${name}`, () => assert.deepEqual(setup(env), expected));
}

const PROBLEMS: [string, typeof codexAdapter, Record<string, string>, RegExp | undefined][] = [
  ["codex with a key is fine", codexAdapter, { OPENAI_API_KEY: "k" }, undefined],
  [
    "codex: a bad endpoint",
    codexAdapter,
    { OPENAI_BASE_URL: "localhost:8080" },
    /not an http\(s\) URL/,
  ],
  ["gemini with a key and endpoint is fine", geminiAdapter, {
    GEMINI_API_KEY: "g",
    GOOGLE_GEMINI_BASE_URL: "http://127.0.0.1:9",
  }, undefined],
  [
    "gemini: Vertex AI without a project",
    geminiAdapter,
    { GOOGLE_GENAI_USE_VERTEXAI: "true" },
    /no project.*GOOGLE_CLOUD_PROJECT/,
  ],
  ["gemini: Vertex AI with a project", geminiAdapter, {
    GOOGLE_GENAI_USE_VERTEXAI: "true",
    GOOGLE_CLOUD_PROJECT: "p",
    GOOGLE_CLOUD_LOCATION: "us-central1",
  }, undefined],
  ["gemini: no key at all", geminiAdapter, {}, /GEMINI_API_KEY/],
];

for (const [name, adapter, env, expected] of PROBLEMS) {
  Deno.test(`headlessProblem(): ${name}`, () => {
    const problem = adapter.headlessProblem!(env);
    if (expected) assert.match(`${problem?.problem}: ${problem?.fix}`, expected);
    else assert.equal(problem, undefined);
  });
}
