import assert from "node:assert/strict";
import { parseConfig } from "../config/load.ts";
import { BUILTIN_TRACKERS } from "./builtin.ts";
import { apiProblem, ingestMode, trackerSettings } from "./settings.ts";

const BASE = "cli: claude\nroles:\n  backend: {}\n  qa: {}\n";

Deno.test("config: trackers.<name>.role and label_roles must name configured roles", () => {
  assert.throws(
    () => parseConfig(`${BASE}trackers:\n  tracker_b:\n    role: frontend\n`),
    /role 'frontend' is not in roles \(backend, qa\)/,
  );
  assert.throws(
    () => parseConfig(`${BASE}trackers:\n  tracker_b:\n    label_roles: { bug: nobody }\n`),
    /role 'nobody' is not in roles/,
  );
  assert.throws(
    () => parseConfig(`${BASE}trackers:\n  tracker_b:\n    pol_interval_s: 5\n`),
    /pol_interval_s/,
  );
});

Deno.test("settings: defaults, polling needs a project, webhook mode in words", () => {
  const config = parseConfig(
    `${BASE}trackers:\n  tracker_b:\n    project: octo/app\n    poll_interval_s: 30\n` +
      `  tracker_c:\n    webhook: { enabled: true, secret_env: GL_SECRET }\n  tracker_d: {}\n`,
  );
  const [b, c, d] = trackerSettings(config, BUILTIN_TRACKERS);
  assert.equal(b.polling, true);
  assert.equal(b.pollIntervalS, 30);
  assert.equal(b.apiUrl, "https://api.github.com");
  assert.equal(b.tokenEnv, "TRACKER_B_TOKEN");
  assert.equal(b.role, "backend");
  assert.equal(ingestMode(b), "polling every 30s");
  assert.equal(c.polling, false);
  assert.equal(ingestMode(c), "webhook");
  assert.match(ingestMode(d), /^idle: set project \(the team key/);
  assert.equal(apiProblem(b, () => undefined), undefined); // public GitHub repos need no token
  assert.match(apiProblem(d, () => undefined)!, /trackers.tracker_d.project is not set/);
});
