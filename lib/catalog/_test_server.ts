/**
 * Test helper: the real `@modelcontextprotocol/server-memory` from npm, installed once per machine
 * into the temp directory (a lock keeps parallel test files from installing it twice).
 */
import { join } from "node:path";

/** The pinned package the tests install. */
export const MEMORY_PACKAGE = "@modelcontextprotocol/server-memory@2026.8.31";

/** Install (once) and return the server's entry script. */
export async function memoryServerScript(): Promise<string> {
  const dir = join(Deno.env.get("TMPDIR") ?? "/tmp", "service-test-mcp-server-memory-2026.8.31");
  const script = join(
    dir,
    "node_modules",
    "@modelcontextprotocol",
    "server-memory",
    "dist",
    "index.js",
  );
  await Deno.mkdir(dir, { recursive: true });
  using lock = await Deno.open(join(dir, ".lock"), { create: true, write: true });
  await lock.lock(true);
  try {
    await Deno.stat(join(dir, ".installed"));
    return script;
  } catch { /* not yet */ }
  const out = await new Deno.Command("npm", {
    args: ["install", "--no-audit", "--no-fund", "--prefix", dir, MEMORY_PACKAGE],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (out.code !== 0) {
    throw new Error(
      `npm install ${MEMORY_PACKAGE} failed: ${new TextDecoder().decode(out.stderr)}`,
    );
  }
  await Deno.writeTextFile(join(dir, ".installed"), "");
  return script;
}
