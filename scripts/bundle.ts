/**
 * Builds the single-file artefact: `deno run -A scripts/bundle.ts [--out dist/service.js]`.
 * The board's island bundle is built first and embedded: an import map swaps
 * lib/static/embedded_bundle.ts for a generated module holding it, so the artefact runs
 * anywhere with `deno run -A service.js` (CLI, server, board page, demo, scripted agent) and
 * the source tree is never modified.
 */
import { parseArgs } from "node:util";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { buildBoardBundle } from "../lib/static/build_bundle.ts";
import * as esbuild from "esbuild";

const ROOT = new URL("..", import.meta.url).pathname;
/**
 * Packages only some runs load, by a dynamic import (`workers.kubernetes`: lib/kubernetes/api.ts):
 * left out of the artefact, which names their pinned npm version instead, so a CLI that never
 * needs them neither parses nor downloads them (client-node is 18 MB of the 22 it would add).
 */
const LAZY = ["@kubernetes/client-node"];
const { values } = parseArgs({
  args: Deno.args,
  options: { out: { type: "string", default: "dist/service.js" } },
});
const out = resolve(values.out!);

const islands = await buildBoardBundle();
await esbuild.stop();
const work = await Deno.makeTempDir({ prefix: "service-bundle-" });
try {
  const slot = join(work, "embedded_bundle.ts");
  await Deno.writeTextFile(
    slot,
    `export const EMBEDDED_BUNDLE: { fileName: string; js: string } | undefined = ${
      JSON.stringify({ fileName: islands.fileName, js: new TextDecoder().decode(islands.bytes) })
    };\n`,
  );
  const config = JSON.parse(await Deno.readTextFile(join(ROOT, "deno.json")));
  const importMap = {
    imports: {
      ...config.imports,
      [pathToFileURL(join(ROOT, "lib", "static", "embedded_bundle.ts")).href]:
        pathToFileURL(slot).href,
    },
  };
  const mapFile = join(work, "import_map.json");
  await Deno.writeTextFile(mapFile, JSON.stringify(importMap));
  const bundled = await new Deno.Command(Deno.execPath(), {
    args: [
      "bundle",
      "--quiet",
      "--platform",
      "deno",
      ...LAZY.flatMap((name) => ["--external", name]),
      "--import-map",
      mapFile,
      "-o",
      out,
      join(ROOT, "cli_main.ts"),
    ],
    cwd: ROOT,
    env: { RUST_BACKTRACE: "0" },
    stdout: "inherit",
    stderr: "inherit",
  }).output();
  if (!bundled.success) Deno.exit(bundled.code || 1);
} finally {
  await Deno.remove(work, { recursive: true });
}
let text = await Deno.readTextFile(out);
const pinned = JSON.parse(await Deno.readTextFile(join(ROOT, "deno.json"))).imports;
for (const name of LAZY) {
  // lib/kubernetes/client_node.js names the package in a constant it imports dynamically, so the
  // package stays out of the static module graph; in the artefact it becomes the pinned npm one.
  const bare = JSON.stringify(name);
  if (!text.includes(bare)) throw new Error(`${name} is not imported lazily any more`);
  text = text.replaceAll(bare, JSON.stringify(pinned[name]));
}
await Deno.writeTextFile(out, text);
if (!text.includes(islands.fileName)) {
  throw new Error("the island bundle did not make it into the artefact");
}
console.log(`wrote ${out} (${(text.length / 1e6).toFixed(2)} MB; islands ${islands.fileName})`);
