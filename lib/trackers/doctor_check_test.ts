/** `doctor`'s tracker checks: secrets and tokens (set or not, never their values), project, downtime. */
import assert from "node:assert/strict";
import { parseConfig } from "../config/load.ts";
import { BUILTIN_TRACKERS } from "./builtin.ts";
import { trackerChecks } from "./doctor_check.ts";

const CONFIG = parseConfig(`cli: claude
roles: [backend]
trackers:
  tracker_a:
    project: PROJ
    api_url: https://acme.atlassian.net
    comment_on_land: true
  tracker_b:
    project: octo/app
    polling: false
    webhook: { enabled: true, secret_env: GH_HOOK_SECRET }
  tracker_c:
    project: group/app
  tracker_d:
    webhook: { enabled: true, secret_env: LIN_HOOK_SECRET }
`);

Deno.test("doctor checks each tracker's webhook secret and API token, never printing them, each problem with its fix", async () => {
  const env: Record<string, string> = {
    GH_HOOK_SECRET: "hush-value",
    TRACKER_B_TOKEN: "tok-value",
  };
  const results = await trackerChecks(CONFIG, BUILTIN_TRACKERS, (n) => env[n]);
  const byName = Object.fromEntries(results.map((r) => [r.name, r]));
  assert.doesNotMatch(JSON.stringify(results), /hush-value|tok-value/);
  // Jira comments on landing and has no token: a failure, with the fix in one line.
  assert.equal(byName["tracker tracker_a token"].ok, false);
  assert.match(
    byName["tracker tracker_a token"].detail,
    /TRACKER_A_TOKEN is empty: polling, comments cannot call Jira/,
  );
  assert.match(
    byName["tracker tracker_a token"].fix!,
    /^export TRACKER_A_TOKEN=<a Jira token that can read and comment on PROJ>$/,
  );
  // GitHub, webhook only: secret set, token set (it runs the startup replay).
  assert.deepEqual(byName["tracker tracker_b webhook"], {
    name: "tracker tracker_b webhook",
    ok: true,
    detail: "secret GH_HOOK_SECRET is set",
  });
  assert.match(
    byName["tracker tracker_b token"].detail,
    /TRACKER_B_TOKEN is set \(the startup replay\)/,
  );
  assert.match(byName["tracker tracker_b project"].detail, /only tickets of octo\/app are taken/);
  assert.equal(byName["tracker tracker_b downtime"], undefined);
  // GitLab polls a public project without a token: a warning.
  assert.equal(byName["tracker tracker_c token"].ok, true);
  assert.equal(byName["tracker tracker_c token"].warning, true);
  // Linear: the secret is unset (a failure); no project (a warning); no API access, so
  // deliveries sent while the service is down are lost (a warning that says so).
  assert.equal(byName["tracker tracker_d webhook"].ok, false);
  assert.match(
    byName["tracker tracker_d webhook"].detail,
    /LIN_HOOK_SECRET is empty .*every delivery gets 503/,
  );
  assert.match(
    byName["tracker tracker_d webhook"].fix!,
    /^export LIN_HOOK_SECRET=<the secret registered with Linear>/,
  );
  assert.equal(byName["tracker tracker_d project"].warning, true);
  assert.match(
    byName["tracker tracker_d project"].detail,
    /tickets of any project its webhook secret signs/,
  );
  assert.match(
    byName["tracker tracker_d project"].fix!,
    /set trackers\.tracker_d\.project \(the team key/,
  );
  assert.equal(byName["tracker tracker_d downtime"].warning, true);
  assert.match(
    byName["tracker tracker_d downtime"].detail,
    /^webhook only, and trackers\.tracker_d\.project is not set .*: deliveries sent while the service is down are lost$/,
  );
  assert.match(
    byName["tracker tracker_d downtime"].fix!,
    /^set trackers\.tracker_d\.project \(the team key.*\) and export TRACKER_D_TOKEN; each start then replays/,
  );
  for (const r of results) if (!r.ok) assert.ok(r.fix && !r.fix.includes("\n"), r.name);
});
