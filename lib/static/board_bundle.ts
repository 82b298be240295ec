/**
 * The islands bundle the page links to. A build in `static/build/` (from `deno task build`) is
 * used when every source it was built from is unchanged; otherwise (fresh clone, edited
 * islands) the bundle is built in memory once, at first request, and cached for the process.
 */
import { join } from "node:path";
import { sha256Hex } from "../journal/hash.ts";
import { buildBoardBundle, type BuiltBundle, PROJECT_ROOT } from "./build_bundle.ts";
import { EMBEDDED_BUNDLE } from "./embedded_bundle.ts";

/** Where `deno task build` writes, relative to the project root. */
export const BUILD_DIR = "static/build";
/** The manifest naming the built file and its inputs. */
const MANIFEST = "manifest.json";

/** The URL path of a bundle file. */
export function bundleUrl(bundle: BuiltBundle): string {
  return `/static/${bundle.fileName}`;
}

/** Write `bundle` and its manifest into `dir` (older bundles are removed). */
export async function writeBundle(bundle: BuiltBundle, dir: string): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  for await (const entry of Deno.readDir(dir)) {
    if (/^board-[0-9a-f]+\.js$/.test(entry.name) && entry.name !== bundle.fileName) {
      await Deno.remove(join(dir, entry.name));
    }
  }
  await Deno.writeFile(join(dir, bundle.fileName), bundle.bytes);
  const manifest = { file: bundle.fileName, inputs: bundle.inputs };
  await Deno.writeTextFile(join(dir, MANIFEST), JSON.stringify(manifest, null, 2) + "\n");
}

/** The stored build in `root/static/build` when it is current, else undefined. */
async function readCurrentBuild(root = PROJECT_ROOT): Promise<BuiltBundle | undefined> {
  const dir = join(root, BUILD_DIR);
  try {
    const manifest = JSON.parse(await Deno.readTextFile(join(dir, MANIFEST)));
    const inputs = manifest.inputs as Record<string, string>;
    for (const [path, hash] of Object.entries(inputs)) {
      if (sha256Hex(await Deno.readFile(join(root, path))) !== hash) return undefined;
    }
    const bytes = await Deno.readFile(join(dir, manifest.file));
    if (`board-${sha256Hex(bytes).slice(0, 16)}.js` !== manifest.file) return undefined;
    return { fileName: manifest.file, bytes, inputs };
  } catch {
    return undefined;
  }
}

let cached: Promise<BuiltBundle> | undefined;

/**
 * The bundle of this process: the one embedded in a single-file artefact, else the current
 * stored build, else an in-memory build (memoised).
 */
export function boardBundle(): Promise<BuiltBundle> {
  if (EMBEDDED_BUNDLE) {
    const bytes = new TextEncoder().encode(EMBEDDED_BUNDLE.js);
    return Promise.resolve({ fileName: EMBEDDED_BUNDLE.fileName, bytes, inputs: {} });
  }
  cached ??= (async () => (await readCurrentBuild()) ?? await buildBoardBundle())().catch((e) => {
    cached = undefined;
    throw e;
  });
  return cached;
}
