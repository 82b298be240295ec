/** A worker's probes (`--health-port`), one row per situation. */
import assert from "node:assert/strict";
import { parseHealthAddress, WORKER_STUCK_AFTER_MS, workerProbe } from "./health.ts";

Deno.test("workerProbe(): alive while its loop turns, ready once registered and until it drains", () => {
  const now = 1_000_000;
  const rows: [
    string,
    string,
    { registered: boolean; draining: boolean; aliveAt: number },
    string,
  ][] = [
    [
      "/healthz",
      "a loop that turned",
      { registered: false, draining: false, aliveAt: now },
      "200 ok",
    ],
    ["/healthz", "a loop still for long", {
      registered: true,
      draining: false,
      aliveAt: now - WORKER_STUCK_AFTER_MS - 1,
    }, "503 stuck"],
    [
      "/readyz",
      "before registering",
      { registered: false, draining: false, aliveAt: now },
      "503 starting",
    ],
    ["/readyz", "registered", { registered: true, draining: false, aliveAt: now }, "200 ready"],
    ["/readyz", "draining", { registered: true, draining: true, aliveAt: now }, "503 draining"],
    [
      "/metrics",
      "anything else",
      { registered: true, draining: false, aliveAt: now },
      "404 not found",
    ],
  ];
  for (const [path, what, s, want] of rows) {
    const a = workerProbe(path, s, now);
    assert.equal(`${a.status} ${a.word}`, want, `${path}: ${what}`);
  }
});

Deno.test("parseHealthAddress() takes PORT (every interface) or HOST:PORT, nothing else", () => {
  assert.deepEqual(parseHealthAddress("8080"), { hostname: "0.0.0.0", port: 8080 });
  assert.deepEqual(parseHealthAddress("127.0.0.1:9"), { hostname: "127.0.0.1", port: 9 });
  assert.deepEqual(parseHealthAddress("[::1]:80"), { hostname: "::1", port: 80 });
  for (const bad of ["", "0", "65536", "x", "host:", ":80x", "80 80"]) {
    assert.equal(parseHealthAddress(bad), undefined, JSON.stringify(bad));
  }
});
