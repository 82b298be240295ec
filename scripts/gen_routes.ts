/**
 * Regenerate `routes/_manifest.gen.ts` and the scope matrix of docs/security.md from the files
 * under routes/ and the `policy` each exports (`deno task routes`; the manifest carries each
 * policy as data, so the server mounts it without importing the module). `--check` exits 1 when
 * either checked-in copy is stale instead of writing it.
 */
import { relative } from "node:path";
import {
  compareRoutes,
  isRouteFile,
  type ManifestRoute,
  manifestText,
  type MatrixRoute,
  scopeMatrixMarkdown,
  urlPathOf,
  withScopeMatrix,
} from "../lib/http/route_manifest.ts";
import type { RoutePolicy } from "../lib/http/route_policy.ts";

const ROUTES_DIR = new URL("../routes/", import.meta.url).pathname;
const MANIFEST = `${ROUTES_DIR}_manifest.gen.ts`;
/** The document whose scope matrix is generated. */
export const SECURITY_DOC = new URL("../docs/security.md", import.meta.url).pathname;

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

/** Every route file and the policy its module exports (the files are imported). */
export async function routeModules(): Promise<ManifestRoute[]> {
  const files = (await routeFiles()).filter(isRouteFile);
  return await Promise.all(files.map(async (file) => {
    const module = await import(new URL(file, `file://${ROUTES_DIR}`).href);
    return { file, policy: module.policy as RoutePolicy };
  }));
}

/** The manifest text the current files and their policies call for. */
export async function expectedManifest(): Promise<string> {
  return manifestText(await routeModules());
}

/** Every route file's path and policy, most specific first. */
export async function routePolicies(): Promise<MatrixRoute[]> {
  const routes = (await routeModules()).map((r) => ({ path: urlPathOf(r.file), policy: r.policy }));
  return routes.sort((a, b) => compareRoutes(a.path, b.path));
}

/** docs/security.md as the current route policies call for (its matrix regenerated). */
export async function expectedSecurityDoc(): Promise<string> {
  const doc = await Deno.readTextFile(SECURITY_DOC);
  return withScopeMatrix(doc, scopeMatrixMarkdown(await routePolicies()));
}

/**
 * A Markdown text with its tables' padding taken out (`deno fmt` pads table cells; the
 * generated matrix is compared with what it formatted).
 */
export function unpadTables(text: string): string {
  return text.split("\n").map((line) =>
    line.trimStart().startsWith("|")
      ? line.trim().replace(/\s*\|\s*/g, "|").replace(/-{2,}/g, "-")
      : line
  ).join("\n");
}

if (import.meta.main) {
  const check = Deno.args.includes("--check");
  const expected = await expectedManifest();
  const current = await Deno.readTextFile(MANIFEST).catch(() => "");
  const doc = await Deno.readTextFile(SECURITY_DOC);
  const docExpected = await expectedSecurityDoc();
  const docStale = unpadTables(doc) !== unpadTables(docExpected);
  if (check) {
    if (current !== expected) {
      console.error("routes/_manifest.gen.ts is stale: run `deno task routes`");
    }
    if (docStale) console.error("docs/security.md's scope matrix is stale: run `deno task routes`");
    if (current !== expected || docStale) Deno.exit(1);
  } else {
    if (current !== expected) {
      await Deno.writeTextFile(MANIFEST, expected);
      console.log("wrote routes/_manifest.gen.ts");
    }
    if (docStale) {
      await Deno.writeTextFile(SECURITY_DOC, docExpected);
      await new Deno.Command(Deno.execPath(), { args: ["fmt", "-q", SECURITY_DOC] }).output();
      console.log("wrote the scope matrix of docs/security.md");
    }
  }
}
