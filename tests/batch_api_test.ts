/**
 * The batch clients (lib/batch/anthropic.ts, openai.ts) against stand-ins of the providers'
 * batch APIs on a free port, speaking their documented wire formats: every way a request can
 * come out — succeeded, errored, expired, canceled — and a batch read while it is in progress.
 */
import assert from "node:assert/strict";
import { batchApi } from "../lib/batch/api.ts";
import { HttpApiError } from "../lib/http/api_error.ts";
import type { BatchRequestSpec } from "../lib/batch/types.ts";
import { type FakeBatchAnswer, startFakeAnthropicBatches } from "./fakes/anthropic_batches_api.ts";
import { startFakeOpenAiBatches } from "./fakes/openai_batch_api.ts";

const REQUESTS: BatchRequestSpec[] = ["ok", "bad", "late", "stopped"].map((id) => ({
  customId: `req-${id}`,
  model: "claude-sonnet-5",
  system: "answer with a diff",
  user: `request ${id}`,
  maxTokens: 1000,
}));

function answer(r: { user: string }): FakeBatchAnswer {
  if (r.user.endsWith("ok")) {
    return { text: "```diff\n…\n```", inputTokens: 1500, outputTokens: 300 };
  }
  if (r.user.endsWith("bad")) return { error: "max_tokens: too large" };
  if (r.user.endsWith("late")) return "expired";
  return "canceled";
}

Deno.test("Anthropic Message Batches: submit, in progress, ended, and each result type", async () => {
  await using fake = startFakeAnthropicBatches({ answer, apiKey: "sk-ant" });
  fake.hold = true;
  const api = batchApi({
    provider: "anthropic",
    baseUrl: fake.url,
    headers: { "anthropic-version": "2023-06-01", "x-api-key": "sk-ant" },
  });
  const id = await api.submit(REQUESTS);
  assert.match(id, /^msgbatch_/);
  const running = await api.state(id);
  assert.deepEqual([running.ended, running.status, running.counts.processing], [
    false,
    "in_progress",
    4,
  ]);
  fake.hold = false;
  const ended = await api.state(id);
  assert.deepEqual([ended.ended, ended.status], [true, "ended"]);
  assert.deepEqual(ended.counts, {
    processing: 0,
    succeeded: 1,
    errored: 1,
    canceled: 1,
    expired: 1,
  });
  const items = await api.results(id, [...REQUESTS.map((r) => r.customId), "req-missing"]);
  assert.deepEqual(items, [
    {
      customId: "req-ok",
      outcome: "succeeded",
      text: "```diff\n…\n```",
      model: "claude-sonnet-5",
      usage: { inputTokens: 1500, cachedInputTokens: 0, outputTokens: 300 },
    },
    {
      customId: "req-bad",
      outcome: "errored",
      error: "invalid_request_error: max_tokens: too large",
    },
    { customId: "req-late", outcome: "expired" },
    { customId: "req-stopped", outcome: "canceled" },
    { customId: "req-missing", outcome: "errored", error: "the results name no result for it" },
  ]);
});

Deno.test("Anthropic Message Batches: a refused key is an HttpApiError with the provider's words", async () => {
  await using fake = startFakeAnthropicBatches({ answer, apiKey: "sk-ant" });
  const api = batchApi({
    provider: "anthropic",
    baseUrl: fake.url,
    headers: { "anthropic-version": "2023-06-01", "x-api-key": "wrong" },
  });
  await assert.rejects(
    () => api.submit(REQUESTS),
    (e) =>
      e instanceof HttpApiError && e.status === 401 &&
      /HTTP 401: invalid x-api-key/.test(e.message),
  );
});

Deno.test("OpenAI Batch API: file upload, batch, states, output and error files", async () => {
  await using fake = startFakeOpenAiBatches({ answer });
  fake.hold = true;
  const api = batchApi({
    provider: "openai",
    baseUrl: `${fake.url}/v1`,
    headers: { authorization: "Bearer sk" },
  });
  const id = await api.submit(REQUESTS.slice(0, 2));
  assert.match(id, /^batch_/);
  const input = [...fake.files.values()][0];
  assert.equal(input.purpose, "batch");
  const line = JSON.parse(input.text.split("\n")[0]);
  assert.deepEqual(Object.keys(line).sort(), ["body", "custom_id", "method", "url"]);
  assert.equal(line.url, "/v1/responses");
  assert.deepEqual((await api.state(id)).status, "validating");
  fake.hold = false;
  assert.deepEqual(await api.state(id), {
    ended: false,
    status: "in_progress",
    counts: { total: 2, completed: 0, failed: 0 },
  });
  assert.deepEqual(await api.state(id), {
    ended: false,
    status: "finalizing",
    counts: { total: 2, completed: 0, failed: 0 },
  });
  assert.deepEqual((await api.state(id)).status, "completed");
  assert.deepEqual(await api.results(id, ["req-ok", "req-bad"]), [
    {
      customId: "req-ok",
      outcome: "succeeded",
      text: "```diff\n…\n```",
      model: "claude-sonnet-5",
      usage: { inputTokens: 1500, cachedInputTokens: 0, outputTokens: 300 },
    },
    { customId: "req-bad", outcome: "errored", error: "HTTP 400: max_tokens: too large" },
  ]);
});

