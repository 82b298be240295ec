import assert from "node:assert/strict";
import { builtImageRef, containerfile } from "./image.ts";
import type { ContainerSettings } from "./settings.ts";

const settings: ContainerSettings = {
  runtime: "auto",
  autoBuildImage: true,
  baseImage: "debian:bookworm-slim",
  install: ["pip install my-agent==1.2"],
  setupNetwork: true,
  agentNetwork: "restricted",
  allowHosts: [],
};

Deno.test("containerfile(): FROM the base, what the service needs, the adapter's CLI, then container.install", () => {
  const text = containerfile(settings, {
    needs: { npm: "npm" },
    install: ["npm install -g @anthropic-ai/claude-code@2.1.197"],
  });
  const at = (s: string) => text.indexOf(s);
  assert.ok(at("FROM debian:bookworm-slim") >= 0);
  assert.ok(at('command -v git >/dev/null 2>&1 || missing="$missing git"') > 0);
  assert.ok(at("command -v socat") > 0 && at("command -v npm") > 0);
  assert.ok(at("apt-get install -y --no-install-recommends ca-certificates $missing") > 0);
  assert.ok(
    at("RUN npm install -g @anthropic-ai/claude-code@2.1.197") <
      at("RUN pip install my-agent==1.2"),
  );
});

Deno.test("builtImageRef(): tagged by the recipe's digest, in container.image's repository", () => {
  const a = builtImageRef(settings, "FROM a\n");
  assert.match(a, /^localhost\/service-agent:[0-9a-f]{16}$/);
  assert.equal(builtImageRef(settings, "FROM a\n"), a, "the same recipe, the same tag");
  assert.notEqual(builtImageRef(settings, "FROM b\n"), a);
  assert.match(
    builtImageRef({ ...settings, image: "registry.local:5000/team/agent:1" }, "x"),
    /^registry\.local:5000\/team\/agent:[0-9a-f]{16}$/,
  );
});
