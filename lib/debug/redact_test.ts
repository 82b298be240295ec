import assert from "node:assert/strict";
import { MASK, redactObject, redactText } from "./redact.ts";

Deno.test("redactObject() masks secret keys but keeps variable names", () => {
  assert.deepEqual(
    redactObject({
      cli: "claude",
      auth: { tokens: [{ principal: "op", token_env: "OP_TOKEN" }] },
      mcp_servers: { x: { env: { API_KEY: "abc123456" } } },
      trackers: { tracker_a: { webhook: { secret_env: "S", enabled: true } } },
    }),
    {
      cli: "claude",
      auth: { tokens: [{ principal: "op", token_env: "OP_TOKEN" }] },
      mcp_servers: { x: { env: { API_KEY: MASK } } },
      trackers: { tracker_a: { webhook: { secret_env: "S", enabled: true } } },
    },
  );
});

Deno.test("redactText() masks provider keys, bearer tokens and known values", () => {
  const out = redactText(
    "key sk-ant-abcdefghijklmnop and Authorization: Bearer abc.def.ghi123 and hunter22secret",
    ["hunter22secret"],
  );
  assert.doesNotMatch(out, /sk-ant|abc\.def|hunter22/);
  assert.match(out, /Bearer \*\*\*redacted\*\*\*/);
});
