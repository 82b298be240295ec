/**
 * Regenerate `routes/_manifest.gen.ts` from the files under routes/ (`deno task routes`).
 * `--check` exits 1 when the checked-in manifest is stale instead of writing it.
 */
import { relative } from "node:path";
import { manifestText } from "../lib/http/route_manifest.ts";

const ROUTES_DIR = new URL("../routes/", import.meta.url).pathname;
const MANIFEST = `${ROUTES_DIR}_manifest.gen.ts`;

/** Paths of every file under routes/, relative to it, with `/` separators. */
export async function routeFiles(dir = ROUTES_DIR): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string) => {
    for await (const e of Deno.readDir(d)) {
      const path = `${d}/${e.name}`.replace(/\/+/g, "/");
      if (e.isDirectory) await walk(path);
      else if (e.isFile) out.push(relative(dir, path).split("\\").join("/"));
    }
  };
  await walk(dir);
  return out.sort();
}

/** The manifest text the current files call for. */
export async function expectedManifest(): Promise<string> {
  return manifestText(await routeFiles());
}

if (import.meta.main) {
  const expected = await expectedManifest();
  const current = await Deno.readTextFile(MANIFEST).catch(() => "");
  if (Deno.args.includes("--check")) {
    if (current !== expected) {
      console.error("routes/_manifest.gen.ts is stale: run `deno task routes`");
      Deno.exit(1);
    }
  } else if (current !== expected) {
    await Deno.writeTextFile(MANIFEST, expected);
    console.log("wrote routes/_manifest.gen.ts");
  }
}
