import assert from "node:assert/strict";
import { endpointHostPort, isLoopback, parseHostPort } from "./settings.ts";

Deno.test("parseHostPort() takes host:port of names and loopback addresses, and says why not otherwise", () => {
  const table: [string, unknown][] = [
    ["api.example.com:443", { host: "api.example.com", port: 443 }],
    ["API.Example.com:8443", { host: "api.example.com", port: 8443 }],
    ["localhost:8080", { host: "localhost", port: 8080 }],
    ["127.0.0.1:9", { host: "127.0.0.1", port: 9 }],
    ["[::1]:5000", { host: "::1", port: 5000 }],
    ["api.example.com", /not host:port/],
    ["api.example.com:0", /port must be 1 to 65535/],
    ["api.example.com:70000", /port must be 1 to 65535/],
    ["10.1.2.3:80", /is an IP address/],
    ["[2001:db8::1]:443", /is an IP address/],
    ["bad_name:80", /not a host name/],
  ];
  for (const [text, want] of table) {
    const got = parseHostPort(text);
    if (want instanceof RegExp) assert.match(String(got), want, text);
    else assert.deepEqual(got, want, text);
  }
});

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