Deno.test("OpenAI Batch API: an expired batch's unfinished requests are expired", async () => {
  await using fake = startFakeOpenAiBatches({ answer });
  const api = batchApi({
    provider: "openai",
    baseUrl: `${fake.url}/v1`,
    headers: { authorization: "Bearer sk" },
  });
  const id = await api.submit([REQUESTS[0], REQUESTS[2]]);
  await api.state(id);
  const ended = await api.state(id);
  assert.deepEqual([ended.ended, ended.status], [true, "expired"]);
  const items = await api.results(id, ["req-ok", "req-late"]);
  assert.equal(items[0].outcome, "succeeded");
  assert.deepEqual(items[1], {
    customId: "req-late",
    outcome: "expired",
    error:
      "batch_expired: This request could not be executed before the completion window expired.",
  });
});

Deno.test("OpenAI Batch API: a batch that fails validation has ended, and each request is errored with its reason", async () => {
  await using fake = startFakeOpenAiBatches({
    answer,
    invalid: "The model `gpt-6-sol` does not exist or you do not have access to it.",
  });
  const api = batchApi({
    provider: "openai",
    baseUrl: `${fake.url}/v1`,
    headers: { authorization: "Bearer sk" },
  });
  const id = await api.submit(REQUESTS.slice(0, 2));
  assert.deepEqual(await api.state(id), {
    ended: true,
    status: "failed",
    counts: { total: 2, completed: 0, failed: 0 },
  });
  const why =
    "the batch failed: The model `gpt-6-sol` does not exist or you do not have access to it.";
  assert.deepEqual(await api.results(id, ["req-ok", "req-bad"]), [
    { customId: "req-ok", outcome: "errored", error: why },
    { customId: "req-bad", outcome: "errored", error: why },
  ]);
});

Deno.test("a batch canceled at the provider ends, and the requests it had not run are canceled (both providers)", async () => {
  await using anthropic = startFakeAnthropicBatches({ answer });
  await using openai = startFakeOpenAiBatches({ answer });
  const apis = {
    canceling: batchApi({
      provider: "anthropic",
      baseUrl: anthropic.url,
      headers: { "anthropic-version": "2023-06-01", "x-api-key": "sk-ant" },
    }),
    cancelling: batchApi({
      provider: "openai",
      baseUrl: `${openai.url}/v1`,
      headers: { authorization: "Bearer sk" },
    }),
  };
  for (const [word, api] of Object.entries(apis)) {
    anthropic.hold = openai.hold = true;
    const id = await api.submit(REQUESTS.slice(0, 2));
    await api.cancel(id);
    const canceling = await api.state(id);
    assert.deepEqual([canceling.status, canceling.ended], [word, false], word);
    anthropic.hold = openai.hold = false;
    const ended = await api.state(id);
    assert.equal(ended.ended, true, word);
    assert.deepEqual(
      (await api.results(id, ["req-ok", "req-bad"])).map((i) => i.outcome),
      ["canceled", "canceled"],
      word,
    );
  }
});

Deno.test("a batch status the provider refuses for now is asked again after its Retry-After", async () => {
  const seen: string[] = [];
  let refusals = 2;
  await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    seen.push(`${req.method} ${new URL(req.url).pathname}`);
    if (refusals-- > 0) {
      const error = { type: "error", error: { type: "overloaded_error", message: "Overloaded" } };
      return Response.json(error, { status: 529, headers: { "retry-after": "0" } });
    }
    return Response.json({
      id: "msgbatch_1",
      processing_status: "in_progress",
      request_counts: { processing: 1, succeeded: 0, errored: 0, canceled: 0, expired: 0 },
    });
  });
  const api = batchApi({
    provider: "anthropic",
    baseUrl: `http://127.0.0.1:${server.addr.port}`,
    headers: { "anthropic-version": "2023-06-01", "x-api-key": "sk-ant" },
  });
  assert.equal((await api.state("msgbatch_1")).status, "in_progress");
  assert.deepEqual(seen, Array(3).fill("GET /v1/messages/batches/msgbatch_1"));
});

