import assert from "node:assert/strict";
import { parseConfig } from "../config/load.ts";
import { landingSettings } from "./settings.ts";

const BASE = "cli: claude\nroles:\n  backend: {}\n";

Deno.test("landingSettings(): merge mode (the default) lands locally; pull_request fills the host's defaults", () => {
  assert.equal(landingSettings(parseConfig(BASE), "main"), undefined);
  const s = landingSettings(
    parseConfig(`${BASE}landing:\n  mode: pull_request\n  provider: gitlab\n  repo: grp/app\n`),
    "trunk",
  )!;
  assert.equal(s.apiUrl, "https://gitlab.com/api/v4");
  assert.equal(s.tokenEnv, "GITLAB_TOKEN");
  assert.equal(s.base, "trunk", "the workspace's branch by default");
  assert.equal(s.trackingRef, "refs/remotes/origin/trunk");
  assert.equal(s.method, "squash");
  assert.equal(s.onCiFailure, "retry");
  assert.equal(s.pollIntervalMs, 2_000, "a short look interval by default");
  assert.equal(s.pollMaxIntervalMs, 5_000, "backing off to 5 s while nothing changes");
  assert.equal(s.retryMs, 30_000);
  assert.equal(s.webhooks, false);
});

Deno.test("landingSettings(): with the host's webhook configured, polling is a safety net five times slower", () => {
  const s = landingSettings(
    parseConfig(
      `${BASE}landing:\n  mode: pull_request\n  provider: github\n  repo: a/b\n` +
        "trackers:\n  tracker_b:\n    webhook: { enabled: true, secret_env: GH_HOOK }\n",
    ),
    "main",
  )!;
  assert.equal(s.webhooks, true);
  assert.deepEqual([s.pollIntervalMs, s.pollMaxIntervalMs, s.retryMs], [10_000, 25_000, 150_000]);
});

Deno.test("landingSettings(): a cap below the interval is the interval (no back-off)", () => {
  const s = landingSettings(
    parseConfig(
      `${BASE}landing:\n  mode: pull_request\n  provider: github\n  repo: a/b\n` +
        "  poll_interval_s: 10\n",
    ),
    "main",
  )!;
  assert.deepEqual([s.pollIntervalMs, s.pollMaxIntervalMs], [10_000, 10_000]);
});

Deno.test("landing config: pull_request without a provider or repo, or a base that is no branch name, is refused naming the key", () => {
  const cases: [string, RegExp][] = [
    ["landing:\n  mode: pull_request\n  repo: a/b\n", /landing\.provider|provider/],
    ["landing:\n  mode: pull_request\n  provider: github\n", /landing\.repo/],
    [
      "landing:\n  mode: pull_request\n  provider: github\n  repo: a/b\n  base: 'a..b'\n",
      /branch name/,
    ],
    ["landing:\n  mode: pull_request\n  provider: bitbucket\n  repo: a/b\n", /provider/],
  ];
  for (const [yaml, words] of cases) {
    assert.throws(() => parseConfig(BASE + yaml), (e: Error) => words.test(e.message), yaml);
  }
});
