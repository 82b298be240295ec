import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { ID_RULE, isValidId, requireId } from "./ids.ts";

Deno.test("isValidId() takes run, task, session and worker ids and refuses every path-like or hostile one", () => {
  const good = ["a", "run-1", "T.2_x", "9", "a".repeat(128), "tracker_b-octo-app-42"];
  const bad = [
    "",
    "..",
    "a..b",
    "../x",
    "a/b",
    "a\\b",
    ".hidden",
    "-x",
    "_x",
    "a b",
    "a\nb",
    "a\u0000b",
    "é",
    "a".repeat(129),
  ];
  for (const id of good) assert.ok(isValidId(id), id);
  for (const id of bad) {
    assert.equal(isValidId(id), false, JSON.stringify(id));
    assert.throws(
      () => requireId("task_id", id),
      new RegExp(ID_RULE.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")),
    );
  }
});

Deno.test("the id rule is stated once: no other module restates its pattern", async () => {
  const root = fileURLToPath(new URL("../", import.meta.url));
  const restated: string[] = [];
  const walk = async (dir: string) => {
    for await (const e of Deno.readDir(dir)) {
      const path = `${dir}/${e.name}`;
      if (e.isDirectory && !["node_modules", ".sdd", "static", "dist"].includes(e.name)) {
        await walk(path);
      } else if (/\.tsx?$/.test(e.name) && !/_test\.tsx?$/.test(e.name)) {
        const text = await Deno.readTextFile(path);
        if (text.includes("A-Za-z0-9._-]{0,127}") && !path.endsWith("/lib/ids.ts")) {
          restated.push(path.slice(root.length));
        }
      }
    }
  };
  for (const top of ["lib", "routes", "components", "islands", "scripts"]) {
    await walk(`${root}${top}`);
  }
  assert.deepEqual(restated, []);
});
