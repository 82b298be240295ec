import assert from "node:assert/strict";
import { allowEnvFlags, envConsentPlan, unreadFlags } from "./env_consent.ts";

Deno.test("envConsentPlan(): --yes never grants a variable; --allow-env grants exactly the names it gives", () => {
  const referenced = ["GITHUB_TOKEN", "SLACK_TOKEN"];
  /** [already, --allow-env, --yes, granted, asked, not granted]. */
  const CASES: [string[], string[], boolean, string[], string[], string[]][] = [
    [[], [], true, [], [], ["GITHUB_TOKEN", "SLACK_TOKEN"]],
    [[], ["GITHUB_TOKEN"], true, ["GITHUB_TOKEN"], [], ["SLACK_TOKEN"]],
    [[], ["GITHUB_TOKEN", "SLACK_TOKEN"], true, ["GITHUB_TOKEN", "SLACK_TOKEN"], [], []],
    [[], [], false, [], ["GITHUB_TOKEN", "SLACK_TOKEN"], []],
    [[], ["SLACK_TOKEN"], false, ["SLACK_TOKEN"], ["GITHUB_TOKEN"], []],
    // An upgrade keeps what the record allowed (and still referenced), asks only for new names.
    [["GITHUB_TOKEN", "GONE"], [], true, ["GITHUB_TOKEN"], [], ["SLACK_TOKEN"]],
    [["GITHUB_TOKEN"], [], false, ["GITHUB_TOKEN"], ["SLACK_TOKEN"], []],
    // A flag for a name the entry does not read grants nothing.
    [[], ["OTHER"], true, [], [], ["GITHUB_TOKEN", "SLACK_TOKEN"]],
  ];
  for (const [already, allowFlags, yes, granted, ask, notGranted] of CASES) {
    const plan = envConsentPlan({ referenced, already, allowFlags, yes });
    assert.deepEqual(
      plan,
      { granted, ask, notGranted },
      JSON.stringify({ already, allowFlags, yes }),
    );
  }
  assert.deepEqual(envConsentPlan({ referenced: [], already: [], allowFlags: ["X"], yes: true }), {
    granted: [],
    ask: [],
    notGranted: [],
  });
});

Deno.test("unreadFlags() names the --allow-env an entry does not read; allowEnvFlags() spells the fix", () => {
  assert.deepEqual(unreadFlags(["B", "A", "GITHUB_TOKEN", "A"], ["GITHUB_TOKEN"]), ["A", "B"]);
  assert.deepEqual(unreadFlags([], ["GITHUB_TOKEN"]), []);
  assert.equal(allowEnvFlags(["A", "B"]), "--allow-env A --allow-env B");
});
