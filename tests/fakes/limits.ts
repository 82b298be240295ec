/**
 * The providers' usage- and rate-limit answers in their wire formats, for the stand-ins of
 * ./anthropic_api.ts, ./openai_responses_api.ts and ./gemini_api.ts (option `limit`): the status,
 * the headers and the JSON error body each API sends. Which of them a CLI prints is what
 * tests/_capture_limits.ts records from the real CLIs.
 */

/** One limit answer: status, headers and JSON body. */
export interface LimitAnswer {
  status: number;
  headers?: Record<string, string>;
  body: unknown;
}

/** The answer as a `Response`. */
export function limitResponse(limit: LimitAnswer): Response {
  return Response.json(limit.body, { status: limit.status, headers: limit.headers });
}

/** RFC 3339 without milliseconds, as Anthropic's `anthropic-ratelimit-*-reset` headers write it. */
const rfc3339 = (epochS: number) => new Date(epochS * 1000).toISOString().replace(/\.\d+Z$/, "Z");

/** Anthropic: a subscription's usage limit, its reset as epoch seconds in the message. */
export function anthropicUsageLimit(resetEpochS: number): LimitAnswer {
  return {
    status: 429,
    headers: { "request-id": "req_fake_limit" },
    body: {
      type: "error",
      error: { type: "rate_limit_error", message: `Claude AI usage limit reached|${resetEpochS}` },
    },
  };
}

/** Anthropic: the unified (subscription) limit, rejected, with its reset in the headers. */
export function anthropicUnifiedLimit(resetEpochS: number, claim = "five_hour"): LimitAnswer {
  return {
    status: 429,
    headers: {
      "anthropic-ratelimit-unified-status": "rejected",
      "anthropic-ratelimit-unified-reset": String(resetEpochS),
      "anthropic-ratelimit-unified-representative-claim": claim,
      "request-id": "req_fake_limit",
    },
    body: {
      type: "error",
      error: {
        type: "rate_limit_error",
        message: "This request would exceed your account's rate limit. Please try again later.",
      },
    },
  };
}

/** Anthropic: an API rate limit with `retry-after` and the `anthropic-ratelimit-*-reset` headers. */
export function anthropicRateLimit(retryAfterS: number, resetEpochS: number): LimitAnswer {
  return {
    status: 429,
    headers: {
      "retry-after": String(retryAfterS),
      "anthropic-ratelimit-requests-limit": "50",
      "anthropic-ratelimit-requests-remaining": "0",
      "anthropic-ratelimit-requests-reset": rfc3339(resetEpochS),
      "anthropic-ratelimit-tokens-reset": rfc3339(resetEpochS),
      "request-id": "req_fake_limit",
    },
    body: {
      type: "error",
      error: {
        type: "rate_limit_error",
        message: "This request would exceed the rate limit for your organization (1b3f) of 50 " +
          "requests per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits.",
      },
    },
  };
}

/** OpenAI (ChatGPT plans): `usage_limit_reached`, with `resets_at` and/or `resets_in_seconds`. */
export function openaiUsageLimit(reset: { atEpochS?: number; inSeconds?: number }): LimitAnswer {
  return {
    status: 429,
    body: {
      error: {
        type: "usage_limit_reached",
        message: "The usage limit has been reached",
        plan_type: "plus",
        ...(reset.atEpochS === undefined ? {} : { resets_at: reset.atEpochS }),
        ...(reset.inSeconds === undefined ? {} : { resets_in_seconds: reset.inSeconds }),
      },
    },
  };
}

/** OpenAI API: `rate_limit_exceeded`, "Please try again in <delay>." and `x-ratelimit-*` headers. */
export function openaiRateLimit(delay: string, resetRequests = delay): LimitAnswer {
  return {
    status: 429,
    headers: {
      "x-ratelimit-limit-requests": "10000",
      "x-ratelimit-remaining-requests": "0",
      "x-ratelimit-reset-requests": resetRequests,
      "x-ratelimit-reset-tokens": "6m0s",
    },
    body: {
      error: {
        message: "Rate limit reached for gpt-6-luna in organization org-fake on requests per day " +
          `(RPD): Limit 10000, Used 10000, Requested 1. Please try again in ${delay}. Visit ` +
          "https://platform.openai.com/account/rate-limits to learn more.",
        type: "requests",
        param: null,
        code: "rate_limit_exceeded",
      },
    },
  };
}

/**
 * Google: RESOURCE_EXHAUSTED with a QuotaFailure naming `quotaId`, and, with `retryDelayS`, a
 * RetryInfo `retryDelay` and "Please retry in <s>s." in the message (as Google writes it).
 */
export function googleQuota(quotaId: string, retryDelayS?: number): LimitAnswer {
  const metric = "generativelanguage.googleapis.com/generate_content_paid_tier_requests";
  const details: unknown[] = [
    {
      "@type": "type.googleapis.com/google.rpc.QuotaFailure",
      violations: [{
        quotaMetric: metric,
        quotaId,
        quotaDimensions: { location: "global", model: "gemini-3.5-flash" },
        quotaValue: "10",
      }],
    },
    {
      "@type": "type.googleapis.com/google.rpc.Help",
      links: [{
        description: "Learn more about Gemini API quotas",
        url: "https://ai.google.dev/gemini-api/docs/rate-limits",
      }],
    },
  ];
  if (retryDelayS !== undefined) {
    details.push({
      "@type": "type.googleapis.com/google.rpc.RetryInfo",
      retryDelay: `${Math.floor(retryDelayS)}s`,
    });
  }
  return {
    status: 429,
    body: {
      error: {
        code: 429,
        message: "You exceeded your current quota, please check your plan and billing details. " +
          "For more information on this error, head to: " +
          "https://ai.google.dev/gemini-api/docs/rate-limits. \n* Quota exceeded for metric: " +
          `${metric}, limit: 10, model: gemini-3.5-flash` +
          (retryDelayS === undefined ? "" : `\nPlease retry in ${retryDelayS}s.`),
        status: "RESOURCE_EXHAUSTED",
        details,
      },
    },
  };
}
