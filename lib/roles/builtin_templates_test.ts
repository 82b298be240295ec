import assert from "node:assert/strict";
import { BUILTIN_TEMPLATES } from "./builtin_templates.ts";
import { join } from "node:path";

Deno.test("the embedded built-in templates equal templates/roles/ (run scripts/embed_templates.ts after an edit)", async () => {
  const dir = new URL("../../templates/roles/", import.meta.url).pathname;
  const roles: string[] = [];
  for await (const e of Deno.readDir(dir)) if (e.isDirectory) roles.push(e.name);
  assert.deepEqual(Object.keys(BUILTIN_TEMPLATES).sort(), roles.sort());
  for (const role of roles) {
    for (const [file, text] of Object.entries(BUILTIN_TEMPLATES[role])) {
      assert.equal(text, await Deno.readTextFile(join(dir, role, file)), `${role}/${file}`);
    }
  }
});
