import assert from "node:assert/strict";
import { hostPortText, parseHostPort } from "./host_port.ts";

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
    ["sub.localhost:80", { host: "sub.localhost", port: 80 }],
    ["[::1]:0", /port must be 1 to 65535/],
    ["host:80:90", /not host:port/],
    ["[::1]", /not host:port/],
    ["", /not host:port/],
  ];
  for (const [text, want] of table) {
    const got = parseHostPort(text);
    if (want instanceof RegExp) assert.match(String(got), want, text);
    else assert.deepEqual(got, want, text);
  }
});

Deno.test("hostPortText() writes what parseHostPort() reads, bracketing IPv6", () => {
  for (const text of ["api.example.com:443", "127.0.0.1:9", "[::1]:5000"]) {
    assert.equal(hostPortText(parseHostPort(text) as { host: string; port: number }), text);
  }
});
