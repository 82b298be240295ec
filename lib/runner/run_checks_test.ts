import assert from "node:assert/strict";
import { settingProblems } from "./run_checks.ts";
import { parseConfig } from "../config/load.ts";

Deno.test("settingProblems() refuses max_agents: 0 without a worker token: no task would ever run", () => {
  const base = "cli: claude\nroles:\n  backend: {}\nmax_agents: 0\n";
  const without = settingProblems(parseConfig(base, "service.yaml"));
  assert.deepEqual(without.map((p) => p.subject), ["max_agents"]);
  assert.match(without[0].fix, /scope worker to auth\.tokens/);
  const withToken = settingProblems(parseConfig(
    base + "auth:\n  tokens:\n    - {principal: box, scope: worker, token_env: BOX_TOKEN}\n",
    "service.yaml",
  ));
  assert.deepEqual(withToken, []);
});
