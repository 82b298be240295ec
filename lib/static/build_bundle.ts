/**
 * Bundle the board's islands with esbuild into one small ES module (`board-<hash>.js`).
 * Every input file's hash is kept, so a stored build can later be checked against the sources.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { sha256Hex } from "../journal/hash.ts";

/** The project root (where deno.json and node_modules/ live). */
export const PROJECT_ROOT: string = fileURLToPath(new URL("../../", import.meta.url));

/** The islands entry point, relative to the project root. */
const ISLANDS_ENTRY = "islands/client.tsx";

/** A built bundle: its bytes, content-hashed file name and the hashes of the sources it came from. */
export interface BuiltBundle {
  fileName: string;
  bytes: Uint8Array;
  /** Source path (relative to the project root) -> SHA-256 hex of its bytes. */
  inputs: Record<string, string>;
}

/** Options of {@link buildBoardBundle}. */
export interface BuildOptions {
  /** Project root (default {@link PROJECT_ROOT}). */
  root?: string;
  /** Minify (default true). */
  minify?: boolean;
}

/** Build the islands bundle in memory; the esbuild service is stopped before returning. */
export async function buildBoardBundle(options: BuildOptions = {}): Promise<BuiltBundle> {
  const root = options.root ?? PROJECT_ROOT;
  // Loaded here, when a bundle is built: a server started from a build never loads esbuild.
  const esbuild = await import("esbuild");
  try {
    const result = await esbuild.build({
      absWorkingDir: root,
      entryPoints: [join(root, ISLANDS_ENTRY)],
      bundle: true,
      format: "esm",
      platform: "browser",
      target: "es2022",
      jsx: "automatic",
      jsxImportSource: "preact",
      minify: options.minify ?? true,
      legalComments: "none",
      metafile: true,
      write: false,
      outfile: "board.js",
      logLevel: "silent",
    });
    const bytes = result.outputFiles[0].contents;
    const inputs: Record<string, string> = {};
    for (const path of Object.keys(result.metafile.inputs).sort()) {
      inputs[path] = sha256Hex(await Deno.readFile(join(root, path)));
    }
    return { fileName: `board-${sha256Hex(bytes).slice(0, 16)}.js`, bytes, inputs };
  } finally {
    await esbuild.stop();
  }
}
