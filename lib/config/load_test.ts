import assert from "node:assert/strict";
import { loadConfig, loadWorkspaceConfig, parseConfig } from "./load.ts";
import { resolveVars } from "./resolve_vars.ts";
import { PortVariableError } from "./server_config.ts";
import { sha256Hex } from "../journal/hash.ts";
import { ValidationError } from "./errors.ts";
import { YamlSyntaxError } from "./yaml_source.ts";
import { ValueError } from "../agents/errors.ts";
import { UnsetVariableError } from "../util/env_expand.ts";

const MINIMAL = "cli: claude\nroles:\n  backend: {}\n  qa:\n";

Deno.test("parseConfig() fills every default of a minimal file", () => {
  const c = parseConfig(MINIMAL);
  assert.equal(c.cli, "claude");
  assert.deepEqual(c.roles, { backend: {}, qa: {} });
  assert.deepEqual(c.verification_nudge, { threshold: 0.3, min_completions: 3 });
  assert.equal(c.heartbeat_timeout_s, 45);
  assert.equal(c.review.require_approval, false);
  assert.equal(c.recovery.land_unreported, false);
  assert.equal(c.batch_eligible, false);
  assert.deepEqual(c.auth.tokens, []);
  assert.deepEqual(c.protected_paths, []);
  assert.equal(c.enforce_owned_files, false);
  assert.equal(c.max_landed_file_mb, 10);
});

Deno.test("parseConfig() reads max_landed_file_mb as megabytes, or off", () => {
  const cases: [string, number | "off" | false][] = [
    ["25", 25],
    ["0.5", 0.5],
    ["off", "off"],
    ["false", false],
  ];
  for (const [value, want] of cases) {
    const c = parseConfig(`cli: claude\nroles: [qa]\nmax_landed_file_mb: ${value}\n`);
    assert.equal(c.max_landed_file_mb, want, value);
  }
});

Deno.test("parseConfig() accepts every documented key", () => {
  const c = parseConfig(`
cli: generic
cli_command: "my-agent --flag 'two words' \\"q x\\""
prompt_flag: --prompt
model_flag: --model
roles: [backend, qa]
budget_usd: 12.5
max_agents: 4
model: big
effort: high
mcp_servers:
  files: { command: npx, args: ["-y", "srv", "\${HOME}"], env: { TOKEN: "\${MY_TOKEN}" } }
verification_nudge: { threshold: 0.5, min_completions: 5 }
trackers:
  tracker_a:
    webhook: { enabled: true, secret_env: TRACKER_A_SECRET, public_url_base: "https://x.example" }
isolation: container
auto_build_image: true
memory_mb: 2048
cpu_cores: 2
batch_eligible: true
host: 127.0.0.1
port: 9000
heartbeat_timeout_s: 30
review: { require_approval: true }
recovery: { land_unreported: true }
auth:
  tokens: [{ principal: ci, scope: reader, token_env: CI_TOKEN }]
`);
  assert.deepEqual(c.cli_command, ["my-agent", "--flag", "two words", "q x"]);
  assert.deepEqual(Object.keys(c.roles), ["backend", "qa"]);
  assert.equal(c.trackers.tracker_a.webhook?.enabled, true);
  assert.equal(c.review.require_approval, true);
  assert.equal(c.recovery.land_unreported, true);
  const env: Record<string, string> = { HOME: "/h", MY_TOKEN: "t0k" };
  const resolve = (env: (name: string) => string | undefined) =>
    resolveVars(c.mcp_servers ?? {}, { env, prefix: ["mcp_servers"], file: "service.yaml" });
  const mcp = resolve((n) => env[n]);
  assert.deepEqual(mcp.files, { command: "npx", args: ["-y", "srv", "/h"], env: { TOKEN: "t0k" } });
  assert.throws(() => resolve(() => undefined), (e: unknown) => {
    assert.ok(e instanceof UnsetVariableError);
    assert.deepEqual(e.names, ["HOME", "MY_TOKEN"]);
    assert.match(e.message, /HOME, MY_TOKEN/);
    return true;
  });
});

interface BrokenConfig {
  name: string;
  text: string;
  error: new (...a: never[]) => Error;
  message: RegExp;
}

