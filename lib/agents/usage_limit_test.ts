/**
 * Limit messages of the CLIs (collected from the installed Claude Code 2.1.197, Codex 0.169 and
 * Gemini CLI 0.61 bundles, the providers' 429 bodies and headers), read by each adapter's own log
 * reading: the line is a rate limit, and the reset it names resolves to the instant the adapter is
 * parked until — whole seconds, rounded up; a time printed to the minute, the end of that minute.
 * The CLIs' complete output for each provider answer is in tests/usage_limit_fixtures_test.ts.
 */
import assert from "node:assert/strict";
import { logParserFor } from "./adapters/mod.ts";
import { firstRateLimit, scanLog } from "./rate_limit.ts";
import { clockAt, durationSeconds } from "./reset_forms.ts";
import { parkUntil, resolveReset } from "./reset_time.ts";

const j = (v: unknown) => JSON.stringify(v);

/** The moment the lines are read: Wednesday 2026-11-25 12:00:00 UTC (07:00 in New York). */
const NOW = Date.UTC(2026, 10, 25, 12, 0, 0);
const at = (iso: string) => Date.parse(iso) / 1000;

/**
 * `[name, adapter, log text, rule, parked until (epoch s) in the local zone UTC]`; a wall-clock
 * time is printed to the minute, so it parks until that minute's end (+ 60).
 */
const CASES: [string, string, string, string, number][] = [
  [
    "Claude Code stream-json rate_limit_event rejected with resetsAt",
    "claude",
    j({
      type: "rate_limit_event",
      rate_limit_info: { status: "rejected", resetsAt: 1764090000, rateLimitType: "five_hour" },
      uuid: "5d1c",
      session_id: "s1",
    }),
    "claude:rate_limit_event_rejected",
    1764090000,
  ],
  [
    "Claude Code 2.1 synthetic message: session limit, IANA zone",
    "claude",
    j({
      type: "assistant",
      message: {
        model: "<synthetic>",
        role: "assistant",
        content: [{
          type: "text",
          text: "You've hit your session limit · resets 3pm (America/New_York)",
        }],
      },
    }),
    "claude:usage_limit",
    at("2026-11-25T20:00:00Z") + 60,
  ],
  [
    "Claude Code 2.1 error result: weekly limit on another day",
    "claude",
    j({
      type: "result",
      subtype: "success",
      is_error: true,
      result: "You've hit your weekly limit · resets Nov 28, 9:30am (Europe/Berlin)",
    }),
    "claude:usage_limit",
    at("2026-11-28T08:30:00Z") + 60,
  ],
  [
    "Claude Code 1.x plain text with epoch",
    "claude",
    "Claude AI usage limit reached|1764093600",
    "claude:usage_limit",
    1764093600,
  ],
  [
    "Claude Code 1.x five-hour limit, local time already passed today: tomorrow",
    "claude",
    "5-hour limit reached ∙ resets 3am",
    "claude:usage_limit",
    at("2026-11-26T03:00:00Z") + 60,
  ],
  [
    "Codex exec --json usage limit, today local time",
    "codex",
    j({
      type: "error",
      message:
        "You've hit your usage limit. Upgrade to Plus to continue using Codex (https://chatgpt.com/explore/plus), or try again at 3:42 PM.",
    }),
    "codex:usage_limit",
    at("2026-11-25T15:42:00Z") + 60,
  ],
  [
    "Codex turn.failed usage limit with date",
    "codex",
    j({
      type: "turn.failed",
      error: {
        message:
          "You've hit your usage limit. Visit https://chatgpt.com/settings/usage to purchase more credits or try again at Nov 27th, 2026 1:05 AM.",
      },
    }),
    "codex:usage_limit",
    at("2026-11-27T01:05:00Z") + 60,
  ],
  [
    "OpenAI Responses API rate limit with its delay",
    "codex",
    j({
      type: "error",
      message:
        "Rate limit reached for gpt-6-sol in organization org-abc on tokens per min (TPM): Limit 30000, Used 29500, Requested 1200. Please try again in 6m0s.",
    }),
    "codex:usage_limit",
    NOW / 1000 + 360,
  ],
  [
    "Gemini CLI quota error wrapping Google's body",
    "gemini",
    j({
      type: "error",
      severity: "error",
      message:
        '[API Error: {"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details. Please retry in 34.074824224s.","status":"RESOURCE_EXHAUSTED"}}]',
    }),
    "gemini:quota",
    NOW / 1000 + 35,
  ],
  [
    "Gemini CLI usage limit with a US zone abbreviation",
    "gemini",
    "Usage limit reached for gemini-3.1-pro. Access resets at 3:42 PM PST.",
    "gemini:quota",
    at("2026-11-25T23:42:00Z") + 60,
  ],
  [
    "HTTP 429 status line, retry-after header on the next line",
    "generic",
    "HTTP/1.1 429 Too Many Requests\nretry-after: 30\ncontent-type: application/json",
    "token:429",
    NOW / 1000 + 30,
  ],
  [
    "Anthropic rate-limit headers (RFC 3339 reset)",
    "generic",
    "Error: status 429 rate_limit_error\nanthropic-ratelimit-tokens-reset: 2026-11-25T12:01:30Z",
    "provider:rate_limit_error",
    at("2026-11-25T12:01:30Z"),
  ],
  [
    "OpenAI rate-limit headers (duration)",
    "generic",
    "openai.RateLimitError: Error code: 429\nx-ratelimit-reset-requests: 1m30s",
    "token:429",
    NOW / 1000 + 90,
  ],
];