/** A refusal of a submission, as each provider words it. */
const REFUSALS: {
  name: string;
  status: number;
  headers: Record<string, string>;
  error: Record<string, unknown>;
  resent: boolean;
}[] = [
  {
    name: "Anthropic overloaded (529)",
    status: 529,
    headers: {},
    error: { type: "overloaded_error", message: "Overloaded" },
    resent: true,
  },
  {
    name: "a rate limit naming its wait (429, retry-after)",
    status: 429,
    headers: { "retry-after": "0" },
    error: { type: "rate_limit_error", message: "Number of requests has exceeded your rate limit" },
    resent: true,
  },
  {
    name: "a spend limit, which names no wait (429)",
    status: 429,
    headers: {},
    error: {
      type: "rate_limit_error",
      message: "You have reached your specified API usage limits",
      details: { error_code: "enforced_spend_limit_reached" },
    },
    resent: false,
  },
  {
    name: "a server error that may have acted (500)",
    status: 500,
    headers: {},
    error: { type: "api_error", message: "Internal server error" },
    resent: false,
  },
];

Deno.test("a submission the provider turned down without creating anything is sent again after the wait; any other failure never twice", async () => {
  for (const r of REFUSALS) {
    for (const provider of ["anthropic", "openai"] as const) {
      const seen: string[] = [];
      let refused = false;
      await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
        const path = new URL(req.url).pathname;
        seen.push(`${req.method} ${path}`);
        if (req.method === "POST" && !refused && !path.endsWith("/files")) {
          refused = true;
          return Response.json({ type: "error", error: r.error }, {
            status: r.status,
            headers: r.headers,
          });
        }
        return Response.json(path.endsWith("/files") ? { id: "file-1" } : { id: "batch_1" });
      });
      const base = `http://127.0.0.1:${server.addr.port}`;
      const api = batchApi({
        provider,
        baseUrl: provider === "openai" ? `${base}/v1` : base,
        headers: {
          "anthropic-version": "2023-06-01",
          "x-api-key": "sk",
          authorization: "Bearer sk",
        },
      });
      const submit = provider === "openai" ? "POST /v1/batches" : "POST /v1/messages/batches";
      const what = `${provider}: ${r.name}`;
      if (r.resent) {
        assert.equal(await api.submit(REQUESTS), "batch_1", what);
        assert.deepEqual(seen.filter((s) => s === submit), [submit, submit], what);
      } else {
        await assert.rejects(
          () => api.submit(REQUESTS),
          (e) => e instanceof HttpApiError && e.status === r.status,
          what,
        );
        assert.deepEqual(seen.filter((s) => s === submit), [submit], `${what}: sent once`);
      }
    }
  }
});

Deno.test("a submission whose answer never came is not sent again", async () => {
  // A listener that reads the request and closes the connection without a word.
  using listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let connections = 0;
  const serving = (async () => {
    for await (const conn of listener) {
      connections++;
      await conn.read(new Uint8Array(64 * 1024)).catch(() => null);
      conn.close();
    }
  })().catch(() => {});
  const api = batchApi({
    provider: "anthropic",
    baseUrl: `http://127.0.0.1:${listener.addr.port}`,
    headers: { "anthropic-version": "2023-06-01", "x-api-key": "sk-ant" },
  });
  await assert.rejects(
    () => api.submit(REQUESTS),
    (e) => e instanceof HttpApiError && e.status === 0,
  );
  assert.equal(connections, 1);
  listener.close();
  await serving;
});

Deno.test("a results file longer than its requests could need is read only that far; the requests past the cut are errored saying why", async () => {
  const line = (id: string, text: string) =>
    JSON.stringify({
      custom_id: id,
      result: {
        type: "succeeded",
        message: { model: "claude-sonnet-5", content: [{ type: "text", text }], usage: {} },
      },
    }) + "\n";
  await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    if (!req.url.endsWith("/results")) {
      return Response.json({ id: "msgbatch_1", processing_status: "ended" });
    }
    // 9 MiB before the second request's line: more than 8 MiB a request is read for.
    return new Response(line("req-ok", "y".repeat(9 * 1024 * 1024)) + line("req-bad", "z"));
  });
  const api = batchApi({
    provider: "anthropic",
    baseUrl: `http://127.0.0.1:${server.addr.port}`,
    headers: { "anthropic-version": "2023-06-01", "x-api-key": "sk-ant" },
  });
  const items = await api.results("msgbatch_1", ["req-ok"]);
  assert.deepEqual(items, [{
    customId: "req-ok",
    outcome: "errored",
    error:
      "the results file is longer than the 8 MiB read for the batch's requests; its rest was not read",
  }]);
});
