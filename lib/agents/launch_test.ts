import assert from "node:assert/strict";
import { join } from "node:path";
import { mergeJson, prepareHeadless } from "./launch.ts";
import { geminiAdapter } from "./adapters/gemini.ts";
import { claudeAdapter } from "./adapters/claude.ts";

Deno.test("mergeJson() merges objects deeply and lets the top win elsewhere", () => {
  assert.deepEqual(
    mergeJson(
      { a: 1, s: { auth: { selectedType: "oauth-personal", x: 1 } }, l: [1] },
      { s: { auth: { selectedType: "gemini-api-key" } }, l: [2] },
    ),
    { a: 1, s: { auth: { selectedType: "gemini-api-key", x: 1 } }, l: [2] },
  );
});

Deno.test("prepareHeadless() writes Gemini's settings over the user's, private to the service", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const home = join(dir, "home");
    await Deno.mkdir(join(home, ".gemini"), { recursive: true });
    await Deno.writeTextFile(
      join(home, ".gemini", "settings.json"),
      JSON.stringify({ mcpServers: { m: { command: "x" } } }),
    );
    const runtime = join(dir, ".sdd", "runtime"); // a fresh workspace: nothing exists yet
    const launch = await prepareHeadless(geminiAdapter, {
      HOME: home,
      GEMINI_API_KEY: "g",
      GOOGLE_GEMINI_BASE_URL: "http://127.0.0.1:9",
    }, runtime);
    const settingsPath = join(launch.env.GEMINI_CLI_HOME, ".gemini", "settings.json");
    assert.ok(settingsPath.startsWith(join(runtime, "agents", "gemini")));
    assert.deepEqual(JSON.parse(await Deno.readTextFile(settingsPath)), {
      mcpServers: { m: { command: "x" } },
      security: { auth: { selectedType: "gemini-api-key" } },
    });
    assert.equal((await Deno.stat(settingsPath)).mode! & 0o777, 0o600);
    assert.deepEqual(launch.args, []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("prepareHeadless() leaves an adapter without needs alone", async () => {
  const env = { ANTHROPIC_API_KEY: "a" };
  assert.deepEqual(await prepareHeadless(claudeAdapter, env, "/nonexistent"), { env, args: [] });
});
