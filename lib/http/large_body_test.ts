import assert from "node:assert/strict";
import { largeBody } from "./large_body.ts";

Deno.test("largeBody(): small bodies as they are, large ones streamed byte for byte in views", async () => {
  const small = new Uint8Array(1000).fill(7);
  assert.equal(largeBody(small), small);
  const large = Uint8Array.from({ length: 1_000_003 }, (_, i) => (i * 31) & 0xff);
  const body = largeBody(large);
  assert.ok(body instanceof ReadableStream);
  const received = new Uint8Array(await new Response(body).arrayBuffer());
  assert.deepEqual(received, large);
});

Deno.test("a large receipt is served with its Content-Length, not chunked", async () => {
  const large = new Uint8Array(600_000).fill(65);
  await using server = Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen() {} },
    () => new Response(largeBody(large), { headers: { "Content-Length": String(large.length) } }),
  );
  const res = await fetch(`http://127.0.0.1:${server.addr.port}/`);
  assert.equal(res.headers.get("content-length"), "600000");
  assert.equal(res.headers.get("transfer-encoding"), null);
  assert.equal((await res.arrayBuffer()).byteLength, 600_000);
});
