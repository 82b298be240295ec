/**
 * `deno task build`: bundle the islands into `static/build/board-<hash>.js` with a manifest.
 * The server also builds in memory when this has not been run, so the step is optional.
 */
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { buildBoardBundle, PROJECT_ROOT } from "../lib/static/build_bundle.ts";
import { BUILD_DIR, writeBundle } from "../lib/static/board_bundle.ts";

if (import.meta.main) {
  const started = performance.now();
  const bundle = await buildBoardBundle();
  await writeBundle(bundle, join(PROJECT_ROOT, BUILD_DIR));
  const gzip = gzipSync(bundle.bytes, { level: 9 }).length;
  console.log(
    `${BUILD_DIR}/${bundle.fileName}: ${bundle.bytes.length} bytes, ${gzip} gzip, ` +
      `${Object.keys(bundle.inputs).length} inputs, ${Math.round(performance.now() - started)} ms`,
  );
}
