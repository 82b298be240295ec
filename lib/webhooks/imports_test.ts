/** lib/webhooks stays generic: the trackers import it and register with it, never the other way. */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";

const HERE = new URL("./", import.meta.url);
const TRACKERS = new URL("../trackers/", import.meta.url).href;
const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** Every module `file` imports, directly or not, as Deno's own module graph lists them. */
async function reachedFrom(file: URL): Promise<string[]> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", fileURLToPath(file)],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  const graph = JSON.parse(new TextDecoder().decode(out.stdout)) as {
    modules: { specifier: string }[];
  };
  return graph.modules.map((m) => m.specifier);
}

Deno.test("lib/webhooks reaches nothing in lib/trackers, not even a type", async () => {
  const files = [...Deno.readDirSync(HERE)]
    .filter((e) => e.isFile && e.name.endsWith(".ts") && !e.name.endsWith("_test.ts"))
    .map((e) => e.name).sort();
  assert.ok(files.includes("receiver.ts") && files.includes("registry.ts"));
  const reached = await Promise.all(files.map((f) => reachedFrom(new URL(f, HERE))));
  for (const [i, file] of files.entries()) {
    const intoTrackers = reached[i].filter((s) => s.startsWith(TRACKERS));
    assert.deepEqual(intoTrackers, [], `lib/webhooks/${file} imports lib/trackers`);
  }
});
