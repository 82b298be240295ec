/**
 * The repository stands alone: README.md and docs/ never point at a file outside it (no
 * `../shared/…`, no design notes kept elsewhere), and every relative link resolves to a file or
 * directory inside the repository.
 */
import assert from "node:assert/strict";
import { dirname, join, relative, resolve } from "node:path";

const ROOT = new URL("../", import.meta.url).pathname;

async function pages(): Promise<string[]> {
  const files = ["README.md"];
  for await (const e of Deno.readDir(join(ROOT, "docs"))) {
    if (e.isFile && e.name.endsWith(".md")) files.push(join("docs", e.name));
  }
  return files.sort();
}

const exists = (path: string) => Deno.stat(path).then(() => true, () => false);

Deno.test("README and docs point at nothing outside the repository; relative links resolve", async () => {
  const problems: string[] = [];
  for (const file of await pages()) {
    const lines = (await Deno.readTextFile(join(ROOT, file))).split("\n");
    for (const [i, line] of lines.entries()) {
      const at = `${file}:${i + 1}`;
      if (/\.\.\/shared|\/work\/|DESIGN\.md/.test(line)) problems.push(`${at}: ${line.trim()}`);
      for (const m of line.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1].split("#")[0];
        if (target === "" || /^[a-z]+:/.test(target)) continue; // an anchor or a URL
        const path = resolve(ROOT, dirname(file), target);
        if (relative(ROOT, path).startsWith("..")) {
          problems.push(`${at}: ${m[1]} leaves the repository`);
        } else if (!(await exists(path))) problems.push(`${at}: ${m[1]} does not exist`);
      }
    }
  }
  assert.deepEqual(problems, []);
});

Deno.test("no page repeats a table row or a line of prose", async () => {
  const repeated: string[] = [];
  for (const file of await pages()) {
    const seen = new Map<string, number>();
    let code = false;
    for (const [i, line] of (await Deno.readTextFile(join(ROOT, file))).split("\n").entries()) {
      if (/^\s*```/.test(line)) code = !code;
      if (code || line.trim().length <= 40) continue;
      const first = seen.get(line);
      if (first !== undefined) {
        repeated.push(`${file}:${i + 1} repeats line ${first}: ${line.trim()}`);
      } else seen.set(line, i + 1);
    }
  }
  assert.deepEqual(repeated, []);
});
