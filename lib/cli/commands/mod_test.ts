import assert from "node:assert/strict";
import { COMMANDS } from "./mod.ts";

Deno.test("COMMANDS lists each command with the name and summary its own module gives it", async () => {
  for (const entry of COMMANDS) {
    const command = await entry.load();
    assert.equal(command.name, entry.name);
    assert.equal(command.summary, entry.summary, entry.name);
  }
  assert.equal(new Set(COMMANDS.map((c) => c.name)).size, COMMANDS.length, "names are unique");
});
