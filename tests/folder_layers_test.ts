/**
 * Folders that must not import each other's way back (issue 22): verification records what the
 * task store does, never the reverse; spend (lib/cost) is a leaf that adapters, the orchestrator,
 * `status` and `cost` use, so it imports none of them. Type-only imports count: they tie the
 * folders together just the same.
 */
import assert from "node:assert/strict";
import { dirname, join, normalize, relative } from "node:path";

const LIB = new URL("../lib/", import.meta.url).pathname;

/** `[from folder, folders it must never import]`. */
const FORBIDDEN: [string, string[]][] = [
  ["tasks", ["verification"]],
  ["cost", ["agents", "orchestrator", "config", "status", "cli", "tasks"]],
];

/** The lib/ folders each non-test source file of `folder` imports, with the importing file. */
async function importsOf(folder: string): Promise<[string, string][]> {
  const out: [string, string][] = [];
  const walk = async (dir: string): Promise<void> => {
    for await (const entry of Deno.readDir(dir)) {
      const path = join(dir, entry.name);
      if (entry.isDirectory) await walk(path);
      else if (/\.tsx?$/.test(entry.name) && !/_test\.tsx?$/.test(entry.name)) {
        const text = await Deno.readTextFile(path);
        for (const m of text.matchAll(/(?:from\s+|import\(\s*)"(\.[^"]+)"/g)) {
          const target = relative(LIB, normalize(join(dirname(path), m[1])));
          if (target.startsWith("..")) continue;
          const top = target.includes("/") ? target.split("/")[0] : "(lib)";
          if (top !== folder) out.push([relative(LIB, path), top]);
        }
      }
    }
  };
  await walk(join(LIB, folder));
  return out;
}

for (const [folder, never] of FORBIDDEN) {
  Deno.test(`lib/${folder} imports nothing of lib/${never.join(", lib/")}`, async () => {
    const bad = (await importsOf(folder)).filter(([, to]) => never.includes(to));
    assert.deepEqual(bad.map(([file, to]) => `lib/${file} -> lib/${to}`), []);
  });
}