for (const [name, adapter, text, rule, until] of CASES) {
  Deno.test(`usage limits: ${name} parks ${adapter} until its reset`, () => {
    const match = firstRateLimit(scanLog(text, logParserFor(adapter)));
    assert.ok(match, "a rate limit");
    assert.equal(match.rule, rule);
    assert.ok(match.reset, "its reset time is read");
    assert.equal(parkUntil(match.reset, NOW, "UTC"), until);
  });
}

Deno.test("usage limits: a limit that names no reset gets none (the 300 s cooldown applies)", () => {
  for (
    const line of [
      "ERROR: You've hit your usage limit. Upgrade to Plus to continue using Codex, or try again later.",
      "HTTP/1.1 429 Too Many Requests",
    ]
  ) {
    const match = firstRateLimit(scanLog(line));
    assert.ok(match);
    assert.equal(match.reset, undefined, line);
  }
});

Deno.test("usage limits: a reset named in tool output or the model's words parks nothing", () => {
  const tool = j({
    type: "user",
    message: {
      content: [{
        type: "tool_result",
        tool_use_id: "t1",
        content: "You've hit your session limit · resets 3pm (UTC)",
      }],
    },
  });
  const prose = j({
    type: "assistant",
    message: {
      model: "claude-sonnet-5",
      content: [{ type: "text", text: "Claude AI usage limit reached|1764093600 is a fixture" }],
    },
  });
  assert.deepEqual(scanLog([tool, prose].join("\n"), logParserFor("claude")), []);
});

Deno.test("resolveReset(): a clock in a zone with daylight saving resolves in that zone", () => {
  // 2026-07-01 is summer time in New York (UTC-4).
  const july = Date.UTC(2026, 6, 1, 12, 0, 0);
  assert.equal(
    resolveReset(clockAt("3pm (America/New_York)")!, july, "UTC"),
    Date.UTC(2026, 6, 1, 19, 1, 0) / 1000,
    "3pm, printed to the minute, lasts until 15:00:59",
  );
  assert.equal(
    resolveReset(clockAt("3:00:30pm (America/New_York)")!, july, "UTC"),
    Date.UTC(2026, 6, 1, 19, 0, 30) / 1000,
    "a time with seconds is that second",
  );
  assert.equal(
    resolveReset(clockAt("Jan 2, 3pm (UTC)")!, Date.UTC(2026, 11, 30), "UTC"),
    Date.UTC(2027, 0, 2, 15, 1) / 1000,
    "a date without a year that has passed is next year's",
  );
  assert.equal(resolveReset(clockAt("3pm (Not/AZone)")!, july, "UTC"), undefined);
});

Deno.test("durationSeconds() and clockAt() read the providers' forms", () => {
  assert.equal(durationSeconds("6m0s"), 360);
  assert.equal(durationSeconds("1.5s"), 1.5);
  assert.equal(durationSeconds("20ms"), 0.02);
  assert.equal(durationSeconds("1h2m3s"), 3723);
  assert.equal(durationSeconds("soon"), undefined);
  assert.equal(clockAt("3"), undefined, "a bare number is no clock");
  assert.deepEqual(clockAt("15:00"), { kind: "clock", hour: 15, minute: 0 });
  assert.deepEqual(clockAt("12am (UTC)"), { kind: "clock", hour: 0, minute: 0, zone: "UTC" });
});
