import assert from "node:assert/strict";
import { largeBody } from "./large_body.ts";

Deno.test("largeBody(): small bodies joined, large ones streamed byte for byte in views of their parts", async () => {
  const small = [new Uint8Array(1000).fill(7), new Uint8Array(3).fill(8)];
  assert.deepEqual(largeBody(small), new Uint8Array([...small[0], ...small[1]]));
  const large = Uint8Array.from({ length: 1_000_003 }, (_, i) => (i * 31) & 0xff);
  for (const cuts of [[], [0], [5], [65536], [65536, 65537], [999_999]]) {
    const parts: Uint8Array<ArrayBuffer>[] = [];
    let from = 0;
    for (const cut of [...cuts, large.length]) {
      parts.push(large.slice(from, cut));
      from = cut;
    }
    const body = largeBody(parts);
    assert.ok(body instanceof ReadableStream);
    const received = new Uint8Array(await new Response(body).arrayBuffer());
    assert.deepEqual(received, large, `cut at ${cuts}`);
  }
});

Deno.test("a large receipt is served with its Content-Length, not chunked", async () => {
  const large = new Uint8Array(600_000).fill(65);
  await using server = Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen() {} },
    () => new Response(largeBody([large]), { headers: { "Content-Length": String(large.length) } }),
  );
  const res = await fetch(`http://127.0.0.1:${server.addr.port}/`);
  assert.equal(res.headers.get("content-length"), "600000");
  assert.equal(res.headers.get("transfer-encoding"), null);
  assert.equal((await res.arrayBuffer()).byteLength, 600_000);
});
