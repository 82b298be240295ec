/**
 * An agent whose model endpoint died is seen for what it is (issue 35): the REAL Codex CLI,
 * run by the service against the Responses-API stand-in, gets its first answer, then the
 * stand-in goes away. Codex keeps writing "Reconnecting…" and looked healthy until its time
 * limit; now `service status` says how long since its last output and that it has made no
 * progress, only reconnects, and the run's terminal says so once. Skipped only when `codex` is
 * not on PATH.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { startFakeResponsesApi } from "./fakes/openai_responses_api.ts";
import { realBinary, realCliWorkspace } from "./_real_cli.ts";
import { CLI, until } from "./_e2e.ts";
import { runDeno, tempDir } from "./helpers.ts";

const codex = await realBinary("codex", "@openai/codex@0.169.0");

Deno.test({
  ignore: !codex,
  sanitizeResources: false,
  sanitizeOps: false,
  name:
    "real Codex whose endpoint died: status says how long it has made no progress, only reconnecting",
  async fn() {
    await using dir = await tempDir("endpoint-died-");
    await using home = await tempDir("endpoint-died-home-");
    const api = startFakeResponsesApi({ commands: ["sleep 1"], finalText: "never sent" });
    await realCliWorkspace(dir.path, "codex", "never.txt");
    const env = {
      LANG: "C.UTF-8",
      DENO_DIR: Deno.env.get("DENO_DIR") ?? join(Deno.env.get("HOME") ?? "/root", ".cache/deno"),
      HOME: home.path,
      CODEX_HOME: home.path,
      OPENAI_API_KEY: "test-key",
      OPENAI_BASE_URL: `${api.url}/v1`,
    };
    const service = (...args: string[]) =>
      runDeno(["run", "-A", CLI, "--root", dir.path, ...args], { clearEnv: true, env });
    let dead = false;
    const started = await service("run", "--detach", "--port", "0");
    assert.equal(started.code, 0, started.text);
    try {
      // Codex got its first answer (a tool call); then its endpoint dies.
      await until("Codex's first request", () => Promise.resolve(api.requests.length > 0), 120_000);
      await api[Symbol.asyncDispose]();
      dead = true;
      let status = "";
      await until("status to say the agent makes no progress", async () => {
        status = (await service("status")).text;
        return /no progress for \d+m/.test(status);
      }, 180_000);
      assert.match(
        status,
        /write: codex session \S+, last output \d+s ago; no progress for \d+m \d+s: it keeps reconnecting to its model \("Reconnecting\.\.\. .*"\); its model endpoint may be down/,
      );
      // The run's terminal says it once, at the next heartbeat (every 15 s).
      const logPath = join(dir.path, ".sdd/runtime/orchestrator.log");
      await until(
        "the run's terminal to say so",
        async () => /its agent has made no progress/.test(await Deno.readTextFile(logPath)),
        60_000,
      );
      const log = await Deno.readTextFile(logPath);
      assert.equal(log.match(/its agent has made no progress/g)?.length, 1, "said once");
      assert.match(
        log,
        /write: its agent has made no progress for 1m \d+s: it keeps reconnecting to its model .*; it is ended at its time limit in (?:\d+m )?\d+s unless it recovers \(`service cancel write` ends it now\)/,
      );
    } finally {
      if (!dead) await api[Symbol.asyncDispose]();
      await service("stop");
    }
  },
});
