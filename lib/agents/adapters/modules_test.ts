import assert from "node:assert/strict";
import { join } from "node:path";
import { configuredAdapter, loadConfig } from "../../config/load.ts";
import { availableAdapters } from "./mod.ts";
import { ValueError } from "../errors.ts";

const MOD = new URL("./mod.ts", import.meta.url).href;

/** A workspace whose service.yaml is `config` and whose files are `files`. */
async function workspace(config: string, files: Record<string, string>) {
  const root = await Deno.makeTempDir({ prefix: "adapter-mod-" });
  await Deno.writeTextFile(join(root, "service.yaml"), config);
  for (const [path, text] of Object.entries(files)) {
    await Deno.mkdir(join(root, path, ".."), { recursive: true });
    await Deno.writeTextFile(join(root, path), text);
  }
  return { root, [Symbol.asyncDispose]: () => Deno.remove(root, { recursive: true }) };
}

const ADAPTER = (name: string) =>
  `{ name: "${name}", binary: "${name}-bin", apiKeyEnv: [], passEnv: [], acceptsMcpConfig: false,
  supportsEffort: false, buildArgv: (i) => ["--go", i.prompt], parseUsage: () => undefined }`;

Deno.test("adapters.<name>.module: a default export or a registerAdapter call makes `cli: <name>` work", async () => {
  await using ws = await workspace(
    "cli: acme\nroles: [backend]\nadapters:\n  acme: { module: adapters/acme.ts }\n" +
      "  beta: { module: ./beta.ts }\n",
    {
      "adapters/acme.ts": `export default ${ADAPTER("acme")};\n`,
      "beta.ts": `import { registerAdapter } from ${JSON.stringify(MOD)};\n` +
        `registerAdapter(${ADAPTER("beta")});\n`,
    },
  );
  const config = await loadConfig(ws.root);
  const adapter = configuredAdapter(config!);
  assert.equal(adapter.name, "acme");
  assert.equal(adapter.binary, "acme-bin");
  assert.deepEqual(adapter.buildArgv({ prompt: "p", workdir: "/w" }), ["--go", "p"]);
  assert.ok(availableAdapters().includes("beta"));
  await loadConfig(ws.root); // loading again is fine: each module registers once
});

Deno.test("adapters.<name>.module: what goes wrong is named with the setting and the fix", async () => {
  const cases: [string, Record<string, string>, RegExp][] = [
    ["missing.ts", {}, /adapters\.gone\.module: cannot import missing\.ts/],
    [
      "bad.ts",
      { "bad.ts": "export default { name: 'gone' };\n" },
      /neither called registerAdapter.*binary/,
    ],
    [
      "other.ts",
      { "other.ts": `export default ${ADAPTER("other")};\n` },
      /exports the adapter "other", not "gone"/,
    ],
  ];
  for (const [module, files, message] of cases) {
    await using ws = await workspace(
      `cli: gone\nroles: [backend]\nadapters:\n  gone: { module: ${module} }\n`,
      files,
    );
    await assert.rejects(() => loadConfig(ws.root), (e: unknown) => {
      assert.ok(e instanceof ValueError, String(e));
      assert.match(e.message, message);
      return true;
    });
  }
  await using unnamed = await workspace("cli: nobody\nroles: [backend]\n", {});
  await assert.rejects(
    () => loadConfig(unnamed.root),
    (e: unknown) => e instanceof ValueError && /adapters\.nobody\.module/.test(e.fix),
  );
});
