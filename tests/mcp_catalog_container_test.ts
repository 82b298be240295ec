/**
 * `mcp_catalog.isolation` as a user meets it: with a container runtime and an agent image
 * configured, a catalog entry's install command runs in a throwaway container (not root, only
 * its temporary directory of this machine, none of the user's files) and the preview says so;
 * with `mcp_catalog.isolation: container` and no runtime it is refused with a ContainerError and
 * nothing runs; without a runtime the default installs on this machine and the preview says why.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { catalogWorkspace as workspace, USER_CONFIG } from "./_mcp_catalog.ts";
import { validEntry } from "../lib/catalog/_test_catalog.ts";
import { managedBlock } from "../lib/catalog/managed_config.ts";
import { skipping, testImage } from "./_container_image.ts";

const image = await testImage();
const ignore = skipping(image);

/** An entry whose install command says where it ran and what it could see. */
const PROBE = validEntry({
  id: "probe",
  transports: ["http"],
  command: "probe-server",
  install_command: [
    "sh",
    "-c",
    'echo "where=$(cat /proc/sys/kernel/hostname)"; ' +
    'echo "uid=$(id -u)"; ls "$1" >/dev/null 2>&1 && echo home=visible || echo home=hidden',
    "probe",
  ],
});

/** service.yaml of the workspace at `home`. */
async function serviceYaml(home: string, extra: string): Promise<void> {
  await Deno.writeTextFile(
    join(home, "service.yaml"),
    `cli: generic\ncli_command: [sh]\nroles:\n  backend: {}\n${extra}`,
  );
}

Deno.test({
  name: "mcp catalog: with a runtime and an agent image, the install command runs in a " +
    "throwaway container, not as root, without the user's files; the preview says where",
  ignore,
  async fn() {
    await using ws = await workspace();
    await serviceYaml(ws.home, `container:\n  image: ${image.ok ? image.ref : ""}\n`);
    ws.catalog.entries = [{
      ...PROBE,
      install_command: [...PROBE.install_command as string[], ws.home],
    }];
    const r = await ws.run(["install", "probe", "--yes"]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /in a throwaway podman container of localhost\/service-test-agent/);
    assert.match(r.stderr, /│ where=\S+/);
    assert.doesNotMatch(r.stderr, new RegExp(`│ where=${Deno.hostname()}\\b`), "a host of its own");
    assert.doesNotMatch(r.stderr, /│ uid=0\b/, "not root");
    assert.match(r.stderr, /│ home=hidden/, "the user's HOME is not mounted");
    assert.deepEqual(managedBlock(await Deno.readTextFile(ws.configPath)).mcpServers.probe, {
      command: "probe-server",
      args: [],
      env: {},
    });
    const left = await new Deno.Command(image.ok ? image.bin : "true", {
      args: [
        "ps",
        "--all",
        "--filter",
        "label=io.service.phase=mcp-install",
        "--format",
        "{{.Names}}",
      ],
      stdout: "piped",
    }).output();
    assert.equal(new TextDecoder().decode(left.stdout).trim(), "", "no container is left");
  },
});

Deno.test("mcp catalog: mcp_catalog.isolation: container without a runtime is a ContainerError before anything runs; the default installs on this machine and says why", async () => {
  await using ws = await workspace();
  await using bin = await Deno.makeTempDir({ prefix: "service-path-" }).then((path) => ({
    path,
    [Symbol.asyncDispose]: () => Deno.remove(path, { recursive: true }),
  }));
  for (const tool of ["sh", "id", "ls", "cat", "git"]) {
    const found = new TextDecoder().decode(
      (await new Deno.Command("sh", { args: ["-c", `command -v ${tool}`], stdout: "piped" })
        .output()).stdout,
    ).trim();
    await Deno.symlink(found, join(bin.path, tool));
  }
  ws.catalog.entries = [{
    ...PROBE,
    install_command: [...PROBE.install_command as string[], ws.home],
  }];
  const env = { PATH: bin.path };
  await serviceYaml(
    ws.home,
    `mcp_catalog:\n  url: https://example.invalid/c.json\n  isolation: container\n`,
  );
  const refused = await ws.run(["install", "probe", "--yes"], { env });
  assert.equal(refused.code, 1, refused.stdout + refused.stderr);
  assert.match(refused.stderr, /ContainerError|podman or docker is not on PATH/);
  assert.match(refused.stderr, /mcp_catalog\.isolation: host/, "it names the way out");
  assert.doesNotMatch(refused.stderr, /where=/, "nothing ran");
  assert.equal(await Deno.readTextFile(ws.configPath), USER_CONFIG);

  await serviceYaml(ws.home, "");
  const host = await ws.run(["install", "probe", "--yes"], { env });
  assert.equal(host.code, 0, host.stdout + host.stderr);
  assert.match(host.stdout, /on this machine, as a host process: no container runtime/);
  assert.match(host.stderr, new RegExp(`│ where=${Deno.hostname()}\\b`));
});
