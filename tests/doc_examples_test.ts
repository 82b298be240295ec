/**
 * Every YAML and JSON example in README.md and docs/ parses; a `service.yaml` example (it has
 * `cli` and `roles`) passes the config validation and a plan example (it has `stages`) the plan
 * validation, so the documentation cannot drift into examples the service refuses.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { parseConfig } from "../lib/config/load.ts";
import { parsePlan } from "../lib/plans/plan.ts";

const ROOT = new URL("../", import.meta.url).pathname;

interface Example {
  file: string;
  line: number;
  lang: "yaml" | "json";
  text: string;
}

async function examples(): Promise<Example[]> {
  const files = ["README.md"];
  for await (const e of Deno.readDir(join(ROOT, "docs"))) {
    if (e.isFile && e.name.endsWith(".md")) files.push(join("docs", e.name));
  }
  const found: Example[] = [];
  for (const file of files.sort()) {
    const lines = (await Deno.readTextFile(join(ROOT, file))).split("\n");
    for (let i = 0; i < lines.length; i++) {
      const open = /^\s*```(yaml|json)\s*$/.exec(lines[i]);
      if (!open) continue;
      const end = lines.findIndex((l, j) => j > i && /^\s*```\s*$/.test(l));
      assert.ok(end > i, `${file}:${i + 1}: unterminated code block`);
      found.push({
        file,
        line: i + 1,
        lang: open[1] as "yaml" | "json",
        text: lines.slice(i + 1, end).join("\n"),
      });
      i = end;
    }
  }
  return found;
}

Deno.test("every YAML and JSON example in README.md and docs/ parses and validates", async (t) => {
  const all = await examples();
  assert.ok(all.length >= 8, `found only ${all.length} examples`);
  for (const ex of all) {
    await t.step(`${ex.file}:${ex.line} (${ex.lang})`, () => {
      if (ex.lang === "json") {
        JSON.parse(ex.text);
        return;
      }
      const value = parseYaml(ex.text, { strict: true, uniqueKeys: true });
      assert.ok(value && typeof value === "object", "a YAML example is a mapping");
      if ("cli" in value && "roles" in value) parseConfig(ex.text, `${ex.file}:${ex.line}`);
      if ("stages" in value) parsePlan(ex.text, `${ex.file}:${ex.line}`);
    });
  }
});
