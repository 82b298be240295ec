import assert from "node:assert/strict";
import { imageNeeds, lacksShell, networkTargets } from "./probe.ts";
import type { ContainerSettings } from "./settings.ts";

const settings: ContainerSettings = {
  runtime: "auto",
  autoBuildImage: false,
  image: "x",
  baseImage: "debian:bookworm-slim",
  install: [],
  setupNetwork: true,
  agentNetwork: "restricted",
  allowHosts: [{ host: "pypi.org", port: 443 }],
};
const endpoints = [{ env: "ANTHROPIC_BASE_URL", default: "https://api.anthropic.com" }];

Deno.test("networkTargets(): the adapter's endpoint (its variable wins over the default) and allow_hosts", () => {
  assert.deepEqual(networkTargets(settings, endpoints, {}).map((t) => `${t.host}:${t.port}`), [
    "api.anthropic.com:443",
    "pypi.org:443",
  ]);
  const gateway = networkTargets(settings, endpoints, {
    ANTHROPIC_BASE_URL: "http://127.0.0.1:4000",
  });
  assert.equal(gateway[0].port, 4000);
  assert.match(gateway[0].why, /ANTHROPIC_BASE_URL/);
});

Deno.test("networkTargets(): restricted refuses an endpoint it cannot relay (an IP address); open takes it", () => {
  const env = { ANTHROPIC_BASE_URL: "http://10.0.0.5:8080" };
  assert.throws(() => networkTargets(settings, endpoints, env), /cannot relay 10\.0\.0\.5:8080/);
  assert.equal(
    networkTargets({ ...settings, agentNetwork: "open" }, endpoints, env)[0].host,
    "10.0.0.5",
  );
});

Deno.test("imageNeeds(): an agent's container needs its CLI, git and the entry script's tools, and socat whenever its network relays the task server", () => {
  const commands = (agentNetwork: ContainerSettings["agentNetwork"], agent = true) =>
    imageNeeds({ ...settings, agentNetwork, allowHosts: [] }, "claude", agent).map((n) =>
      n.command
    );
  // No endpoint and no allow_hosts: the task server alone is relayed, so socat is still needed.
  assert.deepEqual(commands("restricted"), ["claude", "cat", "mkdir", "git", "socat", "sleep"]);
  assert.deepEqual(commands("open"), ["claude", "cat", "mkdir", "git", "socat", "sleep"]);
  assert.deepEqual(commands("none"), ["claude", "cat", "mkdir", "git"]);
  // A catalog install's container runs its command behind the entry script only.
  assert.deepEqual(commands("open", false), ["claude", "cat", "mkdir"]);
  for (const n of imageNeeds(settings, "claude")) assert.ok(n.why.length > 5, n.command);
});

Deno.test("lacksShell(): only the runtime's exec error for sh says an image has no shell, not a storage error's words", () => {
  const cases: [string, boolean][] = [
    // podman with runc, sh not on the image's PATH / not at the path given
    [
      'Error: runc: runc create failed: unable to start container process: exec: "sh": executable file not found in $PATH: OCI runtime attempted to invoke a command that was not found',
      true,
    ],
    [
      "Error: crun: executable file `sh` not found in $PATH: No such file or directory: OCI runtime attempted to invoke a command that was not found",
      true,
    ],
    // docker
    [
      'docker: Error response from daemon: failed to create task for container: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: "sh": executable file not found in $PATH: unknown.',
      true,
    ],
    ['exec: "sh": stat sh: no such file or directory', true],
    // the runtime's own storage, racing another podman process: the image is fine
    [
      "Error: mounting storage for container abc: creating overlay mount to /var/lib/containers/storage/overlay/123/merged: no such file or directory",
      false,
    ],
    [
      "Error: open /var/lib/containers/storage/overlay-layers/layers.json: no such file or directory",
      false,
    ],
    ["Error: runc: exec failed: executable file not found", false],
  ];
  for (const [stderr, expected] of cases) assert.equal(lacksShell(stderr), expected, stderr);
});
