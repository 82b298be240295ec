/**
 * `service doctor` passes exactly what `service run` accepts: its agent-CLI and API-key checks are
 * the preflight `run` makes (one PATH lookup, one executable rule, one key rule). Each row sets up
 * a workspace and an environment, runs the real `doctor` and calls `run`'s preflight the way
 * `run` does, and checks both give the same verdict, the expected one.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { configuredAdapter, loadConfig } from "../lib/config/load.ts";
import { preflight } from "../lib/agents/preflight.ts";
import { tempDir } from "./helpers.ts";

const CLI = new URL("../cli.ts", import.meta.url).pathname;

interface Case {
  name: string;
  config: string;
  /** Files to create in the workspace: path → executable? */
  files?: Record<string, boolean>;
  /** Put an executable `claude` on PATH. */
  claudeOnPath?: boolean;
  env?: Record<string, string>;
  ok: boolean;
}

const CASES: Case[] = [
  {
    name: "a workspace-relative cli_command (./bin/agent), executable",
    config: "cli: generic\ncli_command: ./bin/agent --go\nroles: [qa]\n",
    files: { "bin/agent": true },
    ok: true,
  },
  {
    name: "a workspace-relative cli_command that is not executable",
    config: "cli: generic\ncli_command: ./bin/agent\nroles: [qa]\n",
    files: { "bin/agent": false },
    ok: false,
  },
  {
    name: "a cli_command that is nowhere",
    config: "cli: generic\ncli_command: no-such-agent-binary\nroles: [qa]\n",
    ok: false,
  },
  {
    name: "claude through a gateway: endpoint and token, no provider key",
    config: "cli: claude\nroles: [qa]\n",
    claudeOnPath: true,
    env: { ANTHROPIC_BASE_URL: "http://127.0.0.1:9", ANTHROPIC_AUTH_TOKEN: "t" },
    ok: true,
  },
  {
    name: "claude with a gateway token but no endpoint",
    config: "cli: claude\nroles: [qa]\n",
    claudeOnPath: true,
    env: { ANTHROPIC_AUTH_TOKEN: "t" },
    ok: false,
  },
  {
    name: "claude with its provider key",
    config: "cli: claude\nroles: [qa]\n",
    claudeOnPath: true,
    env: { ANTHROPIC_API_KEY: "k" },
    ok: true,
  },
];

for (const c of CASES) {
  Deno.test(`doctor and run agree: ${c.name}`, async () => {
    await using ws = await tempDir();
    await using bin = await tempDir();
    await Deno.symlink("/usr/bin/git", join(bin.path, "git"));
    if (c.claudeOnPath) {
      await Deno.writeTextFile(join(bin.path, "claude"), "#!/bin/sh\nexit 0\n", { mode: 0o755 });
    }
    await Deno.writeTextFile(join(ws.path, "service.yaml"), c.config);
    for (const [path, executable] of Object.entries(c.files ?? {})) {
      await Deno.mkdir(join(ws.path, path, ".."), { recursive: true });
      await Deno.writeTextFile(join(ws.path, path), "#!/bin/sh\nexit 0\n", {
        mode: executable ? 0o755 : 0o644,
      });
    }
    const env = { PATH: bin.path, HOME: ws.path, ...c.env };

    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", CLI, "--root", ws.path, "doctor", "--json"],
      env: { ...env, NO_COLOR: "1", RUST_BACKTRACE: "0", SERVICE_PORT: "0" },
      clearEnv: true,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const report = JSON.parse(new TextDecoder().decode(out.stdout));
    const rows = (report.checks as { name: string; ok: boolean; detail: string }[])
      .filter((r) => r.name.startsWith("agent cli") || r.name === "api key");
    assert.ok(rows.length > 0);
    const doctorOk = rows.every((r) => r.ok);

    const adapter = configuredAdapter((await loadConfig(ws.path))!);
    const runOk = await preflight(adapter, { env, cwd: ws.path, workdir: ws.path, warn: () => {} })
      .then(() => true, () => false);

    assert.equal(doctorOk, runOk, `doctor ${JSON.stringify(rows)} vs run ${runOk}`);
    assert.equal(runOk, c.ok);
  });
}
