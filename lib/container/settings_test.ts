import assert from "node:assert/strict";
import { endpointHostPort, isLoopback } from "./settings.ts";

Deno.test("endpointHostPort() reads the host and port a URL connects to (default ports by scheme)", () => {
  assert.deepEqual(endpointHostPort("https://api.anthropic.com"), {
    host: "api.anthropic.com",
    port: 443,
  });
  assert.deepEqual(endpointHostPort("http://127.0.0.1:8052/x"), { host: "127.0.0.1", port: 8052 });
  assert.deepEqual(endpointHostPort("http://[::1]:9/"), { host: "::1", port: 9 });
  assert.equal(endpointHostPort("ftp://x"), undefined);
  assert.equal(endpointHostPort("not a url"), undefined);
  assert.ok(isLoopback("127.4.5.6") && isLoopback("localhost") && !isLoopback("10.0.0.1"));
});
