/** What reset a line names, in every form, and what is not a reset at all. */
import assert from "node:assert/strict";
import { resetNamedIn } from "./reset_forms.ts";
import { parkUntil } from "./reset_time.ts";
import { firstRateLimit, scanLog } from "./rate_limit.ts";
import { logParserFor } from "./adapters/mod.ts";

/** The moment the lines are read: 2026-11-25 12:00:00 UTC. */
const NOW = Date.UTC(2026, 10, 25, 12, 0, 0);
const NOW_S = NOW / 1000;
/** An epoch four hours later: 16:00 UTC. */
const E = Date.UTC(2026, 10, 25, 16, 0, 0) / 1000;

/** `[line, the second it parks until (read at NOW, zone UTC)]`. */
const NAMED: [string, number][] = [
  [`Claude AI usage limit reached|${E}`, E],
  ["Codex: try again in 2 hours 13 minutes.", NOW_S + 7980],
  ["try again in 2 hours, 13 minutes and 20 seconds", NOW_S + 7980 + 20],
  ["Please try again in 2h13m. Visit https://platform.openai.com", NOW_S + 7980],
  ["Please try again in 6m0s.", NOW_S + 360],
  ["Please try again in 20ms.", NOW_S + 1],
  ["Please retry in 34.074824224s.", NOW_S + 35],
  ["Suggested retry after 8000s.", NOW_S + 8000],
  ["retry after 30 seconds", NOW_S + 30],
  ["resets in 4 days", NOW_S + 4 * 86_400],
  ["resets 3pm (UTC)", Date.UTC(2026, 10, 25, 15, 1) / 1000],
  ["Your limit will reset at 3:15:20pm (UTC)", Date.UTC(2026, 10, 25, 15, 15, 20) / 1000],
  ["retry-after: 30", NOW_S + 30],
  ["retry-after: Wed, 25 Nov 2026 12:10:00 GMT", NOW_S + 600],
  ["retry-after-ms: 1500", NOW_S + 2],
  ["anthropic-ratelimit-tokens-reset: 2026-11-25T12:01:30Z", NOW_S + 90],
  [`anthropic-ratelimit-unified-reset: ${E}`, E],
  ["x-ratelimit-reset-requests: 1m30s", NOW_S + 90],
  ['{"error":{"type":"usage_limit_reached","resets_in_seconds":8000}}', NOW_S + 8000],
  [`{"error":{"type":"usage_limit_reached","resets_at":${E}}}`, E],
  [
    '"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"34s"}]',
    NOW_S + 34,
  ],
  // Several forms on one line: the latest of them.
  ["Please try again in 20s. retry-after: 30", NOW_S + 30],
  ["x-ratelimit-reset-requests: 2h13m0s x-ratelimit-reset-tokens: 6m0s", NOW_S + 7980],
  ["Please retry in 34.5s.\\nSuggested retry after 34s.", NOW_S + 35],
  [`Claude AI usage limit reached|${E} · resets 3pm (UTC)`, E],
];

for (const [line, until] of NAMED) {
  Deno.test(`resetNamedIn(): "${line}" parks until ${until - NOW_S} s from now`, () => {
    const reset = resetNamedIn(line);
    assert.ok(reset, "a reset is named");
    assert.equal(parkUntil(reset, NOW, "UTC"), until);
  });
}

Deno.test("resetNamedIn(): words that name no reset name none", () => {
  for (
    const line of [
      "try again later",
      "resets 3",
      "Suggested retry after 34s.. Retrying after 40788ms...".replace(/.*\.\. /, ""),
      "reset the cache at noon",
      "Claude AI usage limit reached|12",
      "retry in 5 months",
      "x-ratelimit-reset-requests: soon",
      "retry-after: -5",
      "retry-after: Wednesday",
      "resetsAt is a field name",
      "",
    ]
  ) {
    assert.equal(resetNamedIn(line), undefined, line);
  }
});

Deno.test("a throttled line naming its reset parks until then, whatever rule matched it first", () => {
  // Claude Code's synthetic message carries "error":"rate_limit" (a signal without a reset) and
  // the API's own message with the epoch: the epoch wins, under the limit message's rule.
  const line = JSON.stringify({
    type: "assistant",
    message: {
      model: "<synthetic>",
      content: [{
        type: "text",
        text: `API Error: Request rejected (429) · Claude AI usage limit reached|${E}`,
      }],
    },
    error: "rate_limit",
  });
  const match = firstRateLimit(scanLog(line, logParserFor("claude")));
  assert.equal(match?.rule, "claude:usage_limit");
  assert.equal(parkUntil(match!.reset!, NOW, "UTC"), E);
});

Deno.test("Codex's limit with its typographic apostrophe is Codex's own, naming the reset", () => {
  const line = JSON.stringify({
    type: "error",
    message: "You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), " +
      "visit https://chatgpt.com/settings/usage to purchase more credits or try again at 3:42 PM.",
  });
  const match = firstRateLimit(scanLog(line, logParserFor("codex")));
  assert.equal(match?.rule, "codex:usage_limit");
  assert.equal(parkUntil(match!.reset!, NOW, "UTC"), Date.UTC(2026, 10, 25, 15, 43) / 1000);
});

Deno.test("a status line and the headers after it: the latest reset they name", () => {
  const log = "HTTP/1.1 429 Too Many Requests\nretry-after: 30\nx-ratelimit-reset-requests: 2m";
  const match = firstRateLimit(scanLog(log));
  assert.equal(parkUntil(match!.reset!, NOW, "UTC"), NOW_S + 120);
});
