import assert from "node:assert/strict";
import { buildScanner, toBase64 } from "./build.ts";
import { SCAN_SOURCE_SHA256, SCAN_WASM_BASE64 } from "./journal_scan_wasm.ts";

Deno.test("the committed scanner module is the build of the committed AssemblyScript source", async () => {
  const { wasm, sourceSha256 } = await buildScanner();
  const stale = "lib/journal/wasm/journal_scan_wasm.ts is stale: run `deno task build:wasm`";
  assert.equal(SCAN_SOURCE_SHA256, sourceSha256, stale);
  assert.ok(SCAN_WASM_BASE64 === toBase64(wasm), stale);
});