const BROKEN: BrokenConfig[] = [
  {
    name: "missing cli names the key, line and an example",
    text: "roles:\n  backend: {}\n",
    error: ValidationError,
    message: /:1:1: cli: missing required key 'cli' at the top level[\s\S]*cli: claude/,
  },
  {
    name: "missing roles",
    text: "cli: claude\n",
    error: ValidationError,
    message: /roles: missing required key 'roles'[\s\S]*backend: \{\}/,
  },
  {
    name: "a misspelt required key is named for a rename, not reported missing",
    text: "cli: claude\nrole:\n  backend: {}\n",
    error: ValidationError,
    message:
      /:2:1: role: unknown key 'role' \(did you mean 'roles'\?\)\n {2}fix: rename 'role' to 'roles'$/,
  },
  {
    name: "a missing key names the unknown keys written instead",
    text: "cli: claude\nagents:\n  backend: {}\n",
    error: ValidationError,
    message:
      /roles: missing required key 'roles' at the top level \('agents' is not a key here\)\n {2}fix: remove 'agents' and add it/,
  },
  {
    name: "an unknown key in a role suggests the role's own key",
    text: "cli: claude\nroles:\n  backend: {modle: big}\n",
    error: ValidationError,
    message: /:3:13: roles\.backend\.modle: unknown key 'modle' \(did you mean 'model'\?\)/,
  },
  {
    name: "an unknown key in a role lists a role's keys",
    text: "cli: claude\nroles:\n  backend: {colour: red}\n",
    error: ValidationError,
    message: /remove 'colour'; known keys here: description, model, /,
  },
  {
    name: "unknown top-level key suggests the closest",
    text: "cli: claude\nroles: [qa]\nmax_agent: 3\n",
    error: ValidationError,
    message: /:3:1: max_agent: unknown key 'max_agent' \(did you mean 'max_agents'\?\)/,
  },
  {
    name: "unknown nested key suggests the closest",
    text: "cli: claude\nroles: [qa]\nverification_nudge:\n  treshold: 0.2\n",
    error: ValidationError,
    message: /:4:3: verification_nudge\.treshold: unknown key .*did you mean 'threshold'/,
  },
  {
    name: "a mistyped recovery key names recovery.land_unreported",
    text: "cli: claude\nroles: [qa]\nrecovery:\n  land_unreportd: true\n",
    error: ValidationError,
    message: /:4:3: recovery\.land_unreportd: unknown key .*did you mean 'land_unreported'/,
  },
  {
    name: "unknown webhook key",
    text:
      "cli: claude\nroles: [qa]\ntrackers:\n  tracker_a:\n    webhook: {enabled: true, secret_env: S, secert: x}\n",
    error: ValidationError,
    message: /trackers\.tracker_a\.webhook\.secert: unknown key/,
  },
  {
    name: "comment_on_land without the project it may comment in",
    text: "cli: claude\nroles: [qa]\ntrackers:\n  tracker_b:\n    comment_on_land: true\n",
    error: ValidationError,
    message:
      /:5:22: trackers\.tracker_b\.comment_on_land: needs trackers\.tracker_b\.project, the one project whose tickets become tasks and get comments: set it \(GitHub owner\/name/,
  },
  {
    name: "polling: true without the project to poll",
    text: "cli: claude\nroles: [qa]\ntrackers:\n  tracker_c:\n    polling: true\n",
    error: ValidationError,
    message: /trackers\.tracker_c\.polling: needs trackers\.tracker_c\.project/,
  },
  {
    name: "missing webhook secret_env",
    text: "cli: claude\nroles: [qa]\ntrackers:\n  tracker_b:\n    webhook:\n      enabled: true\n",
    error: ValidationError,
    message: /:5:5: trackers\.tracker_b\.webhook\.secret_env: missing required key/,
  },
  {
    name: "yes is not a boolean",
    text: "cli: claude\nroles: [qa]\nbatch_eligible: yes\n",
    error: ValidationError,
    message: /:3:17: batch_eligible: expected boolean, got string/,
  },
  {
    name: "unknown adapter lists the available ones",
    text: "cli: cursor\nroles: [qa]\n",
    error: ValueError,
    message:
      /Unknown adapter 'cursor'\. Available adapters: aider, claude, codex, gemini, generic, qwen/,
  },
  {
    name: "a misspelt adapter names the one meant",
    text: "cli: claud\nroles: [qa]\n",
    error: ValueError,
    message: /Unknown adapter 'claud'\. Available adapters: .* \(did you mean 'claude'\?\)$/,
  },
  {
    name: "malformed YAML",
    text: "cli: claude\nroles: [qa\n",
    error: YamlSyntaxError,
    message: /not valid YAML/,
  },
  {
    name: "a list instead of a mapping",
    text: "- cli\n- roles\n",
    error: ValidationError,
    message: /must be a mapping/,
  },
  {
    name: "unterminated quote in cli_command",
    text: 'cli: generic\ncli_command: "agent \'oops"\nroles: [qa]\n',
    error: ValidationError,
    message: /cli_command: unterminated single quote/,
  },
  {
    name: "generic without cli_command",
    text: "cli: generic\nroles: [qa]\n",
    error: ValidationError,
    message: /generic adapter needs `cli_command`/,
  },
  {
    name: "threshold above 1",
    text: "cli: claude\nroles: [qa]\nverification_nudge: {threshold: 1.5}\n",
    error: ValidationError,
    message: /verification_nudge\.threshold/,
  },
  {
    name: "empty roles",
    text: "cli: claude\nroles: {}\n",
    error: ValidationError,
    message: /roles: list at least one role/,
  },
  {
    name: "a protected_paths entry that lifts service.yaml",
    text: "cli: claude\nroles: [qa]\nprotected_paths: ['infra/**', '!service.yaml']\n",
    error: ValidationError,
    message:
      /service\.yaml:3:31: protected_paths\[1\]: '!service\.yaml' cannot lift service\.yaml: the service itself obeys it/,
  },
  {
    name: "a protected_paths entry that lifts the service's state",
    text: "cli: claude\nroles: [qa]\nprotected_paths: ['!.sdd/**']\n",
    error: ValidationError,
    message: /cannot lift \.sdd\/\*\*/,
  },
  {
    name: "move_to on a tracker of one's own module (it has no API client to move tickets)",
    text: "cli: claude\nroles: [qa]\ntrackers:\n  acme:\n    module: ./acme.ts\n" +
      "    project: ACME\n    move_to: {landed: Done}\n",
    error: ValidationError,
    message: /trackers\.acme\.move_to: trackers\.acme is a tracker of your own module/,
  },
  ...["0", "-1", "'10MB'", "true", ".inf", "[10]", "null"].map((value) => ({
    name: `max_landed_file_mb: ${value}`,
    text: `cli: claude\nroles: [qa]\nmax_landed_file_mb: ${value}\n`,
    error: ValidationError,
    message:
      /max_landed_file_mb must be a number of megabytes above 0 .*or `off` to let files of any size land/,
  })),
  {
    name: "enforce_owned_files that is not a boolean",
    text: "cli: claude\nroles: [qa]\nenforce_owned_files: yes\n",
    error: ValidationError,
    message: /enforce_owned_files/,
  },
];

for (const c of BROKEN) {
  Deno.test(`parseConfig() rejects: ${c.name}`, () => {
    assert.throws(() => parseConfig(c.text, "service.yaml"), (e: unknown) => {
      assert.ok(e instanceof c.error, `${(e as Error).name}: ${(e as Error).message}`);
      assert.match((e as Error).message, c.message);
      return true;
    });
  });
}

Deno.test("loadConfig() answers undefined when the workspace has no service.yaml", async () => {
  const root = await Deno.makeTempDir();
  try {
    assert.equal(await loadConfig(root), undefined);
    await Deno.writeTextFile(`${root}/service.yaml`, MINIMAL);
    assert.equal((await loadConfig(root))?.cli, "claude");
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("loadWorkspaceConfig() reads service.yaml once: the config, the server's settings, the digest of the bytes validated", async () => {
  const root = await Deno.makeTempDir();
  try {
    const absent = await loadWorkspaceConfig(root, {});
    assert.equal(absent.config, undefined);
    assert.equal(absent.digest, undefined);
    assert.deepEqual(
      [absent.server.host, absent.server.port, absent.server.portSource, absent.server.tokens],
      ["127.0.0.1", 8052, "default", []],
    );
    const text = MINIMAL +
      "host: 127.0.0.2\nport: 9000\nserver:\n  max_event_streams: 7\n" +
      "auth:\n  tokens:\n    - {principal: op, scope: operator, token_env: T_OP}\n";
    await Deno.writeTextFile(`${root}/service.yaml`, text);
    const w = await loadWorkspaceConfig(root, {});
    assert.equal(w.config?.cli, "claude");
    assert.equal(w.digest, `sha256:${sha256Hex(text)}`);
    assert.deepEqual(
      [w.server.host, w.server.port, w.server.portSource, w.server.server.max_event_streams],
      ["127.0.0.2", 9000, "service.yaml", 7],
    );
    assert.deepEqual(w.server.tokens, [{ principal: "op", scope: "operator", token_env: "T_OP" }]);
    const env = await loadWorkspaceConfig(root, { SERVICE_PORT: "9100" });
    assert.deepEqual([env.server.port, env.server.portSource], [9100, "SERVICE_PORT"]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("the server's settings are validated with the rest of service.yaml: a misspelt key is named with its line and the fix", async () => {
  const root = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${root}/service.yaml`, MINIMAL + "server:\n  max_event_stream: 5\n");
    await assert.rejects(() => loadWorkspaceConfig(root, {}), (e: unknown) => {
      assert.ok(e instanceof ValidationError, String(e));
      assert.match(
        e.message,
        /service\.yaml:6:3: server\.max_event_stream: unknown key 'max_event_stream' \(did you mean 'max_event_streams'\?\)\n {2}fix: rename/,
      );
      return true;
    });
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("a SERVICE_PORT that is not a port number is a PortVariableError that says how to fix it", async () => {
  const root = await Deno.makeTempDir();
  try {
    await assert.rejects(() => loadWorkspaceConfig(root, { SERVICE_PORT: "80a" }), (e: unknown) => {
      assert.ok(e instanceof PortVariableError, String(e));
      assert.equal(e.message, 'SERVICE_PORT="80a" is not a port number (0-65535)');
      assert.match(e.fix ?? "", /set SERVICE_PORT to a port number from 0 to 65535, or unset it/);
      return true;
    });
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
